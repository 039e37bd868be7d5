"""Mechanisms found by scoring held-out torch APIs against op-plugin (docs/opgen.md,
"Held-out torch APIs"): out overloads paired by signature whatever their overload
name, `TensorTensor`/`TensorScalar` scalar variants, wrapped numbers copied to the
device where a Scalar overload exists, required aclnn tensors never nullptr, pointwise
in-place ops through the out-of-place API, and an unset `dim` that reduces every
element. Each test names the upstream adapter that shows the behaviour."""
from __future__ import annotations

import re

from codegen import torch_facts
from codegen.api import prepare
from codegen.torch_target import function_name, schema_family, schema_of
from codegen.variants import family, scalar_variant
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_out_overloads_not_named_out_join_the_family(db):
    """torchgen pairs by signature: topk.values / silu_backward.grad_input /
    nll_loss_forward.output are the out variants (op-plugin TopKKernelNpuOpApi.cpp
    topk_out, SiluBackwardKernelNpuOpApi.cpp silu_backward_out)."""
    for op, out in (("aten::topk", "aten::topk.values"),
                    ("aten::silu_backward", "aten::silu_backward.grad_input"),
                    ("aten::nll_loss_forward", "aten::nll_loss_forward.output"),
                    ("aten::sort", "aten::sort.values")):
        fam = schema_family(db, db.framework_op("torch", op))
        assert fam["out"].name == out, op
        assert fam["functional"].name == op
        # and from the out member back to the functional
        back = schema_family(db, db.framework_op("torch", out))
        assert back["functional"].name == op
    # a different signature is not a member (sort.stable has `stable`)
    assert "aten::sort.stable" not in {o.name for o in
                                       schema_family(db, db.framework_op("torch",
                                                                         "aten::sort")).values()}
    assert function_name(schema_of(db.framework_op("torch", "aten::topk.values"))) == "topk_out"


def test_topk_values_out_is_generated(db):
    r = prepare(db, "aclnnTopk", "torch", op="aten::topk")
    text = r.files[ADAPTER.format("Topk")]
    body = _fn(text, "std::tuple<at::Tensor&, at::Tensor&> topk_out(")
    assert "npu_preparation::check_tensor({self}, indices, indices.scalar_type(), " \
           "std::get<1>(meta).sizes());" in body
    assert "EXEC_NPU_CMD(aclnnTopk, self, k, dim, largest, sorted, values, indices);" in body
    assert "- func: topk.values(" in r.files["in-tree/op_plugin/config/op_plugin_functions.yaml.entry"]


def test_tensor_scalar_variant_named_by_operand_kinds(db):
    """aclnnPowTensorTensor's scalar variant is aclnnPowTensorScalar (op-plugin
    PowKernelNpuOpApi.cpp calls it for a CPU 0-d exponent); a name alone is not
    enough: the signatures must differ in exactly that one tensor."""
    fam = family(db, db.aclnn_api("aclnnPowTensorTensor"))
    assert fam["scalar"].name == "aclnnPowTensorScalar"
    assert fam["inplace"].name == "aclnnInplacePowTensorTensor"
    assert fam["inplace_scalar"].name == "aclnnInplacePowTensorScalar"
    assert scalar_variant(db, db.aclnn_api("aclnnEqTensor")).name == "aclnnEqScalar"
    assert scalar_variant(db, db.aclnn_api("aclnnSWhere")) is None
    r = prepare(db, "aclnnPowTensorTensor", "torch", op="aten::pow.Tensor_Tensor")
    text = r.files[ADAPTER.format("Pow")]
    assert "EXEC_NPU_CMD(aclnnPowTensorScalar, self, exponent_scalar, out);" in text
    assert "EXEC_NPU_CMD(aclnnInplacePowTensorScalar, self, exponent_scalar);" in text
    # a CPU 0-d `self` (2 ** x) is copied to the device for the tensor API
    assert "at::Tensor self_device = npu_preparation::copy_scalar_to_device(" in text


def test_number_params_from_scalar_overloads():
    assert torch_facts.number_params("aten::where.self") == {"self", "other"}
    assert torch_facts.number_params("aten::mm") == frozenset()
    assert "condition" not in torch_facts.number_params("aten::where.self")


