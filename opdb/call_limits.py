"""Per-API limits on the calls an adapter makes (`opdb/sources/torch/op_plugin_call_limits.jsonl`,
extracted from op-plugin's opapi adapters by `extract_call_limits.py`): the most tensors of a
list one call of the API takes, in place and out of place, and whether upstream sends a list
torch's `can_use_fast_route` rejects (and one with integral tensors, or a Scalar argument
outside the values it lets reach the API) to torch's own kernel. The limits hold on every SoC
(`socs: all`); what differs per chip is the API's dtypes (`opdb.soc_dtypes`).
`tensors_per_call(api)` gives the record or None.

The same file holds op-plugin's counter reservation of a random API (`philox_counter_offset`
rows: upstream draws the generator's pair with a constant, `philox_engine_inputs(1 << 28)`),
`philox_reservation(api)` gives it, or None where upstream computes the reservation.
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
    # upstream also sends a list with an integral or bool tensor to torch's kernel
    # (`has_integral_tensor(list, true)` in the same adapter)
    integral_slow: bool = False
    # the values of the op's Scalar argument upstream lets reach the API (the others go to
    # torch's kernel: ForeachNorm's `ord` 1 and 2, the only norms the A2/A3 kernel
    # computes), empty when upstream sends every value; and where upstream says so
    scalar_values: tuple[int, ...] = ()
    scalar_values_where: str = ""

    def per_call(self, inplace: bool) -> int:
        return self.inplace if inplace else self.out_of_place


def _records(kind: str):
    """The extract's rows of one `limit` kind (rows without one are tensors_per_call), with
    upstream's place as "repo path:line"."""
    if not PATH.is_file():
        return
    for line in PATH.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("limit", "tensors_per_call") == kind:
            src = r["source"]
            yield r, f"{src['repo']} {src['path']}:{src['line']}"


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, CallLimit]:
    return {r["api"]: CallLimit(r["api"], int(r["inplace"]), int(r["out_of_place"]),
                                bool(r["fast_route"]), where, bool(r.get("integral_slow", False)),
                                tuple(int(v) for v in r.get("scalar_values", ())),
                                f"{r['source']['repo']} {r['source']['path']}:{r['scalar_values_line']}"
                                if "scalar_values" in r else "")
            for r, where in _records("tensors_per_call")}


def tensors_per_call(api: str) -> CallLimit | None:
    """The list limit op-plugin keeps for `api`, or None when it keeps none."""
    return _rows().get(api)


@dataclass(frozen=True)
class PhiloxReservation:
    api: str
    offset: int  # counters the call reserves on the generator (philox_engine_inputs' argument)
    where: str  # repo path:line of upstream's draw


@functools.lru_cache(maxsize=1)
def _reservations() -> dict[str, PhiloxReservation]:
    return {r["api"]: PhiloxReservation(r["api"], int(r["offset"]), where)
            for r, where in _records("philox_counter_offset")}


def philox_reservation(api: str) -> PhiloxReservation | None:
    """The constant counter reservation op-plugin draws for `api`, or None."""
    return _reservations().get(api)
