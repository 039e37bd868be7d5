"""Convolution-shaped torch ops with no meta function are sized as torch's convolution
sizes them (`codegen/torch_conv_shape.py`; the fifth audit's ConvDepthwise2d row,
docs/opgen.md "Fifth audit: the pool at head, torch rows 1-12"). Nothing keys on an API or
op name in code; the tests name the upstream adapter and the torch ops of the premise."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from codegen.kinds import parse_torch_schema
from codegen.torch_conv_shape import conv_args, python_output_sizes
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

# (op, stride, padding, dilation or None): CPU kernels of the shape conv_args takes
_PREMISE = [
    ("aten::slow_conv_dilated2d", [2, 1], [1, 0], [2, 1]),
    ("aten::thnn_conv2d", [2, 3], [1, 2], None),
    ("aten::_slow_conv2d_forward", [1, 2], [0, 1], None),
    ("aten::mkldnn_convolution", [2, 2], [1, 1], [1, 2]),
    ("aten::conv2d", [3, 1], [2, 0], [1, 3]),
    ("aten::slow_conv3d", [2, 1, 1], [1, 0, 1], None),
]


def _schema(op: str):
    import torch
    name, _, ov = op.partition(".")
    s = getattr(getattr(torch.ops.aten, name.split("::")[1]), ov or "default")._schema
    return parse_torch_schema(str(s))


@pytest.mark.parametrize("op,stride,padding,dilation", _PREMISE)
def test_the_premise_holds_on_the_ops_of_this_shape_that_run(op, stride, padding, dilation):
    """conv_output_size (here in Python) gives the shape torch's own kernels of this
    signature give, with strides, paddings and dilations that change every dim and a
    weight whose output channels differ from the input's."""
    import torch
    c = conv_args(_schema(op))
    assert c is not None and bool(c.dilation) == (dilation is not None)
    spatial = len(stride)
    x = torch.randn([2, 3] + [9 + d for d in range(spatial)])
    w = torch.randn([5, 3] + [3] * spatial)
    kw = {"stride": stride, "padding": padding}
    if dilation is not None:
        kw["dilation"] = dilation
    fn = getattr(torch.ops.aten, op.split("::")[1])
    if "kernel_size" in [a.name for a in fn.default._schema.arguments]:
        kw["kernel_size"] = [3] * spatial
    names = [a.name for a in fn.default._schema.arguments]
    kw.update({"bias": None} if "bias" in names else {})
    kw.update({"groups": 1} if "groups" in names else {})
    got = fn(x, w, **kw)
    want = python_output_sizes(x.shape, w.shape, padding, stride, dilation or ())
    assert list(got.shape) == want


def test_only_convolution_shaped_schemas_match():
    """A transposed convolution (its size is conv_input_size's), a pooling op (no
    `weight`), a backward with three outputs and an op whose first argument is not the
    input do not match."""
    for text in (
        "aten::slow_conv_transpose2d(Tensor self, Tensor weight, SymInt[2] kernel_size, "
        "Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
        "SymInt[2] output_padding=0, SymInt[2] dilation=1) -> Tensor",
        "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
        "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
        "aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
        "SymInt[1]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
        "bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) "
        "-> (Tensor, Tensor, Tensor)",
        "aten::foo(Tensor weight, Tensor self, int[2] stride, int[2] padding) -> Tensor",
    ):
        assert conv_args(parse_torch_schema(text)) is None, text


def test_depthwise_conv_output_is_sized_by_the_convolution(db):
    """op-plugin ConvDepthwise2dKernelNpuOpApi.cpp allocates `conv_depthwise2d_npu_output_size`
    (`{N, weight.size(0), H_out, W_out}`); torch registers `_conv_depthwise2d` for CUDA
    only (no Meta kernel), so before this ours allocated `self`'s sizes and resized an
    empty `out` to them."""
    r = prepare(db, "aclnnConvDepthwise2d", "torch", op="aten::_conv_depthwise2d")
    text = r.files[ADAPTER.format("ConvDepthwise2d")]
    assert "#include <ATen/native/ConvUtils.h>" in text
    sizes = ("at::native::conv_output_size(self.sizes(), weight.sizes(), padding, stride, "
             "dilation)")
    fn = _fn(text, "_conv_depthwise2d(const at::Tensor& self")
    assert f"at::Tensor out = npu_preparation::apply_tensor_without_format({sizes}, " \
           "self.options());" in fn
    out = _fn(text, "_conv_depthwise2d_out(const at::Tensor& self")
    assert f"npu_preparation::check_tensor({{self, weight}}, out, out.scalar_type(), {sizes});" \
        in out
    for body in (fn, out):
        assert "TORCH_CHECK(self.dim() > 2 && weight.dim() == self.dim()" in body
        assert "std::all_of(stride.begin(), stride.end(), [](int64_t s) { return s > 0; })" \
            in body  # conv_output_size divides by the strides
        assert body.index("conv_output_size") < body.index("EXEC_NPU_CMD")
        assert "resize_(self.sizes())" not in body and "opgen_meta(" not in body
    assert "// TODO(opgen)" not in text
