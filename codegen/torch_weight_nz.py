"""The FRACTAL_NZ weight route of a torch adapter: an aclnn API with a `...WeightNz`
sibling (codegen.variants.weight_nz_variant: same parameters, the weight taken in the
FRACTAL_NZ format) gets a branch that sends an ND input times an NZ weight to the
sibling on the chips the sibling's docs name, everything else to the ND API, as
op-plugin 517f2e7d does for mm/matmul (MmKernelNpuOpApi.cpp, MatmulKernelNpuOpApi.cpp:
`is_nd_nz_format(self, mat2)` -> aclnnMatmulWeightNz), addmm (AddmmKernelNpuOpApi.cpp:
aclnnAddmmWeightNz) and bmm (BmmKernelNpuOpApi.cpp: aclnnBatchMatMulWeightNz).

The format test is upstream's own: `op_plugin::utils::is_nd_nz_format(partner, weight)`
(op_plugin/utils/OpUtils.h: the weight's storage format is FRACTAL_NZ, the partner's is
not, 2-D x 2-D, or 3-D x 3-D on Ascend950) and `!is_nz_format(t)` for every other tensor
input. With an acl_op fallback the adapter also gets upstream's format gate
(op_api_common.h DO_MATMUL_COMPATIBILITY): an input in a non-base format that the route
does not take goes to acl_op, or is refused in aclnn-only mode.
"""
from __future__ import annotations

from dataclasses import dataclass

from opdb.model import AclnnApi

from codegen.argmap import ArgMap

# The weight of a product: the second operand, which the WeightNz docs say is the one
# taken in NZ ("mat2仅支持NZ格式", aclnnMatmulWeightNz.md / aclnnBatchMatMulWeightNz.md;
# the `weight` / `x2` of the conv and quant-matmul WeightNz APIs)
WEIGHT_PARAMS = ("mat2", "x2", "weight")
# a confident mapping of the framework tensor onto the API's weight (not by position)
_SURE = ("name", "alias")
_NZ = "op_plugin::utils::is_nz_format"
_ND_NZ = "op_plugin::utils::is_nd_nz_format"


@dataclass(frozen=True)
class WeightNzRoute:
    """The sibling API, the framework tensors fed to its weight and to the operand the
    weight multiplies (`partner`), the framework's other tensor inputs, and the C++ test."""

    api: AclnnApi
    weight: str
    partner: str
    others: tuple[str, ...]
    soc_cond: str | None

    @property
    def format_cond(self) -> str:
        # another input (addmm's bias `self`) is ND and not 0-d: aclnnAddmmWeightNz.md
        # lists (n), (1, n), (m, 1), (1, 1), (m, n); AddmmKernelNpuOpApi.cpp
        # is_nd_nd_nz_format tests `self.dim()` 1 or 2 (torch's addmm allows no more)
        return " && ".join([f"{_ND_NZ}({self.partner}, {self.weight})"]
                           + [f"{o}.dim() >= 1 && !{_NZ}({o})" for o in self.others])

    @property
    def cond(self) -> str:
        return self.format_cond + (f" && ({self.soc_cond})" if self.soc_cond else "")

    @property
    def tensors(self) -> tuple[str, ...]:
        """Every framework tensor the test reads, in call order."""
        return tuple(dict.fromkeys((*self.others, self.partner, self.weight)))


def _tensor_inputs(api: AclnnApi) -> list[str]:
    return [p.name for p in api.params
            if p.role == "input" and p.ctype.replace(" ", "").endswith("aclTensor*")]


def weight_nz_route(amap: ArgMap, sibling: AclnnApi | None, soc_cond: str | None
                    ) -> WeightNzRoute | None:
    """The route when `sibling` (the chosen API's WeightNz sibling) has one weight
    parameter (WEIGHT_PARAMS), preceded by the tensor input it multiplies, and the
    framework feeds both by name or alias from required tensors of its own, and every
    other tensor input from a required framework tensor. None otherwise (an optional
    tensor input could be undefined, where upstream's test is not defined either)."""
    if sibling is None:
        return None
    tins = _tensor_inputs(sibling)
    weights = [n for n in tins if n in WEIGHT_PARAMS]
    if len(weights) != 1 or tins.index(weights[0]) == 0:
        return None
    w_name = weights[0]
    p_name = tins[tins.index(w_name) - 1]
    fed = {m.aclnn.name: m for m in amap.params}
    picked = {}
    for name in tins:
        m = fed.get(name)
        if m is None or m.fw is None or m.fw.kind != "tensor" or m.fw.optional \
                or m.fw.is_output or m.rule is not None:
            return None
        if name in (w_name, p_name) and m.decision not in _SURE:
            return None
        picked[name] = m.fw.name
    if picked[w_name] == picked[p_name]:
        return None
    others = tuple(picked[n] for n in tins if n not in (w_name, p_name))
    return WeightNzRoute(sibling, picked[w_name], picked[p_name], others, soc_cond)


def route_note(route: WeightNzRoute, nd_api: str) -> str:
    return (f"`{route.weight}` in FRACTAL_NZ (ND `{route.partner}`): {route.api.name} takes "
            f"the NZ weight, {nd_api} an ND one (op-plugin's is_nd_nz_format route, on the "
            f"chips {route.api.name}'s docs name)")


def gate_lines(route: WeightNzRoute, nd_api: str, acl_op_call: str) -> list[str]:
    """The acl_op fallback lines of an adapter with the route, in place of the
    `DO_COMPATIBILITY` of the ND and NZ APIs: upstream's DO_MATMUL_COMPATIBILITY."""
    base = " || ".join(f"!at_npu::native::FormatHelper::IsOpInputBaseFormat({t})"
                       for t in route.tensors)
    fmts = ", \", \", ".join(
        f"torch_npu::NPUBridge::GetNpuStorageImpl({t})->npu_desc_.npu_format_"
        for t in route.tensors)
    return [
        f"if ({base}) {{",
        f"    // a non-base format: only the route to {route.api.name} runs on aclnn "
        "(op-plugin op_api_common.h DO_MATMUL_COMPATIBILITY)",
        f"    if (!({route.cond})) {{",
        "        if (!c10_npu::IsAclnnOnly()) {",
        f"            return {acl_op_call};",
        "        }",
        f"        TORCH_CHECK(false, \"matmul got not support format in current device: (\", {fmts}, "
        "\")\", OPS_ERROR(ErrCode::PARAM));",
        "    }",
        f"    DO_COMPATIBILITY({route.api.name}, {acl_op_call});",
        "} else {",
        f"    DO_COMPATIBILITY({nd_api}, {acl_op_call});",
        "}",
    ]
