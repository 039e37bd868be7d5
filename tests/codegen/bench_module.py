"""Load a script of benchmarks/ as a module for a test (the scripts import their siblings
by bare name, so benchmarks/ is on sys.path while the module runs its top level)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str):
    """benchmarks/<name>.py as a fresh module."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))
