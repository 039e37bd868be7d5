"""What the aclnn docs say a number/bool/dtype parameter takes when the caller has no value,
from `opdb/sources/cann/aclnn_doc_values.jsonl` (`extract_doc_values.py`): the value that
stands for "not given" (`unset`: aclnnUniqueConsecutive's `dim` 1000, "传入1000表示不指定
维度"), the stated default (`default`: "默认为0") and the only value accepted now (`only`:
"仅支持传入false"). `doc_value(api, param, kinds)` gives the first of `kinds` the doc
states, with where it says so.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_doc_values.jsonl"
KINDS = ("unset", "default", "only")


@dataclass(frozen=True)
class DocValue:
    """One doc statement: `value` is a C literal of the parameter's type (`1000`, `0.0`,
    `false`, `ACL_DT_UNDEFINED`)."""

    api: str
    param: str
    value: str
    kind: str
    phrase: str
    where: str  # `repo path:line`

    def cite(self) -> str:
        """How a comment names it: `the doc's unset value (hicann/ops-nn index/...md:110)`."""
        return f"the aclnn doc's {self.kind} value ({self.where})"


@functools.lru_cache(maxsize=1)
def _rows() -> dict[tuple[str, str], dict[str, DocValue]]:
    out: dict[tuple[str, str], dict[str, DocValue]] = {}
    if not PATH.is_file():
        return out
    for line in PATH.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            src = rec["source"]
            out.setdefault((rec["api"], rec["param"]), {})[rec["kind"]] = DocValue(
                rec["api"], rec["param"], rec["value"], rec["kind"], rec["phrase"],
                f"{src['repo']} {src['path']}:{src['line']}")
    return out


def doc_value(api: str, param: str, kinds: tuple[str, ...] = KINDS) -> DocValue | None:
    """The first of `kinds` the doc of `api` states for `param`, or None."""
    stated = _rows().get((api, param), {})
    for kind in kinds:
        if kind in stated:
            return stated[kind]
    return None