def test_wrapped_numbers_copied_for_where(db):
    """torch.where(c, x, 0.5) reaches where.self with a CPU 0-d `other`; aclnnSWhere has
    no scalar variant, so the number goes to the device (op-plugin
    WhereKernelNpuOpApi.cpp unify_tensors_to_npu); the bool condition is left alone."""
    r = prepare(db, "aclnnSWhere", "torch", op="aten::where.self")
    text = r.files[ADAPTER.format("Where")]
    for fn in ("at::Tensor& where_out(", "at::Tensor where("):
        body = _fn(text, fn)
        assert "at::Tensor other_device = other.dim() == 0 && !torch_npu::utils::is_npu(other) ? " \
               "npu_preparation::copy_scalar_to_device(other.item(), " \
               "(other.unsafeGetTensorImpl()->is_wrapped_number() ? at::result_type(self, other) " \
               ": other.scalar_type()), out.device()) : other;" in body
        # the bool condition is never a wrapped number: a CPU one keeps its dtype
        assert "at::result_type(condition" not in body
        assert "EXEC_NPU_CMD(aclnnSWhere, condition_device, self_device, other_device, out);" \
            in body
    # the CPU binding (no torch_npu) passes its inputs unchanged
    binding = r.files["standalone/src/binding.cpp"]
    assert "torch_run(\"aclnnSWhere\", reinterpret_cast<aclrtStream>(stream), " \
           "condition.device(), condition, self, other, out);" in binding
    assert "_device" not in binding.split("run(", 1)[1].split("PYBIND11_MODULE")[0] \
        .replace("condition.device()", "")


def test_required_aclnn_tensor_from_optional_is_never_nullptr(db):
    """aclnnNLLLoss requires `weight`; op-plugin NLLLossKernelNpuOpApi.cpp passes
    at::ones(self.size(-1)) when it is unset (a reviewed rule in arg_rules.yaml)."""
    r = prepare(db, "aclnnNLLLoss", "torch", op="aten::nll_loss_forward")
    text = r.files[ADAPTER.format("NllLossForward")]
    body = _fn(text, "std::tuple<at::Tensor, at::Tensor> nll_loss_forward(")
    assert "if (weight.has_value() && weight->defined()) {" in body
    assert "at::Tensor acl_weight_unset = at::ones(self.size(-1), self.options());" in body
    assert "EXEC_NPU_CMD(aclnnNLLLoss, self, target, acl_weight, reduction, ignore_index, " \
           "output, total_weight);" in body
    assert "nll_loss_forward_out(" in text


def test_required_from_optional_without_a_rule_passes_the_value(db):
    """Without a reviewed value the optional goes as it is (op-plugin passes an unset
    conv bias to aclnnConvolution, whose `bias` has no `Optional` suffix)."""
    from codegen.argmap import FwParam, MappedParam
    from codegen.torch_target import TorchDialect
    from opdb.model import Param
    p = MappedParam(Param("gamma", "const aclTensor*"), "tensor", False,
                    FwParam("gamma", "tensor", "const c10::optional<at::Tensor>&", True),
                    "name")
    arg = TorchDialect({"gamma", "self"}, api_name="aclnnSomethingNew").convert(p, "self")
    assert arg.expr == "gamma" and not arg.prelude and not arg.todo


def test_pointwise_inplace_runs_the_out_of_place_api(db):
    """silu_ / clamp_: no aclnnInplace API; op-plugin's yaml `structured_inherit` runs
    the .out kernel with self as out. Only for ops torch tags pointwise."""
    assert torch_facts.pointwise("aten::silu") is True
    assert torch_facts.pointwise("aten::cumsum") is False
    r = prepare(db, "aclnnSilu", "torch", op="aten::silu")
    body = _fn(r.files[ADAPTER.format("Silu")], "at::Tensor& silu_(at::Tensor& self)")
    assert "at::Tensor& out = self;" in body
    assert "EXEC_NPU_CMD(aclnnSilu, self, out);" in body
    assert "- func: silu_(" in r.files["in-tree/op_plugin/config/op_plugin_functions.yaml.entry"]
    # cumsum is not pointwise: its in-place op is not generated through aclnnCumsum
    r2 = prepare(db, "aclnnCumsum", "torch", op="aten::cumsum")
    assert "cumsum_(" not in r2.files[ADAPTER.format("Cumsum")]


