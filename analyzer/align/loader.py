"""The one place `opscan align` reaches the model-file contract (build() -> model, inputs, step).

The tracer modules are moving (analyzer.entry -> analyzer.trace.entry); only this file
names them.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def entry_module():
    try:
        from analyzer.trace import entry  # type: ignore[attr-defined]
    except ImportError:
        from analyzer import entry
    return entry


def load_model(path, framework: str):
    """Import MODEL.py and call its build(); returns an Entry with .model, .inputs, .run_step()."""
    return entry_module().load_entry(path, framework)


def user_error(exc, path, what: str):
    """The user's exception as a one-line ModelError with their own frames."""
    return entry_module().user_error(exc, path, what)


def is_user_file(filename: str) -> bool:
    return entry_module().is_user_file(filename)
