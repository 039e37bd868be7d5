"""The one place `opscan align` reaches the model-file contract (build() -> model, inputs, step).

The tracer modules are moving (analyzer.entry -> analyzer.trace.entry); keep the import here.
"""
from __future__ import annotations


def load_model(path, framework: str):
    """Import MODEL.py and call its build(); returns an Entry with .model, .inputs, .run_step()."""
    try:
        from analyzer.trace.entry import load_entry  # type: ignore[import-not-found]
    except ImportError:
        from analyzer.entry import load_entry
    return load_entry(path, framework)
