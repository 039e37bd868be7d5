"""Mechanisms found by scoring the tenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 10 --before 94`) against op-plugin 517f2e7d
(docs/opgen.md, "Tenth sample"): a torch value whose name is the aclnn param's name up to
an inflection (`train` / `training`), and an aclnn param named after its kind (`scalar`)
that takes the one torch Scalar left. None keys on an API name in code; the render
tests name the upstream adapter."""
from __future__ import annotations

from codegen.argmap import map_args
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture
from tests.codegen.torch_adapter_parts import aclnn_api as _api, fw_param as _fw, mapped_names as _got

db = shipped_db_fixture()


def test_names_one_word_up_to_an_inflection_pair_for_torch():
    """`train` is `training`, `has_biases` is `hasBias`, `bidirectional` is
    `bidirection`: one partner of the same kind on each side. Before, each went
    unmatched (a `false` placeholder and an unused-value TODO)."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"), ("training", "bool", "input"),
             ("hasBias", "bool", "input"), ("bidirection", "bool", "input"),
             ("out", "aclTensor*", "output"))
    fws = [_fw("self", "tensor"), _fw("train", "bool"), _fw("has_biases", "bool"),
           _fw("bidirectional", "bool"), _fw("out", "tensor", is_output=True)]
    got = _got(map_args(a, fws, "torch"))
    assert got["training"] == ("train", "inflection")
    assert got["hasBias"] == ("has_biases", "inflection")
    assert got["bidirection"] == ("bidirectional", "inflection")
    assert not map_args(a, fws, "torch").todos
    # paddle keeps its own mapping (no pass there)
    assert _got(map_args(a, fws, "paddle"))["training"] == (None, "unmapped")


def test_inflection_needs_a_stem_one_kind_and_one_partner():
    """`low`/`lows` (a stem under four letters), an int against a bool, and two
    framework values that both inflect the aclnn name pair nothing."""
    short = _api("aclnnFoo", ("self", "const aclTensor*", "input"), ("lows", "int64_t", "input"),
                 ("out", "aclTensor*", "output"))
    assert _got(map_args(short, [_fw("self", "tensor"), _fw("low", "int"),
                                 _fw("out", "tensor", is_output=True)], "torch"))["lows"] \
        == (None, "unmapped")
    kind = _api("aclnnFoo", ("self", "const aclTensor*", "input"), ("training", "bool", "input"),
                ("out", "aclTensor*", "output"))
    assert _got(map_args(kind, [_fw("self", "tensor"), _fw("train", "int"),
                                _fw("out", "tensor", is_output=True)], "torch"))["training"] \
        == (None, "unmapped")
    two = _got(map_args(kind, [_fw("self", "tensor"), _fw("train", "bool"), _fw("trainings", "bool"),
                               _fw("out", "tensor", is_output=True)], "torch"))
    assert two["training"] == (None, "unmapped")


def test_batch_norm_backward_passes_train_as_training(db):
    """op-plugin BatchNormBackwardKernelNpuOpApi.cpp passes `train` as aclnn `training`;
    opgen passed `false`, so a training-mode backward ran the eval-mode formula."""
    r = prepare(db, "aclnnBatchNormBackward", "torch", op="aten::native_batch_norm_backward")
    body = _fn(r.files[ADAPTER.format("NativeBatchNormBackward")],
               "std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(")
    assert ("EXEC_NPU_CMD(aclnnBatchNormBackward, grad_out, input, weight, running_mean, "
            "running_var, save_mean, save_invstd, train, eps, output_mask,") in body
    assert "acl_training" not in body
    assert not r.todos


def test_kind_named_scalar_takes_the_one_torch_scalar(db):
    """aclnnForeachAddcdivScalar(V2)'s `scalar` is torch's `value`. With it mapped,
    V2 (an aclScalar) fits better than V1 (a device tensor) and is chosen, as
    op-plugin ForeachAddcdivScalarKernelNpuOpApi.cpp calls V2 (V1 only as its
    DO_COMPATIBILITY fallback); the list route and the calls of at most 12 (16 in
    place) tensors follow from V2's call limits. Before: V1 with nullptr as `scalar`."""
    r = prepare(db, "aclnnForeachAddcdivScalar", "torch", op="aten::_foreach_addcdiv.Scalar")
    text = r.files[ADAPTER.format("ForeachAddcdiv")]
    fn = _fn(text, "std::vector<at::Tensor> _foreach_addcdiv(")
    assert "EXEC_NPU_CMD(aclnnForeachAddcdivScalarV2, opgen_x1_part, opgen_x2_part, " \
           "opgen_x3_part, acl_scalar, opgen_out_part);" in fn
    assert "return at::native::foreach_tensor_addcdiv_scalar_slow(self, tensor1, tensor2, value);" in fn
    assert "opgen_i += 12" in fn
    assert "opgen_i += 16" in _fn(text, "void _foreach_addcdiv_(")
    assert "nullptr" not in text
    assert not any("`value`" in t or "`scalar`" in t for t in r.todos)


