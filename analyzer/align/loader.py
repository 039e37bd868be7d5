"""The one place `opscan align` reaches the model-file contract (build() -> model, inputs, step).

Only this file names the tracer's entry module (analyzer.trace.entry).
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def entry_module():
    from analyzer.trace import entry

    return entry


def load_model(path, framework: str):
    """Import MODEL.py and call its build(); returns an Entry with .model, .inputs, .run_step()."""
    return entry_module().load_entry(path, framework)


def user_error(exc, path, what: str):
    """The user's exception as a one-line ModelError with their own frames."""
    return entry_module().user_error(exc, path, what)


def is_user_file(filename: str) -> bool:
    return entry_module().is_user_file(filename)
