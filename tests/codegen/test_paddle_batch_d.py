"""The fourth held-out paddle batch of docs/opgen.md (batch D): the mechanisms its first
pass was missing, asserted on the generated semantics. Each API here is the real aclnn
signature (hicann ops-nn / ops-math headers, as opdb has them) and each phi signature the
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


AMIN = _api("aclnnAmin", _t("self"), Param("dim", "const aclIntArray*", "input"),
            Param("keepDim", "bool", "input"), _t("out", "output"))
MIN_OP = _op("min", "void MinKernel(const Context& dev_ctx, const DenseTensor& x, "
                    "const IntArray& dims, bool keep_dim, DenseTensor* out)")


def test_zero_dim_reduction_keeps_the_1d_view_dimension_for_keepDim():
    # aclnn `keepDim` normalizes to keep_dim (reduce_min/op_api/aclnn_amin.cpp CheckShape:
    # out must be AminInferShape(self, dim, keepDim)); a [1] view reduced without it is
    # 0-d, which the [1] out view does not match. Before, only keepdim/keep_dims were forced
    k = build_paddle_kernel(AMIN, MIN_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["self"].expr == "acl_self_1d" and a["out"].expr == "acl_out_1d"
    assert a["keepDim"].expr == "acl_keep_dim_or_0d"
    assert "bool acl_keep_dim_or_0d = keep_dim || acl_zero_dim;" in a["keepDim"].prelude[0]


NORM = _api("aclnnNorm", _t("self"), Param("pScalar", "const aclScalar*", "input"),
            Param("dim", "const aclIntArray*", "input"), Param("keepdim", "bool", "input"),
            _t("out", "output"))
PNORM_OP = _op("p_norm", "void PNormKernel(const Context& dev_ctx, const DenseTensor& x, "
                         "float porder, int axis, float epsilon, bool keepdim, bool asvector, "
                         "DenseTensor* out)")


def test_p_norm_order_feeds_pScalar():
    # p_norm_kernel.cc: phi::Scalar p = porder -> aclnnNorm(x, p, {axis}, keepdim, out);
    # before, pScalar (required) was nullptr
    a = _args(build_paddle_kernel(NORM, PNORM_OP, framework_dtypes=("float32",)))
    assert a["pScalar"].decision == "alias"
    assert a["pScalar"].prelude == ["phi::Scalar acl_p_scalar(porder);"]
    assert a["dim"].prelude == ["std::vector<int64_t> acl_dim = {static_cast<int64_t>(axis)};"]


ELU_BWD = _api("aclnnEluBackward", _t("gradOutput"), Param("alpha", "const aclScalar*", "input"),
               Param("scale", "const aclScalar*", "input"),
               Param("inputScale", "const aclScalar*", "input"), Param("isResult", "bool", "input"),
               _t("selfOrResult"), _t("gradInput", "output"))
ELU_GRAD_OP = _op("elu_grad", "void EluGradKernel(const Context& dev_ctx, const DenseTensor& x, "
                              "const DenseTensor& out, const DenseTensor& dout, float alpha, "
                              "DenseTensor* dx)", "backward")


def test_elu_grad_passes_unit_scales_and_the_input_as_selfOrResult():
    # activation_kernel.cc EluGradKernel: scale = input_scale = 1, isResult false with x
    k = build_paddle_kernel(ELU_BWD, ELU_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["scale"].prelude[0].startswith("phi::Scalar acl_scale = 1.0f;")
    assert a["inputScale"].prelude[0].startswith("phi::Scalar acl_input_scale = 1.0f;")
    assert a["isResult"].prelude[0].startswith("bool acl_is_result = false;")
    assert a["selfOrResult"].expr == "x" and a["gradOutput"].expr == "dout"
    assert not any("placeholder" in t for t in _todos(k))


EXPAND = _api("aclnnExpand", _t("self"), Param("size", "const aclIntArray*", "input"),
              _t("out", "output"))
EXPAND_OP = _op("expand", "void ExpandKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const IntArray& shape, DenseTensor* out)")


def test_expand_size_is_the_resolved_shape():
    # expand_kernel.cc: the -1 entries of `shape` take x's dim (final_expand_shape), which
    # is the out shape ExpandInferMeta gives; before, size (required) was nullptr
    k = build_paddle_kernel(EXPAND, EXPAND_OP, framework_dtypes=("float32",))
    size = _args(k)["size"]
    assert size.decision == "rule"
    assert size.prelude[0].startswith("std::vector<int64_t> acl_size = phi::vectorize(out->dims());")
    assert not _todos(k)  # `shape` is read by the rule


NLL = _api("aclnnNLLLoss", _t("self"), _t("target", dtypes=("int64", "int32")), _t("weight"),
           Param("reduction", "int64_t", "input"), Param("ignoreIndex", "int64_t", "input"),
           _t("out", "output"), _t("totalWeightOut", "output"))
NLL_OP = _op("nll_loss", "void NllLossRawKernel(const Context& dev_ctx, const DenseTensor& input, "
                         "const DenseTensor& label, const paddle::optional<DenseTensor>& weight, "
                         "int64_t ignore_index, const std::string& reduction, DenseTensor* out, "
                         "DenseTensor* total_weight)")
NLL_BWD = _api("aclnnNLLLossBackward", _t("gradOutput"), _t("self"),
               _t("target", dtypes=("int64", "int32")), _t("weight"),
               Param("reduction", "int64_t", "input"), Param("ignoreIndex", "int64_t", "input"),
               _t("totalWeight"), _t("out", "output"))
NLL_GRAD_OP = _op("nll_loss_grad",
                  "void NllLossGradKernel(const Context& dev_ctx, const DenseTensor& x, "
                  "const DenseTensor& label, const paddle::optional<DenseTensor>& weight, "
                  "const DenseTensor& total_weight, const DenseTensor& d_out, "
                  "int64_t ignore_index, const std::string& reduction, DenseTensor* d_x)",
                  "backward")


def test_absent_optional_weight_is_ones_for_a_required_aclnn_tensor():
    # nll_loss_kernel.cc: an absent weight is x.dims()[1] ones; aclnnNLLLoss requires it
    a = _args(build_paddle_kernel(NLL, NLL_OP, framework_dtypes=("float32",)))
    w = a["weight"]
    # in `self`'s dtype at run time: aclnn_nll_loss.cpp:86 checks it (checked dtype ties)
    assert w.expr == "acl_weight_like_self"
    assert "phi::DenseTensor acl_weight;" in w.prelude
    assert w.prelude[:3] == ["phi::DenseTensor acl_weight;", "if (weight) {",
                             "  acl_weight = *weight.get_ptr();"]
    assert ("  acl_weight_unset.Resize(phi::make_ddim({input.dims()[input.dims().size() - 1]}));"
            in w.prelude)
    assert "  FillNpuTensorWithConstant<T>(&acl_weight_unset, dev_ctx, static_cast<T>(1));" in w.prelude
    assert a["target"].expr == "label" and a["target"].decision == "alias"


def test_nll_loss_grad_maps_d_out_and_label_by_meaning_not_position():
    # before: gradOutput <- label and target <- d_out (position)
    k = build_paddle_kernel(NLL_BWD, NLL_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["gradOutput"].expr == "d_out" and a["gradOutput"].decision == "alias"
    assert a["target"].expr == "label"
    assert a["out"].expr == "d_x_tensor"
    assert not any("position" in t for t in _todos(k))


GN = _api("aclnnGroupNorm", _t("self"), _t("gamma"), _t("beta"), Param("N", "int64_t", "input"),
          Param("C", "int64_t", "input"), Param("HxW", "int64_t", "input"),
          Param("group", "int64_t", "input"), Param("eps", "double", "input"),
          _t("out", "output"), _t("meanOut", "output"), _t("rstdOut", "output"))
GN_OP = _op("group_norm", "void GroupNormKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const paddle::optional<DenseTensor>& scale, "
                          "const paddle::optional<DenseTensor>& bias, double epsilon, int groups, "
                          "const std::string& data_layout, DenseTensor* y, DenseTensor* mean, "
                          "DenseTensor* variance)")
GN_BWD = _api("aclnnGroupNormBackward", _t("gradOut"), _t("input"), _t("mean"), _t("rstd"),
              _t("gamma"), Param("N", "int64_t", "input"), Param("C", "int64_t", "input"),
              Param("HxW", "int64_t", "input"), Param("group", "int64_t", "input"),
              Param("outputMask", "const aclBoolArray*", "input"), _t("gradInput", "output"),
              _t("gradGammaOut", "output"), _t("gradBetaOut", "output"))
GN_GRAD_OP = _op("group_norm_grad",
                 "void GroupNormGradKernel(const Context& dev_ctx, const DenseTensor& x, "
                 "const paddle::optional<DenseTensor>& scale, "
                 "const paddle::optional<DenseTensor>& bias, const DenseTensor& y, "
                 "const DenseTensor& mean, const DenseTensor& variance, const DenseTensor& d_y, "
                 "double epsilon, int groups, const std::string& data_layout, DenseTensor* d_x, "
                 "DenseTensor* d_scale, DenseTensor* d_bias)", "backward")


def test_group_norm_sizes_default_affine_and_variance():
    k = build_paddle_kernel(GN, GN_OP, framework_dtypes=("float32",))
    a = _args(k)
    c = 'data_layout == "NHWC" ? x.dims()[x.dims().size() - 1] : x.dims()[1]'
    assert a["N"].prelude == ["int64_t acl_n = x.dims()[0];"]
    assert a["C"].prelude == [f"int64_t acl_c = {c};"]
    assert a["HxW"].prelude[0].startswith(f"int64_t acl_hx_w = x.numel() / (x.dims()[0] * ({c}));")
    # absent scale/bias: ones/zeros over C (group_norm_kernel.cc)
    assert "  FillNpuTensorWithConstant<T>(&acl_gamma_unset, dev_ctx, static_cast<T>(1));" in a["gamma"].prelude
    assert "  FillNpuTensorWithConstant<T>(&acl_beta_unset, dev_ctx, static_cast<T>(0));" in a["beta"].prelude
    # aclnn writes rstd; Paddle's variance output is rstd^-2 - eps
    # (rstdOut then goes in `self`'s dtype at run time: aclnn_group_norm.cpp:85, checked ties)
    assert a["rstdOut"].decision == "rule" and a["rstdOut"].expr == "acl_rstd_out_like_self"
    assert "phi::DenseTensor acl_rstd_out;  // aclnn writes rstd = 1/sqrt(var + eps); Paddle's " \
        "output is the variance" in a["rstdOut"].prelude
    after = "\n".join(k["after"])
    assert "EXEC_NPU_CMD(aclnnPowTensorScalar, dev_ctx, acl_rstd_out, acl_rstd_out_pow, *variance);" in after
    # NHWC x/y go as NCHW views (channel_first); Paddle sends NLC/NDHWC as "NHWC" too, so
    # other ranks go as [N, C, *] views of the channel-last storage (upstream transposes)
    assert a["self"].expr == "acl_self_nchw" and a["out"].expr == "acl_out_nchw"
    pre = a["self"].prelude
    assert 'if (data_layout == "NHWC" && acl_self_nchw.dims().size() == 4) {' in pre
    assert any(line.startswith('} else if (data_layout == "NHWC" && acl_self_nchw.dims().size() >= 3) {')
               for line in pre)
    assert ("  for (int i = static_cast<int>(acl_self_nchw_d.size()) - 2; i >= 0; --i) "
            "acl_self_nchw_st[i] = acl_self_nchw_st[i + 1] * acl_self_nchw_d[i + 1];") in pre
    assert ("  std::vector<int64_t> acl_self_nchw_vd = {acl_self_nchw_d[0], acl_self_nchw_d.back()}, "
            "acl_self_nchw_vs = {acl_self_nchw_st[0], 1};") in pre
    assert not any("placeholder" in t for t in _todos(k))


def test_group_norm_grad_maps_d_prefixed_gradients():
    # `d_y` is the output's gradient, `d_scale`/`d_bias` the gradients of scale/bias
    # (gamma/beta); before, gradOut <- bias and rstd <- y by position
    k = build_paddle_kernel(GN_BWD, GN_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    # a channel-last d_y goes as a channel-first view like x and d_x (the channel_first
    # entry's `grad`: aclnn `gradOut` normalizes to it; it used to say `grad_out`, so d_y
    # was read as channel-first while x and d_x were viewed)
    assert a["gradOut"].expr == "acl_grad_out_nchw" and a["input"].expr == "acl_input_nchw"
    assert a["gradOut"].prelude[0].startswith("phi::DenseTensor acl_grad_out_nchw(d_y);")
    assert 'if (data_layout == "NHWC" && acl_grad_out_nchw.dims().size() == 4) {' in a["gradOut"].prelude
    # d_scale/d_bias and the statistics go in d_y's dtype at run time (checked dtype ties:
    # aclnn_group_norm_backward.cpp:157-158 on A2/A3)
    assert a["gradGammaOut"].expr == "acl_grad_gamma_out_like_grad_out" \
        and a["gradGammaOut"].decision == "alias"
    assert "opgen_dtype_as(dev_ctx, d_scale_tensor, acl_grad_out_nchw.dtype(), /*copy=*/false)" \
        in a["gradGammaOut"].prelude[-1]
    assert a["gradBetaOut"].expr == "acl_grad_beta_out_like_grad_out"
    assert a["rstd"].expr == "acl_rstd_like_grad_out"
    assert "EXEC_NPU_CMD(aclnnInplaceRsqrt, dev_ctx, acl_rstd);" in a["rstd"].prelude
    assert a["outputMask"].prelude[0] == ("std::array<bool, 3> acl_output_mask = "
                                          "{d_x != nullptr, d_scale != nullptr, d_bias != nullptr};")
    assert not any("position" in t for t in _todos(k))


GATHER = _api("aclnnGatherV2", _t("self"), Param("dim", "int64_t", "input"),
              _t("index", dtypes=("int64", "int32")), _t("out", "output"))
GATHER_OP = _op("gather", "void GatherKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const DenseTensor& index, const Scalar& axis, DenseTensor* out)")


def test_gather_index_shapes_paddle_accepts():
    # gather_kernel.cc: an [N, 1] index goes as [N]; for a 0-d index out gets a 1 at axis
    # (aclnn_gather_v2.cpp CheckOutShape); before, both shapes failed aclnn's shape check
    a = _args(build_paddle_kernel(GATHER, GATHER_OP, framework_dtypes=("float32",)))
    assert a["index"].expr == "acl_index" and a["out"].expr == "acl_out"
    assert "if (index.dims().size() == 2 && index.dims()[1] == 1) {  // Paddle reads an [N, 1] index as [N]" in a["index"].prelude
    assert "  acl_out_d.insert(acl_out_d.begin() + acl_out_ax, 1);" in a["out"].prelude
    assert a["out"].prelude[1].startswith("if (index.dims().size() == 0) {")
    assert a["dim"].prelude == ["int64_t acl_dim = static_cast<int64_t>(axis.to<int64_t>());"]


GATHER_ND = _api("aclnnGatherNd", _t("self"), _t("indices", dtypes=("int64", "int32")),
                 Param("negativeIndexSupport", "bool", "input"), _t("out", "output"))
GATHER_ND_OP = _op("gather_nd", "void GatherNdKernel(const Context& dev_ctx, const DenseTensor& x, "
                                "const DenseTensor& index, DenseTensor* out)")


def test_gather_nd_empty_index_rows_and_negative_indices():
    # gather_nd_kernel.cc: an index with no coordinates broadcasts x into out and returns
    # (aclnnGatherNd rejects a last dim of 0); Paddle 3.3.1's gather_nd takes negative
    # indices (phi funcs/gather.h), which aclnn does with negativeIndexSupport
    k = build_paddle_kernel(GATHER_ND, GATHER_ND_OP, framework_dtypes=("float32",))
    a = _args(k)
    pre = a["indices"].prelude
    assert pre[0].startswith("if (index.dims().size() > 0 && index.dims()[index.dims().size() - 1] == 0) {")
    assert "  EXEC_NPU_CMD(aclnnExpand, dev_ctx, x, acl_indices_shape, *out);" in pre
    assert pre[-2:] == ["}", "const phi::DenseTensor& acl_indices = index;"]
    assert a["negativeIndexSupport"].prelude[0].startswith("bool acl_negative_index_support = true;")
    assert not _todos(k)


NLL2D = _api("aclnnNLLLoss2d", _t("self"), _t("target", dtypes=("int64", "int32")), _t("weight"),
             Param("reduction", "int64_t", "input"), Param("ignoreIndex", "int64_t", "input"),
             _t("out", "output"), _t("totalWeightOut", "output"))


def test_rank_variant_branches_on_the_phi_input_rank():
    # nll_loss_kernel.cc: x of rank 4 goes to aclnnNLLLoss2d (aclnnNLLLoss takes 1 or 2
    # dims); the branch is mapped on NLLLoss2d's own signature, its weight over dim 1
    k = build_paddle_kernel(NLL, NLL_OP, framework_dtypes=("float32",), rank_variant=(NLL2D, 4))
    b = k["branch"]
    assert b["api"].name == "aclnnNLLLoss2d" and b["cond"] == "input.dims().size() == 4"
    w = {a.aclnn_name: a for a in b["args"]}["weight"]
    assert "  acl_weight_unset.Resize(phi::make_ddim({input.dims()[1]}));" in w.prelude
    # the base call keeps the class dim last
    assert ("  acl_weight_unset.Resize(phi::make_ddim({input.dims()[input.dims().size() - 1]}));"
            in _args(k)["weight"].prelude)


def test_rank_variant_is_rendered_before_the_base_call():
    # the template branches on the rank and returns before the base call
    from codegen.api import render_adapter
    r = render_adapter(NLL, NLL_OP, "paddle", "in-tree", variants={"rank": (NLL2D, 4)})
    text = r.files["in-tree/backends/npu/kernels/nll_loss_kernel.cc"]
    i = text.index("  if (input.dims().size() == 4) {  // upstream calls aclnnNLLLoss2d")
    j = text.index("    EXEC_NPU_CMD(aclnnNLLLoss2d, dev_ctx,")
    k = text.index("    return;\n  }", j)
    assert i < j < k < text.index("  EXEC_NPU_CMD(aclnnNLLLoss, dev_ctx,")
    assert "using AclnnNLLLoss2dGetWorkspaceSizeFn = " in text


def test_rank_variants_entries_are_validated():
    import pytest
    from opdb.arg_rules import _rank_variants
    from opdb.errors import ParseError
    with pytest.raises(ParseError, match="rank_variants\\[0\\].*int `rank`"):
        _rank_variants([{"base": "aclnnA", "variant": "aclnnB", "rank": "4", "evidence": "x"}])


def test_float64_computed_in_float32_casts_the_optional_weight_too():
    # float64 is registered and computed in float32 (compute_as); the weight built from the
    # optional phi tensor must follow x into float32, or aclnn sees mixed dtypes
    k = build_paddle_kernel(NLL, NLL_OP, framework_dtypes=("float32", "float64"))
    assert k["compute_as"] == ["float64"]
    a = _args(k)
    assert a["self"].expr == "acl_self_float32" and a["weight"].expr == "acl_weight_like_self"
    assert ("phi::DenseTensor acl_weight_float32 = opgen_compute_as(dev_ctx, acl_weight, "
            "{phi::DataType::FLOAT64}, phi::DataType::FLOAT32, /*copy=*/true);") in a["weight"].prelude
