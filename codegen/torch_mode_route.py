"""The run-mode route of a torch adapter: op-plugin runs some ops on one aclnn API by
default and on another in aclnn-only mode (Ascend950) or with the compatible-impl switch
on (opdb.op_plugin_routes.mode_route, extracted from the adapters' own `if
(!c10_npu::IsAclnnOnly() && !...CheckCompatibleImpl())` tests). When the API opgen renders
is the non-default one and the default one takes the same parameters (names, C types and
roles), the adapter gets upstream's branch: the default API on upstream's condition, the
rendered API otherwise (MaxPool2dWithIndicesKernelNpuOpApi.cpp: aclnnMaxPool2dWithMask on
A2/A3 out of the box, aclnnMaxPool2dWithIndices on Ascend950; its backward likewise, so
the two agree on what `indices` holds).

An output the default API takes in other dtypes than the rendered one is in a layout of
its own (aclnnMaxPool2dWithMask's int8 mask): the route needs a reviewed layout
(arg_rules.yaml `api_output_layouts`) for it, else there is no route. APIs whose
parameters differ (aclnnGelu / aclnnGeluV2, which adds `approximate`) get no route.
"""
from __future__ import annotations

from dataclasses import dataclass

from opdb.dtypes import normalize_dtypes
from opdb.model import AclnnApi


@dataclass(frozen=True)
class ModeBranch:
    """The default API, upstream's condition for it, the evidence, and per framework
    output the default API lays out its own way: (name, sizes, dtype, evidence)."""

    api: AclnnApi
    cond: str
    evidence: str
    layouts: tuple[tuple[str, str, str, str], ...]


def _same_params(a: AclnnApi, b: AclnnApi) -> bool:
    return [(p.name, p.ctype.replace(" ", ""), p.role) for p in a.params] == \
        [(p.name, p.ctype.replace(" ", ""), p.role) for p in b.params]


def mode_branch(route, default: AclnnApi | None, chosen: AclnnApi,
                fed: dict[str, str], names: set[str]) -> ModeBranch | None:
    """The branch to `default` for `route` (an opdb ModeRoute whose `api` is `chosen`), or
    None. `fed`: aclnn output name -> the framework output passed for it; `names`: the
    framework values a layout's C++ may read."""
    if route is None or default is None or route.api != chosen.name \
            or not _same_params(default, chosen):
        return None
    from opdb.arg_rules import load as load_rules
    mine = {p.name: p for p in chosen.params}
    layouts = []
    for p in default.params:
        if p.role != "output" or normalize_dtypes(p.dtypes) == normalize_dtypes(mine[p.name].dtypes):
            continue
        fw = fed.get(p.name)
        entry = load_rules().output_layout_for(default.name, fw) if fw else None
        if entry is None:
            return None  # an output in a layout opgen cannot size
        try:
            sizes = entry.sizes.format(**{n: n for n in names})
        except KeyError:
            return None
        layouts.append((fw, sizes, entry.dtype, entry.evidence.split(":")[0]))
    return ModeBranch(default, route.cond, route.evidence, tuple(layouts))


def prelude(branch: ModeBranch, role: str, ref: str) -> list[str]:
    """The statements that lay the outputs out for the default API: a fresh output is
    allocated again, a given one (`.out`) checked (and resized) as upstream's API checks it."""
    out = []
    for name, sizes, dtype, evidence in branch.layouts:
        out.append(f"// `{name}` in {branch.api.name}'s own layout ({evidence})")
        out.append(f"std::vector<int64_t> opgen_{name}_sizes = {sizes};")
        if role == "out":
            out.append(f"npu_preparation::check_tensor({{{ref}}}, {name}, {dtype}, opgen_{name}_sizes);")
        else:
            out.append(f"{name} = npu_preparation::apply_tensor_without_format(opgen_{name}_sizes, "
                       f"{ref}.options().dtype({dtype}));")
    return out


def note(branch: ModeBranch, api: str) -> str:
    return (f"op-plugin's default mode runs {branch.api.name}, {api} in aclnn-only mode "
            f"(Ascend950) or with the compatible-impl switch ({branch.evidence})")


def fallback_lines(branch: ModeBranch, api: str, acl_op_call: str) -> list[str]:
    """Upstream's DO_COMPATIBILITY of the API each mode runs."""
    return [f"if ({branch.cond}) {{",
            f"    DO_COMPATIBILITY({branch.api.name}, {acl_op_call});",
            "} else {",
            f"    DO_COMPATIBILITY({api}, {acl_op_call});",
            "}"]
