"""Which aclnn APIs write one of their read-only (`const aclTensor*`) inputs in place
(aclnnIndexAdd runs an in-place l0op on its contiguous `self`, then copies into `out`),
from `opdb/sources/cann/aclnn_input_updates.jsonl` (`extract_input_updates.py`).
`updated_inputs(api)` gives {parameter: `repo path:line` of the in-place call}.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_input_updates.jsonl"


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    if not PATH.is_file():
        return out
    for line in PATH.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            src = rec["source"]
            out.setdefault(rec["api"], {})[rec["param"]] = \
                f"{src['repo']} {src['path']}:{src['line']}"
    return out


def updated_inputs(api: str) -> dict[str, str]:
    """{input parameter the API writes in place: where its source does it} of `api`."""
    return dict(_rows().get(api, {}))
