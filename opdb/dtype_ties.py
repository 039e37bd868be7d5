"""Which aclnn parameters must have the dtype of another one (the docs' `与“varRef”参数一致`
in the 数据类型 column), from `opdb/sources/cann/aclnn_dtype_ties.jsonl`
(`extract_dtype_ties.py`). `dtype_groups(api)` gives the groups of parameter names that
must share one dtype, each with the doc line that ties it.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_dtype_ties.jsonl"


@functools.lru_cache(maxsize=1)
def _ties() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if not PATH.is_file():
        return out
    for line in PATH.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            out.setdefault(rec["api"], []).append(rec)
    return out


def dtype_groups(api: str) -> list[tuple[frozenset[str], str]]:
    """[(parameter names sharing one dtype, `path:line` of the first tie)] of `api`."""
    groups: dict[str, set[str]] = {}
    where: dict[str, str] = {}
    for rec in _ties().get(api, []):
        root = rec["same_as"]
        groups.setdefault(root, {root}).add(rec["param"])
        src = rec["source"]
        where.setdefault(root, f"{src['repo']} {src['path']}:{src['line']}")
    return [(frozenset(g), where[r]) for r, g in sorted(groups.items())]
