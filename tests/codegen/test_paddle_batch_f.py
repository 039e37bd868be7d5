"""The sixth held-out paddle batch of docs/opgen.md (batch F): the mechanisms its first
pass was missing, asserted on the generated semantics. Each API here is the real aclnn
signature (hicann ops-math / ops-nn headers, as opdb has them) and each phi signature the
installed Paddle's; the upstream kernels are PaddleCustomDevice backends/npu/kernels at
77090b64."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

ANY_DTYPE = ("float32", "float16", "int32", "int64", "bool")

ALL = _api("aclnnAll", _t("self", dtypes=ANY_DTYPE), Param("dim", "const aclIntArray*", "input"),
           Param("keepdim", "bool", "input"), _t("out", "output", ("bool", "uint8")))
ALL_OP = _op("all", "void AllKernel(const Context& dev_ctx, const DenseTensor& x, "
                    "const std::vector<int64_t>& dims, bool keep_dim, DenseTensor* out)")


def test_an_output_aclnn_writes_only_as_bool_is_allocated_bool():
    # ReduceInferMeta copies x's dtype into out; aclnnAll writes BOOL/UINT8 only
    # (aclnn_all.cpp CheckDtypeValid) and Paddle's CPU all allocates bool. Before, a float
    # x got a float out, which aclnn rejects
    k = build_paddle_kernel(ALL, ALL_OP, framework_dtypes=("float32", "bool"))
    assert k["allocs"][0].startswith("dev_ctx.Alloc(out, phi::DataType::BOOL);")
    assert "aclnnAll writes `out` as bool/uint8 only" in k["allocs"][0]


def test_a_bool_allocated_output_is_pinned_bool_in_the_registration():
    # Paddle's CPU/GPU `all` registrations set OutputAt(0).SetDataType(BOOL)
    # (paddle/phi/kernels/reduce_all_kernel.cc); the other PaddleCustomDevice backends'
    # `all` bodies set nothing, so before, a float-registered `all` left `out` typed like x
    k = build_paddle_kernel(ALL, ALL_OP, framework_dtypes=("float32", "bool"))
    pins = [line for line in k["body"]["plain"] if "OutputAt(0).SetDataType" in line]
    assert pins == ["kernel->OutputAt(0).SetDataType(phi::DataType::BOOL);"]


def test_a_bool_only_registration_needs_no_pin():
    k = build_paddle_kernel(ALL, ALL_OP, framework_dtypes=("bool",))
    if set(k["dtype_names"]) == {"bool"}:
        assert not any("SetDataType" in line for line in k["body"]["plain"])


def test_an_output_with_other_doc_dtypes_keeps_the_infermeta_dtype():
    relu = _api("aclnnRelu", _t("self"), _t("out", "output", ("float32", "bool")))
    op = _op("relu_like", "void ReluKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "DenseTensor* out)")
    assert build_paddle_kernel(relu, op, framework_dtypes=("float32",))["allocs"] == [
        "opgen_alloc<T>(dev_ctx, out);"]


SPLIT = _api("aclnnSplitWithSize", _t("self"), Param("splitSize", "const aclIntArray*", "input"),
             Param("dim", "int64_t", "input"),
             Param("out", "aclTensorList*", "output", ("float32", "float16", "bfloat16")))
SPLIT_OP = _op("split", "void SplitKernel(const Context& dev_ctx, const DenseTensor& x, "
                        "const IntArray& sections, const Scalar& axis, "
                        "std::vector<phi::DenseTensor*> out)")


def test_every_member_of_an_output_list_is_allocated():
    # split_kernel.cc allocates each outs[j] before aclnn; before, none was allocated
    k = build_paddle_kernel(SPLIT, SPLIT_OP, framework_dtypes=("float32",))
    assert "for (auto* out_i : out) opgen_alloc<T>(dev_ctx, out_i);" in k["allocs"]


def test_split_sizes_are_the_outputs_extents_along_the_dim():
    # split_kernel.cc passes the sections with -1 resolved: the dims SplitInferMeta gave
    # the outputs along axis. Before, splitSize (required) was a nullptr placeholder
    k = build_paddle_kernel(SPLIT, SPLIT_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["splitSize"].decision == "rule"
    pre = a["splitSize"].prelude
    assert pre[0].startswith("int64_t acl_split_size_dim = phi::Scalar(axis).to<int64_t>();")
    assert "if (acl_split_size_dim < 0) acl_split_size_dim += x.dims().size();" in pre
    assert ("for (auto* acl_split_size_o : out) "
            "acl_split_size.push_back(acl_split_size_o->dims()[acl_split_size_dim]);") in pre
    assert not any("placeholder" in t for t in _todos(k))


LOGSIGMOID_BWD = _api("aclnnLogSigmoidBackward", _t("gradOutput"), _t("self"), _t("buffer"),
                      _t("gradInput", "output"))
LOGSIGMOID_GRAD_OP = _op("logsigmoid_grad", "void LogSigmoidGradKernel(const Context& dev_ctx, "
                                            "const DenseTensor& x, const DenseTensor& dout, "
                                            "DenseTensor* dx)", "backward")


def test_required_buffer_is_a_zero_tensor_like_self():
    # activation_kernel.cc LogSigmoidGradKernel zero-fills a buffer with x's meta;
    # aclnn_logsigmoid_backward.cpp CheckNotNull rejects a null one (before: nullptr)
    k = build_paddle_kernel(LOGSIGMOID_BWD, LOGSIGMOID_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["buffer"].decision == "rule"
    assert a["buffer"].prelude[1:] == ["acl_buffer.set_meta(x.meta());",
                                       "dev_ctx.Alloc(&acl_buffer, acl_buffer.dtype());",
                                       "EXEC_NPU_CMD(aclnnInplaceZero, dev_ctx, acl_buffer);"]
    assert a["self"].expr == "x" and a["gradOutput"].expr == "dout"
    assert _todos(k) == []


NONZERO = _api("aclnnNonzero", _t("self", dtypes=("float32", "bool", "int64")),
               _t("out", "output", ("int64",)))
NONZERO_OP = _op("nonzero", "void NonZeroKernel(const Context& dev_ctx, const DenseTensor& "
                            "condition, DenseTensor* out)")


def test_a_data_dependent_output_is_a_counted_view_of_a_bound_buffer():
    # NonZeroInferMeta leaves out [-1, rank]; nonzero_kernel.cc counts the nonzeros,
    # runs aclnnNonzero into [numel, rank] and keeps the first rows. Before, out was
    # allocated with InferMeta's -1 dim
    k = build_paddle_kernel(NONZERO, NONZERO_OP, framework_dtypes=("float32",))
    assert k["allocs"] == [] and k["count_nonzero"]
    out = _args(k)["out"]
    assert out.expr == "acl_out_bound"
    assert "const phi::DDim acl_out_bound_shape = condition.dims();" in out.prelude
    assert any("phi::make_ddim({phi::product(acl_out_bound_shape), "
               "static_cast<int64_t>(acl_out_bound_shape.size())})" in line
               for line in out.prelude)
    assert out.after == [
        "const int64_t acl_out_bound_rows = opgen_count_nonzero(dev_ctx, condition, "
        "acl_out_bound_shape);  // the rows aclnn wrote",
        "*out = acl_out_bound;",
        "out->Resize(phi::make_ddim({acl_out_bound_rows, "
        "static_cast<int64_t>(acl_out_bound_shape.size())}));"]


MASKED_SELECT = _api("aclnnMaskedSelect", _t("self"), _t("mask", dtypes=("bool",)),
                     _t("out", "output"))
MASKED_SELECT_OP = _op("masked_select", "void MaskedSelectKernel(const Context& dev_ctx, "
                                        "const DenseTensor& x, const DenseTensor& mask, "
                                        "DenseTensor* out)")


def test_masked_select_counts_the_broadcast_mask():
    # masked_select_kernel.cc: aclnn into [x.numel()], the mask's true count, out resized
    # to it; Paddle 3.3.1 broadcasts x and mask, so the bound and the count are over the
    # broadcast shape
    k = build_paddle_kernel(MASKED_SELECT, MASKED_SELECT_OP, framework_dtypes=("float32",))
    out = _args(k)["out"]
    assert ("const phi::DDim acl_out_bound_shape = opgen_broadcast_dims({x.dims(), "
            "mask.dims()});") in out.prelude
    assert any("phi::make_ddim({phi::product(acl_out_bound_shape)})" in line
               for line in out.prelude)
    assert out.after[0].startswith("const int64_t acl_out_bound_rows = "
                                   "opgen_count_nonzero(dev_ctx, mask, acl_out_bound_shape);")
    assert out.after[-1] == "out->Resize(phi::make_ddim({acl_out_bound_rows}));"


def test_count_helper_is_rendered_only_when_used():
    from codegen.api import render_adapter

    def kernel_file(api, op) -> str:
        files = render_adapter(api, op, "paddle", layout="in-tree")
        return next(v for k, v in files.files.items() if k.endswith(".cc"))

    text = kernel_file(NONZERO, NONZERO_OP)
    assert "int64_t opgen_count_nonzero(const Context& dev_ctx" in text
    assert "inline phi::DDim opgen_broadcast_dims(" in text
    assert "opgen_count_nonzero" not in kernel_file(ALL, ALL_OP)


def test_data_dependent_entries_are_validated():
    import pytest
    from opdb.arg_rules import _data_dependent
    from opdb.errors import ParseError
    with pytest.raises(ParseError, match="data_dependent\\[0\\].*a bool `rank_dim`"):
        _data_dependent([{"apis": "^aclnnA$", "output": "out", "bound": ["self"],
                          "count": "self", "rank_dim": "yes", "evidence": "x"}])


SMOOTH_L1_BWD = _api("aclnnSmoothL1LossBackward", _t("gradOut"), _t("self"), _t("target"),
                     Param("reduction", "int64_t", "input"), Param("beta", "float", "input"),
                     _t("gradInput", "output"))
HUBER_GRAD_OP = _op("huber_loss_grad", "void HuberLossGradKernel(const Context& dev_ctx, "
                                       "const DenseTensor& residual, const DenseTensor& "
                                       "out_grad, float delta, DenseTensor* input_grad, "
                                       "DenseTensor* label_grad)", "backward")


def test_huber_grad_is_smooth_l1_grad_at_the_residual_scaled_by_delta():
    # huber_loss_kernel.cc HuberLossGradKernel: SmoothL1LossGrad(residual, zeros, dout,
    # beta = delta), dx = -delta * g, dy = delta * g. Before: target nullptr, beta a
    # placeholder, label_grad never written, no scaling
    k = build_paddle_kernel(SMOOTH_L1_BWD, HUBER_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["beta"].prelude == ["float acl_beta = delta;  // huber's delta is SmoothL1's beta "
                                 "(the loss is delta * SmoothL1(beta = delta))"]
    assert a["target"].decision == "rule"
    assert "EXEC_NPU_CMD(aclnnInplaceZero, dev_ctx, acl_target);" in a["target"].prelude
    assert k["after"][-4:] == [
        "phi::Scalar acl_label_grad_delta = delta;  // d huber / d label = delta * "
        "SmoothL1'(residual)",
        "EXEC_NPU_CMD(aclnnMuls, dev_ctx, input_grad_tensor, acl_label_grad_delta, "
        "label_grad_tensor);",
        "phi::Scalar acl_label_grad_neg_delta = -delta;  // d huber / d input = -delta * "
        "SmoothL1'(residual)",
        "EXEC_NPU_CMD(aclnnInplaceMuls, dev_ctx, input_grad_tensor, acl_label_grad_neg_delta);"]
    assert not {u["name"] for u in k["unused"]} & {"delta", "label_grad"}


SMOOTH_L1 = _api("aclnnSmoothL1Loss", _t("self"), _t("target"), Param("reduction", "int64_t",
                                                                       "input"),
                 Param("beta", "float", "input"), _t("result", "output"))
HUBER_OP = _op("huber_loss", "void HuberLossKernel(const Context& dev_ctx, const DenseTensor& "
                             "input, const DenseTensor& label, float delta, DenseTensor* out, "
                             "DenseTensor* residual)")


def test_huber_forward_writes_the_residual_and_scales_by_delta():
    # huber_loss_kernel.cc HuberLossKernel: residual = label - input, out = delta *
    # SmoothL1(input, label, beta = delta); before, residual was unwritten and out unscaled
    k = build_paddle_kernel(SMOOTH_L1, HUBER_OP, framework_dtypes=("float32",))
    assert "EXEC_NPU_CMD(aclnnSub, dev_ctx, label, input, acl_residual_one, *residual);" \
        in k["after"]
    assert "EXEC_NPU_CMD(aclnnInplaceMuls, dev_ctx, *out, acl_residual_delta);" in k["after"]
    assert _args(k)["result"].expr == "*out"


MULS = _api("aclnnMuls", _t("self"), Param("other", "const aclScalar*", "input"),
            _t("out", "output"))
SCALE_OP = _op("scale", "void ScaleKernel(const Context& dev_ctx, const DenseTensor& x, "
                        "const Scalar& scale, const Scalar& bias, bool bias_after_scale, "
                        "DenseTensor* out)")


def test_scale_multiplies_then_adds_the_bias():
    # scale_kernel.cc: aclnnMuls(x, scale), then aclnnAdds(bias, scaled first unless
    # bias_after_scale); before, `other` was a nullptr placeholder and the bias unused
    k = build_paddle_kernel(MULS, SCALE_OP, framework_dtypes=("float32",))
    assert _args(k)["other"].prelude == [
        "phi::Scalar acl_other = scale;  // out = x * scale (+ bias, after the call)"]
    assert "if (!bias_after_scale) acl_bias_value *= scale.to<double>();" in k["after"]
    assert k["after"][-1] == "EXEC_NPU_CMD(aclnnInplaceAdds, dev_ctx, *out, acl_bias_add, " \
                             "acl_bias_one);"
    assert _todos(k) == []


def test_registration_settings_named_d_x_reach_paddles_x_grad():
    # mlu/sdaa register batch_norm_grad with OutputAt(i) settings named d_x, d_scale,
    # d_bias (backend_dtypes.jsonl); Paddle 3.3.1 names them x_grad, scale_grad,
    # bias_grad. Before, all three were dropped with "this signature has no such output"
    from codegen.paddle_target import registration_body
    op = _op("batch_norm_grad", "void BatchNormGradKernel(const Context& dev_ctx, "
                                "const DenseTensor& x, const DenseTensor& y_grad, "
                                "DenseTensor* x_grad, DenseTensor* scale_grad, "
                                "DenseTensor* bias_grad)", "backward")
    body = registration_body(op)
    assert body["todos"] == []
    assert body["when"] == [{"dtype": "FLOAT16", "lines": [
        "kernel->OutputAt(0).SetDataType(phi::DataType::FLOAT32);",
        "kernel->OutputAt(1).SetDataType(phi::DataType::FLOAT32);",
        "kernel->OutputAt(2).SetDataType(phi::DataType::FLOAT32);"]}]
