"""The shipped op-plugin aclnn map (`opdb/sources/torch/op_plugin_aclnn_map.jsonl`,
op-plugin 517f2e7d), parsed once per process for the modules that read its records at
render time (`opdb.kernel_checks`, `opdb.op_plugin_routes`). `records()` is empty when the
file is absent.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_aclnn_map.jsonl"


@functools.lru_cache(maxsize=1)
def records() -> tuple[dict, ...]:
    """Every record of the map, in file order."""
    if not PATH.is_file():
        return ()
    return tuple(json.loads(line) for line in PATH.read_text().splitlines() if line.strip())