def test_clamp_bounds_map_by_reviewed_alias(db):
    r = prepare(db, "aclnnClamp", "torch", op="aten::clamp")
    text = r.files[ADAPTER.format("Clamp")]
    assert "EXEC_NPU_CMD(aclnnClamp, self, min, max, out);" in text
    assert "const aclScalar* acl_clip_value_min = nullptr;" not in text


def test_unset_dim_reduces_every_element(db):
    """argmax(x) with dim unset is over the flattened input: op-plugin
    ArgmaxKernelNpuOpApi.cpp passes self.reshape({-1}) and dim 0. Probed on Meta."""
    assert torch_facts.unset_dim_reduces_all("aten::argmax") is True
    assert torch_facts.unset_dim_reduces_all("aten::cumsum") is False
    assert torch_facts.unset_dim_reduces_all("aten::mean.dim") is False
    r = prepare(db, "aclnnArgMax", "torch", op="aten::argmax")
    assert not r.todos
    body = _fn(r.files[ADAPTER.format("Argmax")], "at::Tensor argmax(")
    assert "at::Tensor self_flat = dim.has_value() ? self : self.reshape({-1});" in body
    assert "at::Tensor out_flat = dim.has_value() ? out : out.view(keepdim ? " \
           "std::vector<int64_t>{1} : std::vector<int64_t>{});" in body
    assert re.search(r"EXEC_NPU_CMD\(aclnnArgMax, self_flat, acl_dim, keepdim, out_flat\);", body)
    # the returned tensor keeps torch's meta sizes
    assert "return out;" in body


def test_pointwise_inplace_keeps_the_versioned_api(db):
    """gelu_ through the out-of-place family takes aclnnGeluV2 (the `approximate`
    mode), as the functional does, not aclnnGelu without it."""
    r = prepare(db, "aclnnGelu", "torch", op="aten::gelu")
    body = _fn(r.files[ADAPTER.format("Gelu")], "at::Tensor& gelu_(")
    assert "EXEC_NPU_CMD(aclnnGeluV2, self, acl_approximate, out);" in body
    assert not r.todos


def test_wrapped_number_copied_in_the_promoted_dtype_not_the_outputs(db):
    """`2 == x`: eq's output is bool; the number must reach aclnnEqTensor as a number
    of the promoted dtype (at::result_type), not as `true` (op-plugin
    EqKernelNpuOpApi.cpp compares the device copies in the inputs' dtypes)."""
    r = prepare(db, "aclnnEqTensor", "torch", op="aten::eq.Tensor")
    text = r.files[ADAPTER.format("Eq")]
    assert text.count("at::Tensor self_device = npu_preparation::copy_scalar_to_device("
                      "self.item(), at::result_type(self, other), out.device());") == 2
    assert "out.scalar_type(), out.device()" not in text
    assert "EXEC_NPU_CMD(aclnnEqScalar, self, other_scalar, out);" in text


def test_cpu_scalar_tensors_of_a_pointwise_forward_op_go_to_the_device(db):
    """torch.maximum(x, torch.tensor(2.)): TensorIterator takes a CPU 0-d tensor next
    to device tensors (op-plugin MaxKernelNpuOpApi.cpp copies `IsCPUScalar` inputs in
    their own dtype). Not for backward ops (autograd passes device tensors) nor for
    ops that are not pointwise (mm)."""
    r = prepare(db, "aclnnMaximum", "torch", op="aten::maximum")
    body = _fn(r.files[ADAPTER.format("Maximum")], "at::Tensor maximum(")
    assert "EXEC_NPU_CMD(aclnnMaximum, self_device, other_device, out);" in body
    assert "self.unsafeGetTensorImpl()->is_wrapped_number() ? at::result_type(self, other) " \
           ": self.scalar_type()" in body
    for api, op, stem in (("aclnnSiluBackward", "aten::silu_backward", "SiluBackward"),
                          ("aclnnMm", "aten::mm", "Mm")):
        text = prepare(db, api, "torch", op=op).files[ADAPTER.format(stem)]
        assert "copy_scalar_to_device" not in text, api


