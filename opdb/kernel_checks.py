"""aclnn APIs op-plugin does not assume present: its adapters call
`check_aclnn_kernel_available("aclnnXxx")` before taking them (the `compat` entries of
`opdb/sources/torch/op_plugin_aclnn_map.jsonl`, extracted from op-plugin 517f2e7d's opapi
sources; BucketizeKernelNpuOpApi.cpp, AddKernelNpuOpApi.cpp's aclnnAddV3).
`checked_at_run_time(api)` gives the ops whose adapters check it (empty when none do).
"""
from __future__ import annotations

import functools

from opdb.op_plugin_map import records


@functools.lru_cache(maxsize=1)
def _checked() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for r in records():
        for c in r.get("compat") or ():
            if c.get("macro") == "check_aclnn_kernel_available":
                for api in c.get("aclnn") or ():
                    out.setdefault(api, []).append(r["op"])
    return {k: tuple(sorted(set(v))) for k, v in out.items()}


def checked_at_run_time(api: str) -> tuple[str, ...]:
    """The ops whose op-plugin adapters check `api`'s kernel at run time before calling it."""
    return _checked().get(api, ())
