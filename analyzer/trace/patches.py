"""Attributes a tracer sets on framework classes and modules for the length of a trace,
put back afterwards in reverse order; an attribute the owner did not define itself is
deleted again, so the inherited one shows through as before."""
from __future__ import annotations

import contextlib
from typing import Any


class AttrPatches:
    """`put(owner, attr, value)` now, `restore()` later (idempotent)."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any, bool]] = []

    def put(self, owner: Any, attr: str, value: Any) -> None:
        own = vars(owner)
        self._saved.append((owner, attr, own.get(attr), attr in own))
        setattr(owner, attr, value)

    def restore(self) -> None:
        for owner, attr, old, had in reversed(self._saved):
            if had:
                setattr(owner, attr, old)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(owner, attr)
        self._saved.clear()