def test_batch_matmul_follows_the_matmul_hf32_switch(db):
    """aclnnBatchMatMul (aten::bmm) takes torch_npu's matmul HF32 setting as aclnnMm
    does (op-plugin BmmKernelNpuOpApi.cpp), not the conv/pooling `false`: the reviewed
    rule's API pattern ignores case (MatMul / Matmul)."""
    text = prepare(db, "aclnnBatchMatMul", "torch", op="aten::bmm").files[ADAPTER.format("Bmm")]
    # op-plugin 517f2e7d's helper: the HF32 switch unless the passthrough is set
    # (corrected in ws/h9t2; the bare passthrough ignored torch.npu.matmul.allow_hf32)
    assert "int8_t acl_cube_math_type = op_plugin::utils::get_cube_math_type_with_passthrough();" \
        in text
    assert "get_cube_math_type(false)" not in text


def test_outputs_an_output_mask_leaves_out_stay_undefined(db):
    """convolution_backward(..., output_mask=[True, True, False]) (a conv without bias):
    the meta function returns an undefined third tensor, so it is not allocated (nor
    its `.out` checked) and aclnn gets nullptr, as op-plugin
    LayerNormBackwardKernelNpuOpApi.cpp allocates only the masked-in gradients."""
    r = prepare(db, "aclnnConvolutionBackward", "torch", op="aten::convolution_backward")
    text = r.files[ADAPTER.format("ConvolutionBackward")]
    fn = _fn(text, "std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(")
    assert "at::Tensor grad_bias = std::get<2>(meta).defined() ? " \
           "npu_preparation::apply_tensor_without_format(std::get<2>(meta).sizes(), " in fn
    assert ": at::Tensor();" in fn
    out = _fn(text, "std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> convolution_backward_out(")
    assert "if (std::get<2>(meta).defined()) {  // output_mask[2] is set" in out
    # an op without a mask is unchanged
    topk = prepare(db, "aclnnTopk", "torch", op="aten::topk").files[ADAPTER.format("Topk")]
    assert ".defined() ?" not in topk


def test_only_an_inplace_api(db):
    """aclnnMaskedFillScalar does not exist, only aclnnInplaceMaskedFillScalar. op-plugin
    registers masked_fill_ alone (MaskedFillKernelNpuOpApi.cpp): torch's composite
    masked_fill.Scalar / .Scalar_out clone and call it. Asked for the functional, the
    adapter copies `self` into its output and updates that, never the caller's input."""
    assert torch_facts.composite_kernel("aten::masked_fill.Scalar") is True
    r = prepare(db, "aclnnInplaceMaskedFillScalar", "torch", op="aten::masked_fill_.Scalar")
    entry = r.files["in-tree/op_plugin/config/op_plugin_functions.yaml.entry"]
    assert "masked_fill_.Scalar(" in entry and "masked_fill.Scalar(" not in entry \
        and "Scalar_out" not in entry
    r2 = prepare(db, "aclnnInplaceMaskedFillScalar", "torch", op="aten::masked_fill.Scalar")
    body = _fn(r2.files[ADAPTER.format("MaskedFill")], "at::Tensor masked_fill(")
    assert "out.copy_(self);" in body
    assert "EXEC_NPU_CMD(aclnnInplaceMaskedFillScalar, out, mask, value);" in body
    assert not r2.todos


def test_backward_returns_named_after_the_forward_inputs(db):
    """derivatives.yaml: `input, weight, bias: ... convolution_backward_symint(...)`:
    the backward's returns are grad_input/grad_weight/grad_bias, so aclnn's
    gradInput/gradWeight/gradBias map by name (no role-order TODO)."""
    assert torch_facts.return_names("aten::convolution_backward") == {
        0: "grad_input", 1: "grad_weight", 2: "grad_bias"}
    assert torch_facts.return_names("aten::native_layer_norm") == {1: "mean", 2: "rstd"}
    assert torch_facts.return_names("aten::topk") == {}
    r = prepare(db, "aclnnConvolutionBackward", "torch", op="aten::convolution_backward")
    assert not r.todos
    text = r.files[ADAPTER.format("ConvolutionBackward")]
    assert "acl_cube_math_type, grad_input, grad_weight, grad_bias);" in text
    assert "acl_cube_math_type, out0, out1, out2);" in text  # .out: out0..2 mean the same
