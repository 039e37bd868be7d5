"""Statistics of one tensor, in msprobe's statistics-dump spelling.

A record is a plain dict so it serialises straight into dump.json:
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 4], "Max": .., "Min": ..,
     "Mean": .., "Norm": .., "NanCount": 0, "InfCount": 0, "requires_grad": true}
Statistics are computed in float32, or float64 for float64 tensors, whatever the tensor dtype.
Non-tensor arguments become {"type": "int", "value": 3} like msprobe writes them.
"""
from __future__ import annotations

import math

STAT_KEYS = ("Max", "Min", "Mean", "Norm")

# Paddle dtype spellings -> the torch spelling msprobe expects.
PADDLE_TO_TORCH_DTYPE = {
    "paddle.float32": "torch.float32", "paddle.float64": "torch.float64",
    "paddle.float16": "torch.float16", "paddle.bfloat16": "torch.bfloat16",
    "paddle.int64": "torch.int64", "paddle.int32": "torch.int32", "paddle.int16": "torch.int16",
    "paddle.int8": "torch.int8", "paddle.uint8": "torch.uint8", "paddle.bool": "torch.bool",
    "paddle.complex64": "torch.complex64", "paddle.complex128": "torch.complex128",
}


def scalar_record(value) -> dict:
    """msprobe's record of a non-tensor argument."""
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    if value is None:
        return {"type": "NoneType", "value": None}
    if isinstance(value, str):
        return {"type": "str", "value": value}
    return {"type": type(value).__name__, "value": None}


def finite_or_str(x: float, single: bool = False):
    """NaN/Inf stay floats: Python's json writes NaN/Infinity tokens, as msprobe's dumps do
    (a string "-inf" trips msprobe compare's formula-injection check). single: the value was
    computed in float32; keep its shortest float32 spelling (9 digits, not 17)."""
    x = float(x)
    if single and math.isfinite(x):
        return float("%.9g" % x)  # 9 significant digits round-trip every float32
    return x


def numel(rec: dict) -> int:
    n = 1
    for s in rec.get("shape") or ():
        n *= int(s)
    return n


def as_float(v) -> float:
    """A Max/Min/Mean/Norm value read back from JSON ("nan", "inf", None -> float)."""
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan
