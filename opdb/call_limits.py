"""Per-API limits on the calls an adapter makes (`opdb/sources/torch/op_plugin_call_limits.jsonl`,
extracted from op-plugin's opapi adapters by `extract_call_limits.py`): the most tensors of a
list one call of the API takes, in place and out of place, and whether upstream sends a list
torch's `can_use_fast_route` rejects to torch's own kernel. The limits hold on every SoC
(`socs: all`); what differs per chip is the API's dtypes (`opdb.soc_dtypes`).
`tensors_per_call(api)` gives the record or None.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_call_limits.jsonl"


@dataclass(frozen=True)
class CallLimit:
    api: str
    inplace: int  # tensors per call when the API writes its input list
    out_of_place: int
    fast_route: bool  # upstream guards the API with torch's can_use_fast_route
    where: str  # repo path:line of upstream's limit

    def per_call(self, inplace: bool) -> int:
        return self.inplace if inplace else self.out_of_place


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, CallLimit]:
    out: dict[str, CallLimit] = {}
    if not PATH.is_file():
        return out
    for line in PATH.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        src = r["source"]
        out[r["api"]] = CallLimit(r["api"], int(r["inplace"]), int(r["out_of_place"]),
                                  bool(r["fast_route"]),
                                  f"{src['repo']} {src['path']}:{src['line']}")
    return out


def tensors_per_call(api: str) -> CallLimit | None:
    """The list limit op-plugin keeps for `api`, or None when it keeps none."""
    return _rows().get(api)
