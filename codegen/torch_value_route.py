"""Value-limit CPU routes of a torch adapter: op-plugin sends some calls to torch's CPU
kernel when argument values exceed what the aclnn API handles
(opdb.op_plugin_routes.value_routes, extracted from the adapters' own
`if (!checkXUseFast(...)) { return x_slow(...); }` tests:
UpsampleBilinear2dAAKernelNpuOpApi.cpp runs `at::_upsample_bilinear2d_aa` on a float32 CPU
copy of `self` when the real scale exceeds 50 and copies the result back in `self`'s
dtype; MaskedSoftMaxKernelNpuOpApi.cpp runs `at::_masked_softmax` on the CPU unless `self`
is 4-D, `dim` the last and `mask_type` 2). The adapter gets the same route, after its
output is allocated (the condition may read the output's sizes) and before the aclnn call.

A route is rendered only for the API the adapter calls, for a functional or `.out`
member returning one tensor, and only when every name its condition and CPU call read
is one of the op's arguments or the output (else nothing: a name opgen's adapter lacks).
"""
from __future__ import annotations

import re
from dataclasses import replace

# names a route's C++ may use besides the op's arguments: C++ and the casts it keeps
_CPP = frozenset({"static_cast", "double", "float", "int", "int64_t", "bool", "true", "false"})
_IDENT = re.compile(r"(?<![\w.:>{])([A-Za-z_]\w*)\b(?!\s*::)")


def _names(expr: str) -> set[str]:
    return {m.group(1) for m in _IDENT.finditer(re.sub(r"\d+\.\d*(?:[eE][-+]?\d+)?", "0", expr))}


def _renamed(expr: str, names: dict[str, str]) -> str:
    return _IDENT.sub(lambda m: names.get(m.group(1), m.group(1)), expr) if names else expr


def route_lines(routes, api: str, role: str, arg_names: set[str], out: str | None,
                arg_order: tuple[str, ...] = ()) -> list[str]:
    """The statements of upstream's CPU route for `api` (`routes`: opdb ValueRoutes of the
    op), or []. `out`: the adapter's output tensor (allocated or given) it returns.
    `arg_order`: the op's arguments in order; a route that records upstream's parameter
    names (`params`) has them renamed to these by position (op-plugin's
    MaskedSoftMaxKernelNpuOpApi.cpp spells `self_`, `dim_`, torch `self`, `dim`)."""
    if role not in ("functional", "out") or not out:
        return []
    lines: list[str] = []
    for r in routes:
        if r.api != api:
            continue
        if len(r.params) > len(arg_order):
            return []
        names = {p: a for p, a in zip(r.params, arg_order) if p != a}
        cond = _renamed(r.cond, names).replace("{out}", out)
        r = replace(r, cpu_call=_renamed(r.cpu_call, names))
        if not (_names(cond) | _names(r.cpu_call) | _names(r.result_dtype)) <= \
                (arg_names | {out} | _CPP) or "{" in cond:
            return []
        back = f"opgen_cpu_result.to({r.result_dtype})" if r.result_dtype else "opgen_cpu_result"
        lines += [f"// values {api} does not take: torch's CPU kernel, as upstream ({r.evidence})",
                  f"if ({cond}) {{",
                  f"    at::Tensor opgen_cpu_result = {r.cpu_call};",
                  f"    {out}.copy_({back});",
                  f"    return {out};",
                  "}"]
    return lines
