"""Which aclnn parameters must have the dtype of another one (the docs' `与“varRef”参数一致`
in the 数据类型 column), from `opdb/sources/cann/aclnn_dtype_ties.jsonl`
(`extract_dtype_ties.py`). `dtype_groups(api)` gives the groups of parameter names that
must share one dtype, each with the doc line that ties it. `checked_ties(api, soc, order)`
gives the ties the API's op_api C++ checks (`OP_CHECK_DTYPE_NOT_MATCH`) on a chip, from
`aclnn_op_api_dtype_ties.jsonl` (`extract_op_api_dtypes.py`).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_dtype_ties.jsonl"


@functools.lru_cache(maxsize=2)
def _rows_by_api(path: Path) -> dict[str, list[dict]]:
    """The rows of one ties file (JSON lines), by aclnn API; {} when it is absent."""
    out: dict[str, list[dict]] = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            out.setdefault(rec["api"], []).append(rec)
    return out


def dtype_groups(api: str) -> list[tuple[frozenset[str], str]]:
    """[(parameter names sharing one dtype, `path:line` of the first tie)] of `api`."""
    groups: dict[str, set[str]] = {}
    where: dict[str, str] = {}
    for rec in _rows_by_api(PATH).get(api, []):
        root = rec["same_as"]
        groups.setdefault(root, {root}).add(rec["param"])
        src = rec["source"]
        where.setdefault(root, f"{src['repo']} {src['path']}:{src['line']}")
    return [(frozenset(g), where[r]) for r, g in sorted(groups.items())]


OP_API_PATH = PATH.parent / "aclnn_op_api_dtype_ties.jsonl"


def checked_ties(api: str, soc: str, order: list[str]) -> dict[str, tuple[str, str]]:
    """{parameter: (the parameter whose dtype it must have, `path:line` of the check)} the
    API's op_api C++ enforces on `soc` (OP_CHECK_DTYPE_NOT_MATCH, `aclnn_op_api_dtype_ties.jsonl`
    from extract_op_api_dtypes.py). Parameters tied to each other, directly or through
    others, form one group; its root is the member no check ties to another (the first in
    `order`, the API's parameter order, when several are), and every other member maps to
    it: aclnnGroupNormBackward on ascend910b ties `mean` to `gradOut` and `gamma` to
    `mean`, so both map to `gradOut`."""
    recs = [r for r in _rows_by_api(OP_API_PATH).get(api, []) if soc in r["socs"]]
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x
    for r in recs:
        parent[find(r["param"])] = find(r["same_as"])
    tied = {r["param"] for r in recs}
    rank = {n: i for i, n in enumerate(order)}
    groups: dict[str, list[str]] = {}
    for n in sorted(parent, key=lambda n: (rank.get(n, len(rank)), n)):
        groups.setdefault(find(n), []).append(n)
    where = {}
    for r in recs:
        src = r["source"]
        where.setdefault(r["param"], f"{src['repo']} {src['path']}:{src['line']}")
    out = {}
    for members in groups.values():
        free = [n for n in members if n not in tied]
        root = (free or members)[0]
        for n in members:
            if n != root:
                out[n] = (root, where.get(n, ""))
    return out
