"""Per-SoC dtype restrictions of aclnn APIs (`opdb/sources/cann/aclnn_soc_dtypes.jsonl`,
extracted from the ops repositories' docs by `extract_soc_dtypes.py`): the docs list one
dtype union per parameter and then restrict it per product ("Atlas 训练系列产品：数据类型支持
FLOAT、FLOAT16", "不支持BFLOAT16数据类型"). `soc_dtypes(api, soc, dtypes)` applies them.

Where a doc is silent on a parameter on a chip, the API's own C++ check is taken
(`aclnn_op_api_dtypes.jsonl`, `extract_op_api_dtypes.py`: a dtype list chosen by the chip,
aclnnMaxPool3dWithArgmax's INT32-only `indices` off regbase).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from opdb.dtypes import normalize_dtype
from opdb.soc import product_socs, resolve_soc

PATH = Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_soc_dtypes.jsonl"
CODE_PATH = PATH.with_name("aclnn_op_api_dtypes.jsonl")
UNDOC_PATH = PATH.with_name("aclnn_op_api_undocumented_dtypes.jsonl")


@dataclass(frozen=True)
class SocRestriction:
    api: str
    socs: frozenset[str]
    allow: tuple[str, ...] | None
    deny: tuple[str, ...]
    param: str | None
    where: str  # repo path:line


@functools.lru_cache(maxsize=1)
def _load() -> dict[str, tuple[SocRestriction, ...]]:
    out: dict[str, list[SocRestriction]] = {}
    if not PATH.is_file():
        return {}
    for line in PATH.read_text().splitlines():
        r = json.loads(line)
        socs = frozenset(s for p in r["products"] for s in product_socs(p))
        allow = tuple(normalize_dtype(d) for d in r["allow"]) if r.get("allow") else None
        deny = tuple(normalize_dtype(d) for d in r.get("deny") or ())
        src = r["source"]
        out.setdefault(r["api"], []).append(SocRestriction(
            r["api"], socs, allow, deny, r.get("param"),
            f"{src['repo']} {src['path']}:{src['line']}"))
    # the op_api's own checks, on the chips where no doc line names the parameter
    for line in (CODE_PATH.read_text().splitlines() if CODE_PATH.is_file() else ()):
        r = json.loads(line)
        named = {s for d in out.get(r["api"], ()) if d.param == r["param"] for s in d.socs}
        socs = frozenset(r["socs"]) - named
        if socs:
            src = r["source"]
            out.setdefault(r["api"], []).append(SocRestriction(
                r["api"], socs, tuple(normalize_dtype(d) for d in r["allow"]), (), r["param"],
                f"{src['repo']} {src['path']}:{src['line']}"))
    return {k: tuple(v) for k, v in out.items()}


def restrictions(api: str, soc: str | None, param: str | None = None
                 ) -> tuple[SocRestriction, ...]:
    """The restrictions of `api` that apply on `soc` (to `param`, or to every param)."""
    chip = resolve_soc(soc).id
    return tuple(r for r in _load().get(api, ()) if chip in r.socs
                 and (r.param is None or param is None or r.param == param))


def soc_dtypes(api: str, soc: str | None, dtypes, param: str | None = None
               ) -> tuple[list[str], list[str]]:
    """(the `dtypes` the API supports on `soc`, the doc lines that cut them)."""
    keep = list(dtypes)
    why = []
    for r in restrictions(api, soc, param):
        before = list(keep)
        if r.allow is not None:
            keep = [d for d in keep if d in r.allow]
        keep = [d for d in keep if d not in r.deny]
        if keep != before:
            why.append(r.where)
    return keep, why


@functools.lru_cache(maxsize=1)
def _undocumented() -> dict[tuple[str, str], tuple[tuple[str, ...], str]]:
    out = {}
    for line in (UNDOC_PATH.read_text().splitlines() if UNDOC_PATH.is_file() else ()):
        r = json.loads(line)
        src = r["source"]
        out[(r["api"], r["param"])] = (tuple(normalize_dtype(d) for d in r["allow"]),
                                       f"{src['repo']} {src['path']}:{src['line']}")
    return out


def undocumented_dtypes(api: str, param: str) -> tuple[tuple[str, ...], str] | None:
    """(dtypes, C++ line) of a parameter the docs give no dtypes for (an experimental API
    without a doc table), from the one list its op_api `.cpp` checks on every chip
    (`aclnn_op_api_undocumented_dtypes.jsonl`, `extract_op_api_dtypes.py`); None when
    the C++ has none either."""
    return _undocumented().get((api, param))
