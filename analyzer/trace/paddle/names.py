"""Paddle name facts: which phi kernel an API / program op dispatches to, and its aliases.

Three names meet in a Paddle port:
- the API / op name the user and PIR programs see (`adam_`, `batch_norm_`, `pd_op.mean`);
- the phi kernel name the kernel factory is asked for (`adam`, `batch_norm`, `mean`), which
  is what PaddleCustomDevice registers (`PD_REGISTER_PLUGIN_KERNEL(adam, npu, ...)`);
- the fluid op name (`softmax_with_cross_entropy`, `matmul_v2`), which is what
  `CUSTOM_DEVICE_BLACK_LIST` is compared against (the kernel factory checks
  `is_in_custom_black_list(TransToFluidOpName(kernel_name))`).

Truth for the installed Paddle is its own kernel registry
(`paddle.base.core._get_registered_phi_kernels("function")`) and its fluid->phi map
(`core._get_phi_kernel_name`). The YAML-derived tables in `analyzer.trace.paddle.names_data`
(op -> kernel func where they differ, phi -> fluid names) fill what the wheel does not
expose; every YAML answer is checked against the installed registry before use.
Regenerate the tables with `python3 -m analyzer.trace.paddle.names <paddle yaml dir>`.
"""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

from analyzer.trace.paddle import names_data as _data

# `pd_op.*` program ops that are no kernel call in a dygraph step: feeds, fetches and
# int-array materialisation (dygraph passes int arrays as attributes). Graph plumbing
# (`builtin.combine`, `builtin.slice`, `builtin.split`, `builtin.parameter`, ...) is in
# another dialect and skipped as such; `pd_op.slice` and `pd_op.split` are kernels.
NON_KERNEL_PROGRAM_OPS = frozenset({
    "data", "feed", "fetch", "full_int_array", "shadow_feed", "shadow_output",
})


@functools.lru_cache(maxsize=1)
def kernel_registry() -> dict[str, tuple[str, ...]] | None:
    """The installed Paddle's kernel registry: phi kernel name -> its kernel keys
    (`(CPU, Undefined(AnyLayout), float32)`), function and structure kernels alike (None
    if Paddle is missing). Read once per process (10-20 ms): the tracer's kernel names and
    the blacklist's dtype checks share it."""
    try:
        from paddle.base import core
    except ImportError:
        return None
    return {k: tuple(v) for k, v in core._get_registered_phi_kernels("all").items()}


@functools.lru_cache(maxsize=1)
def registered_kernels() -> frozenset[str]:
    """phi kernel names registered in the installed Paddle (empty if Paddle is missing)."""
    return frozenset(kernel_registry() or ())


def _fluid_to_phi(name: str) -> str:
    try:
        from paddle.base import core
        return core._get_phi_kernel_name(name)
    except Exception:  # noqa: BLE001 - unknown names raise inside Paddle
        return ""


@functools.lru_cache(maxsize=4096)
def kernel_for(op: str) -> str:
    """The phi kernel name the kernel factory is asked for when `op` runs.

    `adam_` -> `adam`, `batch_norm_` -> `batch_norm`, `conv2d_grad` -> `conv2d_grad`,
    `softmax_with_cross_entropy` (fluid) -> `cross_entropy_with_softmax`. Unknown
    names come back unchanged.
    """
    op = op.split(".", 1)[1] if op.startswith(("pd_op.", "pd_kernel.")) else op
    reg = registered_kernels()
    mapped = _data.OP_KERNEL.get(op)
    if mapped and (not reg or mapped in reg):
        return mapped
    if op in reg:
        return op
    if op.endswith("_") and not op.endswith("__") and op[:-1] in reg:
        return op[:-1]
    phi = _fluid_to_phi(op)
    if phi and phi in reg:
        return phi
    return mapped or op


def fluid_names(kernel: str) -> tuple[str, ...]:
    """Fluid op names of a phi kernel (`cross_entropy_with_softmax` ->
    `softmax_with_cross_entropy`), the names CUSTOM_DEVICE_BLACK_LIST uses."""
    return tuple(_data.FLUID_NAMES.get(kernel, ()))


def aliases_for(kernel: str, *names: str) -> list[str]:
    """Other names of one call: the API/op names given (minus the kernel name itself)
    and the kernel's fluid op names, sorted. A new list each call (callers own it)."""
    return list(_aliases(kernel, names))


