"""Dtype names: one canonical spelling for CANN docs, torch, Paddle and phi C++.

Canonical names are torch's (`float32`, `float16`, `bfloat16`, `int64`, `bool`,
`complex64`, ...). CANN docs write `FLOAT`, `FLOAT32`, `FP16`, `BF16`, `DOUBLE`;
phi registrations write `float`, `phi::dtype::float16`, `int64_t`.
"""
from __future__ import annotations

_ALIASES = {
    "float": "float32", "float32": "float32", "fp32": "float32", "float_": "float32",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "phi::dtype::float16": "float16", "phi::float16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "phi::dtype::bfloat16": "bfloat16",
    "phi::bfloat16": "bfloat16",
    "double": "float64", "float64": "float64", "fp64": "float64",
    "int8": "int8", "int8_t": "int8", "int16": "int16", "int16_t": "int16",
    "int32": "int32", "int": "int32", "int32_t": "int32",
    "int64": "int64", "int64_t": "int64", "long": "int64",
    "uint8": "uint8", "uint8_t": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "bool": "bool",
    "complex32": "complex32", "complex64": "complex64", "complex128": "complex128",
    "phi::dtype::complex<float>": "complex64", "phi::dtype::complex<double>": "complex128",
    "complex<float>": "complex64", "complex<double>": "complex128",
    "hifloat8": "hifloat8", "hif8": "hifloat8",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "float_e5m2": "float8_e5m2",
    "float8_e8m0": "float8_e8m0fnu", "float32_e8m0": "float8_e8m0fnu",
    "float8_e8m0fnu": "float8_e8m0fnu",
    "float4_e2m1": "float4_e2m1fn_x2", "float4_e1m2": "float4_e1m2",
    "float6_e3m2": "float6_e3m2", "float6_e2m3": "float6_e2m3", "float8": "float8",
    "int4": "int4", "string": "string",
}

FLOATING = ("float16", "bfloat16", "float32", "float64")

# Cast suggestion when a dtype is not covered: try these, in order.
CAST_PREFERENCE = {
    "float64": ("float32",),
    "bfloat16": ("float16", "float32"),
    "float16": ("float32",),
    "int64": ("int32",),
    "int16": ("int32",),
    "int8": ("int32",),
    "uint8": ("int32",),
    "bool": ("int32", "uint8"),
    "complex128": ("complex64",),
}


def normalize_dtype(name: str) -> str:
    """Canonical dtype name; unknown spellings are lower-cased and kept."""
    text = str(name).strip()
    for prefix in ("torch.", "paddle.", "DT_", "ACL_"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    low = text.lower().replace(" ", "")
    return _ALIASES.get(low, low)


def known_dtype(name: str) -> str:
    """The canonical name of a dtype the user typed; OpscanError naming the accepted
    spellings when it is not a dtype."""
    canon = normalize_dtype(name)
    if canon not in set(_ALIASES.values()):
        from opdb.errors import UnknownName

        raise UnknownName(f"unknown dtype {name!r}",
                          hint="use a dtype name such as float32, float16, bfloat16, float64, int64, bool")
    return canon


def normalize_dtypes(names) -> tuple[str, ...]:
    """Canonical, de-duplicated, sorted."""
    return tuple(sorted({normalize_dtype(n) for n in names if str(n).strip()}))
