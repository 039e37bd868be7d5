"""The aclnn API op-plugin runs a torch op on when its adapter keeps an older API only as
a fallback (`compat` of `opdb/sources/torch/op_plugin_aclnn_map.jsonl`, op-plugin
517f2e7d): `DO_COMPATIBILITY(aclnnUpsampleBilinear2dBackwardV2,
op_api::upsample_bilinear2d_backward_old(...))`, where the fallback is a helper of the
same file (the record's `helpers`) that runs aclnnUpsampleBilinear2dBackward. The guarded
API is the op's main route; the older one runs only on a CANN without it.
`main_route(op)` gives (API, evidence) or None. Facts only; nothing keyed on a name.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_aclnn_map.jsonl"


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    if not PATH.is_file():
        return out
    for line in PATH.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        helpers = set(r.get("helpers") or ())
        for c in r.get("compat") or ():
            fb = (c.get("fallback") or "").removeprefix("op_api::")
            apis = c.get("aclnn") or []
            if c.get("macro") == "DO_COMPATIBILITY" and fb in helpers and len(apis) == 1:
                where = (r.get("op_api_source_lines") or r.get("source_paths") or [""])[0]
                out.setdefault(r["op"], (apis[0], f"op-plugin {where}: DO_COMPATIBILITY("
                                                  f"{apis[0]}, {c['fallback']}(...))"))
                break
    return out


def main_route(op: str) -> tuple[str, str] | None:
    """(aclnn API, evidence) of op-plugin's main route for `op` (`aten::name.overload`),
    when its adapter keeps another route only as that API's fallback; else None. The
    `compat` list is per adapter file, so for a file of several overloads
    (ForeachMaximumKernelNpuOpApi.cpp) it can name another overload's API: a caller takes
    it only as one of the versions of the API it renders."""
    return _rows().get(op)
