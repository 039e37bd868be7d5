"""The dropout bit mask a torch adapter generates itself before its aclnn call.

A fused-attention API takes its dropout as a bit-mask input (`dropMaskOptional`); the
framework op takes a keep probability and, optionally, the mask. op-plugin generates the
mask when the probability is below 1 and none is given, and returns the draw's seed,
offset and bit count so the backward regenerates the same mask. What the mask is (its
length, the generating API, the counter reservation) comes from a reviewed per-API entry,
arg_rules.yaml `drop_masks` (`opdb.arg_rules.DropMask`); this module only renders it:

- `plan(...)` decides whether the entry applies to one generated function (the chosen API
  and the sibling/version branches take the mask, the op has the keep probability and
  either returns `seed`/`offset`/`numels` or takes them) and gives the statements;
- the caller puts `lines` before the branches, passes `local` as the mask argument of
  every branch and replaces the `numels` placeholder with `numels_lines`.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.argmap import FwParam, norm_param

LOCAL = "acl_drop_mask"


@dataclass(frozen=True)
class DropMaskPlan:
    """What one generated function renders for a generated dropout mask."""

    aclnn_param: str  # the mask's aclnn parameter, e.g. dropMaskOptional
    given: str  # the framework's optional mask input ("" when the op has none)
    numels_lines: tuple[str, ...]  # define `numels` (forward: replaces the placeholder)
    lines: tuple[str, ...]  # before the branches: the mask, and the draw when returned
    note: str
    draws: bool  # the function draws seed/offset from the generator (the forward)
    consumed: frozenset[str] = frozenset()  # framework values the statements account for


def _fmt(line: str, var: str, names: dict[str, str]) -> str:
    return line.format(var=var, **names)


def plan(entry, mask_api, mask_params: set[str], fwp: list[FwParam], ref: str,
         api_params: set[str] = frozenset()) -> DropMaskPlan | None:
    """The mask `entry` (arg_rules DropMask) renders for a function whose branches take
    the aclnn parameters `mask_params`, with framework values `fwp` and first required
    tensor `ref`; None when it does not apply (the chosen API's parameters `api_params`
    include a seed and an offset, no such parameter, no keep probability,
    no seed/offset/numels on either side, a name the statements read is missing, or
    `mask_api`'s opdb signature is not shape, prob, seed, offset, probDataType, out)."""
    if entry is None or mask_api is None or not ref:
        return None
    if {"seed", "offset"} <= {norm_param(p) for p in api_params}:
        # the API takes the seed and offset itself and draws its own dropout
        # (aclnnFlashAttentionScoreV4, which upstream calls on Ascend950 without a mask)
        return None
    aclnn = next((p for p in sorted(mask_params) if norm_param(p) == entry.mask), None)
    if aclnn is None:
        return None
    if [norm_param(p.name) for p in mask_api.params] != \
            ["shape", "prob", "seed", "offset", "prob_data_type", "out"]:
        return None
    by = {f.name: f for f in fwp}
    inputs = {f.name: f for f in fwp if f.origin == "param"}
    keep = inputs.get(entry.keep)
    if keep is None or keep.kind != "float":
        return None
    rets = {f.name.rstrip("_"): f for f in fwp if f.origin == "return" and f.kind == "int"}
    names = (entry.seed, entry.offset, entry.numels_name)
    if all(n in rets for n in names):
        draws = True  # the forward: draws, and returns what the backward needs
        seed, offset, numels = (rets[n].name for n in names)
    elif all(n in inputs and inputs[n].kind == "int" for n in names):
        draws = False  # the backward: regenerates the forward's mask
        seed, offset, numels = names
    else:
        return None
    given = entry.given if entry.given in inputs and inputs[entry.given].kind == "tensor" else ""
    numels_lines: tuple[str, ...] = ()
    if draws:
        try:
            numels_lines = tuple(_fmt(line, numels, {n: n for n in by}) for line in entry.numels)
        except KeyError:
            return None  # the shape rule reads a value this op does not have
    prob = "opgen_mask_prob"
    lines = [f"at::Tensor {LOCAL} = {given}.has_value() ? *{given} : at::Tensor();"
             if given else f"at::Tensor {LOCAL};"]
    cond = f"!{LOCAL}.defined() && " if given else ""
    lines += [
        f"if ({cond}std::abs({entry.keep} - 1.0) >= 1e-9) {{",
    ]
    if draws:
        lines += [
            f"    auto opgen_mask_pair = opgen_philox_inputs(c10::nullopt, "
            f"static_cast<uint64_t>({entry.reserved}));",
            f"    {seed} = static_cast<int64_t>(opgen_mask_pair.first);",
            f"    {offset} = static_cast<int64_t>(opgen_mask_pair.second);",
        ]
    lines += [
        f"    {LOCAL} = npu_preparation::apply_tensor_without_format("
        f"{{({numels} + 128 - 1) / 128 * 128 / 8}}, {ref}.options().dtype(at::kByte));",
        f"    c10::SmallVector<int64_t, 1> opgen_mask_shape_vec = {{{numels}}};",
        "    at::IntArrayRef opgen_mask_shape(opgen_mask_shape_vec);",
        f"    double {prob} = static_cast<double>(1.0f - static_cast<float>({entry.keep}));",
        f"    aclDataType opgen_mask_dtype = npu_preparation::convert_to_acl_data_type("
        f"{ref}.scalar_type());",
        f"    EXEC_NPU_CMD({mask_api.name}, opgen_mask_shape, {prob}, {seed}, {offset}, "
        f"opgen_mask_dtype, {LOCAL});",
        "}",
    ]
    src = entry.evidence.split(" (")[0]
    note = (f"the dropout mask (arg_rules.yaml drop_masks, reviewed: {src}): with "
            f"`{entry.keep}` below 1 and {'no `' + given + '` given' if given else 'none given'}"
            f", {mask_api.name} draws {numels} bits"
            + (f" with a seed/offset reserved from the default NPU generator "
               f"({entry.reserved} counters), returned with `{numels}`" if draws else
               f" from the forward's `{seed}`/`{offset}`"))
    sched = [n for n in entry.scheduling if n in inputs]
    if sched:
        note += (f"; {', '.join(f'`{n}`' for n in sched)} only place it on another stream "
                 "upstream (same results): generated on the current stream here")
    used = {entry.keep, seed, offset, numels} | set(sched) | ({given} if given else set())
    if draws:  # the inputs the returned pair starts from
        used |= {entry.seed, entry.offset}
    return DropMaskPlan(aclnn, given, numels_lines, tuple(lines), note, draws,
                        frozenset(n for n in used if n in inputs))
