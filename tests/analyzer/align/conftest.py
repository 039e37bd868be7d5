"""Shared dumps for the align tests: each side-A dump is made once per test session."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MODELS = Path(__file__).resolve().parent / "models"
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def align_dumps(tmp_path_factory):
    """dump(name, model, framework, **options) -> Path, cached by name for the session."""
    from analyzer.align.runner import DumpOptions, run_dump

    root = tmp_path_factory.mktemp("align")
    cache: dict = {}

    def dump(name: str, model, framework: str, **kw) -> Path:
        if name not in cache:
            out = root / name
            run_dump(DumpOptions(model=str(model), framework=framework, output=str(out), **kw))
            cache[name] = out
        return cache[name]
    return dump
