"""Output sizes of convolution-shaped torch ops that have no meta function.

opgen sizes a torch adapter's outputs by the op's own meta function. A few convolution
backends register no Meta kernel (and, on a CPU build, no kernel at all): torch dispatches
to them from `aten::convolution` on one device only (`_conv_depthwise2d`,
`conv_depthwise3d`: CUDA). Their output size is still torch's: the size torch's own
convolution computes, `at::native::conv_output_size` (ATen/native/ConvUtils.h,
`{N, weight.size(0), (in + 2 * pad - (dil * (k - 1) + 1)) / stride + 1 ...}`).

A schema is convolution-shaped when it takes, by the names torch's convolution family
uses, an input tensor (`self` or `input`, the first argument), a `weight` tensor and
non-optional `stride` and `padding` int lists (an optional `dilation` int list), and
nothing of a transposed convolution (`transposed`, `output_padding`), and returns one
tensor. The signature, not the op's name, decides; `tests/codegen/test_torch_conv_shape.py`
checks the premise on the ops of this shape that do have a Meta kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kinds import TorchSchema

# arguments of a transposed convolution: its output size is conv_input_size's, not this
_TRANSPOSED = ("transposed", "output_padding")


@dataclass(frozen=True)
class ConvArgs:
    """The argument names of a convolution-shaped schema."""

    input: str
    weight: str
    stride: str
    padding: str
    dilation: str  # "" when the schema has none (dilation 1)


def conv_args(schema: TorchSchema | None) -> ConvArgs | None:
    """The convolution arguments of `schema` (a functional or `.out` schema), or None
    when it is not convolution-shaped (see the module docstring)."""
    if schema is None:
        return None
    args = [a for a in schema.args if not (a.mutable and a.kwarg_only)]
    by_name = {a.name: a for a in args}
    fresh = [r for r in schema.returns if not r.alias]
    outs = [a for a in schema.args if a.mutable and a.kwarg_only]
    if not args or args[0].name not in ("self", "input") or args[0].kind != "tensor" \
            or args[0].optional or args[0].mutable:
        return None
    if len(fresh) + len(outs) != 1 or any(n in by_name for n in _TRANSPOSED):
        return None
    w = by_name.get("weight")
    if w is None or w.kind != "tensor" or w.optional:
        return None
    for n in ("stride", "padding"):
        a = by_name.get(n)
        if a is None or a.kind != "int_array" or a.optional:
            return None
    d = by_name.get("dilation")
    if d is not None and (d.kind != "int_array" or d.optional):
        return None
    return ConvArgs(args[0].name, "weight", "stride", "padding", "dilation" if d else "")


def output_sizes(c: ConvArgs) -> str:
    """The C++ expression of the output's sizes (a `std::vector<int64_t>`)."""
    dil = f", {c.dilation}" if c.dilation else ""
    return (f"at::native::conv_output_size({c.input}.sizes(), {c.weight}.sizes(), "
            f"{c.padding}, {c.stride}{dil})")


def rank_check(c: ConvArgs) -> str:
    """A TORCH_CHECK that the ranks fit conv_output_size, which indexes `weight`'s sizes
    and the lists by `input`'s spatial dims without checking them and divides by the
    strides (torch's convolution checks both first; op-plugin
    `conv_depthwise2d_npu_output_size` too: "stride should not contain zero")."""
    lists = [c.stride, c.padding] + ([c.dilation] if c.dilation else [])
    spatial = f"static_cast<size_t>({c.input}.dim() - 2)"
    conds = [f"{c.input}.dim() > 2", f"{c.weight}.dim() == {c.input}.dim()"] + \
        [f"{n}.size() == {spatial}" for n in lists] + \
        [f"std::all_of({c.stride}.begin(), {c.stride}.end(), [](int64_t s) {{ return s > 0; }})"]
    names = ", ".join(f"`{n}`" for n in lists)
    return (f'TORCH_CHECK({" && ".join(conds)}, "expected `{c.input}` of rank 3 or more, '
            f'`{c.weight}` of the same rank, {names} of one value per spatial dim and '
            f'`{c.stride}` positive");')


def python_output_sizes(input_size, weight_size, padding, stride, dilation=()) -> list[int]:
    """conv_output_size in Python (ATen/native/ConvUtils.h), for the premise test."""
    out = [input_size[0], weight_size[0]]
    for d in range(2, len(input_size)):
        dil = dilation[d - 2] if dilation else 1
        kernel = dil * (weight_size[d] - 1) + 1
        out.append((input_size[d] + 2 * padding[d - 2] - kernel) // stride[d - 2] + 1)
    return out