def test_kind_named_scalar_needs_exactly_one_scalar_left():
    """Two Scalars left (or none) is no answer: the param stays a placeholder."""
    a = _api("aclnnFoo", ("x", "const aclTensorList*", "input"), ("scalar", "const aclScalar*", "input"),
             ("out", "aclTensorList*", "output"))
    one = _got(map_args(a, [_fw("self", "tensor_list"), _fw("value", "scalar"),
                            _fw("out", "tensor_list", is_output=True)], "torch"))
    assert one["scalar"] == ("value", "kind-named")
    two = _got(map_args(a, [_fw("self", "tensor_list"), _fw("value", "scalar"), _fw("weight", "scalar"),
                            _fw("out", "tensor_list", is_output=True)], "torch"))
    assert two["scalar"] == (None, "unmapped")
    dev = _api("aclnnFoo", ("x", "const aclTensorList*", "input"), ("scalar", "const aclTensor*", "input"),
               ("out", "aclTensorList*", "output"))
    assert _got(map_args(dev, [_fw("self", "tensor_list"), _fw("value", "scalar"),
                               _fw("out", "tensor_list", is_output=True)], "torch"))["scalar"] \
        == ("value", "kind-named")


def test_like_op_output_takes_the_callers_tensor_options(db):
    """op-plugin OnesLikeKernelNpuOpApi.cpp allocates with
    `self.options().merge_in(TensorOptions().dtype(dtype).device(device).layout(layout)
    .pinned_memory(pin_memory)).merge_memory_format(memory_format)` and sends another
    device to `empty_like(...).fill_(1)` (torch's own `at::native::ones_like`). Before,
    the output took `self.options()` and the four options were unused TODOs. The meta
    call runs with device Meta (no allocation on the caller's device)."""
    r = prepare(db, "aclnnInplaceOne", "torch", op="aten::ones_like")
    text = r.files[ADAPTER.format("OnesLike")]
    body = _fn(text, "at::Tensor ones_like(")
    assert ("auto meta = at::ones_like(opgen_meta(self), dtype, layout, at::Device(at::kMeta), "
            "c10::nullopt, memory_format);") in body
    assert ("self.options().merge_in(c10::TensorOptions().dtype(meta.scalar_type())"
            ".device(device).layout(layout).pinned_memory(pin_memory))"
            ".merge_memory_format(memory_format)") in body
    assert "if (device.has_value() && !torch_npu::utils::is_npu(*device)) {" in body
    assert ("        return at::native::ones_like(self, dtype, layout, device, pin_memory, "
            "memory_format);") in body
    assert body.index("at::native::ones_like(") < body.index("EXEC_NPU_CMD(")
    assert "#include <ATen/NativeFunctions.h>" in text
    assert not r.todos


def test_ops_without_tensor_options_keep_the_inputs_options(db):
    """An op with no TensorOptions arguments (ne.Scalar) allocates with its input's
    options and gets no device route."""
    r = prepare(db, "aclnnNeScalar", "torch", op="aten::ne.Scalar")
    text = r.files[ADAPTER.format("Ne")]
    assert "merge_in(" not in text and "at::native::" not in text
    assert "NativeFunctions.h" not in text


def test_every_convolution_api_follows_the_conv_hf32_switch(db):
    """op-plugin 517f2e7d ConvDepthwise2dKernelNpuOpApi.cpp (and conv_tbc's yaml entry,
    ConvolutionBackwardKernelNpuOpApi.cpp for aclnnConvTbcBackward) pass
    `get_cube_math_type(IsAllowConvHF32())`, as for aclnnConvolution; the reviewed rule
    matched `Convolution` only, so ConvDepthwise2d got `get_cube_math_type(false)`."""
    want = ("int8_t acl_cube_math_type = npu_preparation::get_cube_math_type("
            "at_npu::native::env::IsAllowConvHF32());")
    for api, op, stem in [("aclnnConvDepthwise2d", "aten::_conv_depthwise2d", "ConvDepthwise2d"),
                          ("aclnnConvTbc", "aten::conv_tbc", "ConvTbc")]:
        text = prepare(db, api, "torch", op=op).files[ADAPTER.format(stem)]
        assert want in text, api
        assert "get_cube_math_type(false)" not in text


def test_inflected_scales_take_upstreams_unset_value(db):
    """torch `scales` reaches aclnnUpsampleLinear1d's `scale` by the inflection pairing;
    unset it is -1 (op-plugin UpsampleLinear1dKernelNpuOpApi.cpp DEFAULT_SCALES), a
    reviewed value, not the placeholder 0 it was before."""
    r = prepare(db, "aclnnUpsampleLinear1d", "torch", op="aten::upsample_linear1d")
    text = r.files[ADAPTER.format("UpsampleLinear1d")]
    assert "double acl_scale = static_cast<double>(scales.value_or(-1.0));" in text
    assert not r.todos


def test_an_op_that_reads_no_input_value_gets_no_copy(db):
    """op-plugin OnesLikeKernelNpuOpApi.cpp runs aclnnInplaceOne on the fresh result.
    opgen copied `self` into it first (the rule for Inplace APIs, which must not write
    the caller's input), a full copy the fill overwrites. torch_facts.reads_values
    probes on the CPU whether the op's results depend on the input's values: not for
    ones_like, zeros_like or rand_like, yes for relu, unknown where the samples do not fit
    (masked_fill's float mask)."""
    from codegen import torch_facts
    assert torch_facts.reads_values("aten::ones_like", "self") is False
    assert torch_facts.reads_values("aten::rand_like", "self") is False
    assert torch_facts.reads_values("aten::relu", "self") is True
    assert torch_facts.reads_values("aten::masked_fill.Scalar", "self") is None
    assert torch_facts.reads_values("aten::relu", "nothing") is None
    body = _fn(prepare(db, "aclnnInplaceOne", "torch", op="aten::ones_like")
               .files[ADAPTER.format("OnesLike")], "at::Tensor ones_like(")
    assert "copy_(" not in body
    assert "EXEC_NPU_CMD(aclnnInplaceOne, out);" in body