@functools.lru_cache(maxsize=4096)
def _aliases(kernel: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """`aliases_for`, once per (kernel, names): a traced step asks for every launch's
    aliases (~700 a MobileNetV3 step) among a few dozen distinct kernels."""
    out = {n for n in names if n and n != kernel}
    out.update(fluid_names(kernel))
    return tuple(sorted(out))


def is_registered(kernel: str) -> bool:
    reg = registered_kernels()
    return not reg or kernel in reg


# ---------------------------------------------------------------- regeneration

_YAML_OPS = ("ops.yaml", "backward.yaml", "fused_ops.yaml", "inconsistent_dygraph_ops.yaml",
             "inconsistent_static_ops.yaml", "inconsistent_dygraph_backward.yaml")
_NAME_PAIR = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(?:\(\s*([A-Za-z0-9_]+)\s*\))?\s*$")


def tables_from_yaml(yaml_dir: str | Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(op -> first kernel func where it differs, phi name -> fluid names) from Paddle's
    `paddle/phi/ops/yaml` files (ops, backward, fused, inconsistent/*, op_compat)."""
    import yaml

    from opdb.errors import ParseError

    yaml_dir = Path(yaml_dir)
    op_kernel: dict[str, str] = {}
    for fname in _YAML_OPS:
        path = yaml_dir / fname
        if not path.is_file():
            continue
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            name = entry.get("op") or entry.get("backward_op")
            kernel = entry.get("kernel")
            if not name or not isinstance(kernel, dict) or not kernel.get("func"):
                continue
            first = re.split(r"[\s{,]", str(kernel["func"]).strip())[0]
            if first and first != name:
                op_kernel.setdefault(name, first)
    compat = yaml_dir / "op_compat.yaml"
    if not compat.is_file():
        raise ParseError(compat, None, "op_compat.yaml not found",
                         "pass the directory holding Paddle's paddle/phi/ops/yaml files")
    fluid: dict[str, set[str]] = {}
    for entry in yaml.safe_load(compat.read_text(encoding="utf-8")) or []:
        names = [entry.get("op", "")]
        back = entry.get("backward")
        if back:
            names += [b for b in str(back).split(",")]
        for text in names:
            m = _NAME_PAIR.match(str(text))
            if not m:
                raise ParseError(compat, None, f"cannot read op name {text!r}")
            phi, old = m.group(1), m.group(2)
            if old and old != phi:
                fluid.setdefault(phi, set()).add(old)
    return dict(sorted(op_kernel.items())), {k: sorted(v) for k, v in sorted(fluid.items())}


def render_data_module(op_kernel: dict[str, str], fluid: dict[str, list[str]],
                       provenance: str) -> str:
    lines = ['"""Generated by `python3 -m analyzer.trace.paddle.names`: do not edit.', "",
             f"Source: {provenance}", '"""', "", "OP_KERNEL = {"]
    lines += [f"    {k!r}: {v!r}," for k, v in op_kernel.items()]
    lines += ["}", "", "FLUID_NAMES = {"]
    lines += [f"    {k!r}: {tuple(v)!r}," for k, v in fluid.items()]
    lines += ["}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from opdb.fsutil import atomic_write_text

    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1:
        print("usage: python3 -m analyzer.trace.paddle.names <paddle/phi/ops/yaml dir>", file=sys.stderr)
        return 2
    op_kernel, fluid = tables_from_yaml(argv[0])
    prov = ("Paddle paddle/phi/ops/yaml at commit 0ab6998c22c7f4ea942b2437353f34c257e868d6 "
            "(see opdb/sources/paddle/README.md)")
    text = render_data_module(op_kernel, fluid, prov)
    dest = Path(__file__).with_name("names_data.py")
    atomic_write_text(dest, text)
    print(f"{dest}: {len(op_kernel)} op->kernel, {len(fluid)} fluid names")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


_DTYPE_NAMES: dict = {}


def dtype_name(dtype) -> str:
    """opdb's spelling ("float32") of a Paddle dtype, dygraph or PIR, computed once per dtype:
    keyed by the enum's type and value (`str()` and hashing of some Paddle enums run Python
    code, ~10 us each; `.value` does not). A traced step asks for ~2,700 tensors' dtypes:
    the known case is one dict lookup."""
    try:
        return _DTYPE_NAMES[(type(dtype), dtype.value)]
    except (KeyError, AttributeError, TypeError):
        return _dtype_name_first(dtype)


def _dtype_name_first(dtype) -> str:
    from opdb.dtypes import normalize_dtype

    value = getattr(dtype, "value", None)
    if not isinstance(value, int):
        return normalize_dtype(str(dtype))
    name = _DTYPE_NAMES[(type(dtype), value)] = normalize_dtype(str(dtype))
    return name
