"""A required aclnn per-channel multiplier / offset fed by an optional phi tensor the
caller left out (docs/opgen.md "Why paddle first passes fail, by mechanism", class 4):
ones / zeros over the first input's channels by the parameter's role (arg_rules.yaml
`absent_affine`), as PaddleCustomDevice's batch_norm and group_norm kernels fill an absent
scale / bias (backends/npu/kernels at 77090b64). The APIs are the real aclnn signatures
(hicann ops-nn, as opdb has them) and the phi signatures Paddle 3.3.1's. Before the rule
the optional went to aclnn as it was: a nullptr for a parameter aclnn requires."""
from __future__ import annotations

import pytest

from codegen.paddle_target import build_paddle_kernel
from opdb.arg_rules import parse
from opdb.errors import ParseError
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t

BATCH_NORM = _api("aclnnBatchNorm", _t("input"), _t("weight"), _t("bias"),
                  _t("runningMean", "output"), _t("runningVar", "output"),
                  Param("training", "bool", "input"), Param("momentum", "double", "input"),
                  Param("eps", "double", "input"), _t("output", "output"),
                  _t("saveMean", "output"), _t("saveInvstd", "output"))
BATCH_NORM_OP = _op("batch_norm", "void BatchNormKernel(const Context& dev_ctx, "
                    "const DenseTensor& x, const DenseTensor& mean, const DenseTensor& variance, "
                    "const paddle::optional<DenseTensor>& scale, "
                    "const paddle::optional<DenseTensor>& bias, bool is_test, float momentum, "
                    "float epsilon, const std::string& data_layout, bool use_global_stats, "
                    "bool trainable_statistics, DenseTensor* y, DenseTensor* mean_out, "
                    "DenseTensor* variance_out, DenseTensor* saved_mean, "
                    "DenseTensor* saved_variance, DenseTensor* reserve_space)")
INSTANCE_NORM = _api("aclnnInstanceNorm", _t("x"), _t("gamma"), _t("beta"),
                     Param("dataFormat", "const char*", "input"), Param("eps", "double", "input"),
                     _t("y", "output"), _t("mean", "output"), _t("variance", "output"))
INSTANCE_NORM_OP = _op("instance_norm", "void InstanceNormKernel(const Context& dev_ctx, "
                       "const DenseTensor& x, const paddle::optional<DenseTensor>& scale, "
                       "const paddle::optional<DenseTensor>& bias, float epsilon, "
                       "DenseTensor* y, DenseTensor* saved_mean, DenseTensor* saved_variance)")

CHANNELS_BY_LAYOUT = ("!data_layout.empty() && data_layout.back() == 'C' && x.dims().size() > 2 "
                      "? x.dims()[x.dims().size() - 1] : x.dims()[1]")


def test_absent_scale_and_bias_are_ones_and_zeros_over_the_layouts_channels():
    # upstream batch_norm_kernel.cc: new_scale [C] of 1, new_bias [C] of 0, C = x.dims()[1]
    # for a 2-d x, else by data_layout
    a = _args(build_paddle_kernel(BATCH_NORM, BATCH_NORM_OP, framework_dtypes=("float32",)))
    w, b = a["weight"].prelude, a["bias"].prelude
    assert w[:3] == ["phi::DenseTensor acl_weight;", "if (scale) {",
                     "  acl_weight = *scale.get_ptr();"]
    assert f"  acl_weight.Resize(phi::make_ddim({{{CHANNELS_BY_LAYOUT}}}));" in w
    assert "  FillNpuTensorWithConstant<T>(&acl_weight, dev_ctx, static_cast<T>(1));" in w
    assert f"  acl_bias.Resize(phi::make_ddim({{{CHANNELS_BY_LAYOUT}}}));" in b
    assert "  FillNpuTensorWithConstant<T>(&acl_bias, dev_ctx, static_cast<T>(0));" in b
    assert a["weight"].expr == "acl_weight" and a["bias"].expr == "acl_bias"
    assert not a["weight"].todo and not a["bias"].todo


def test_without_a_layout_attribute_the_channels_are_dim_1():
    a = _args(build_paddle_kernel(INSTANCE_NORM, INSTANCE_NORM_OP, framework_dtypes=("float32",)))
    assert "  acl_gamma.Resize(phi::make_ddim({x.dims()[1]}));" in a["gamma"].prelude
    assert "  FillNpuTensorWithConstant<T>(&acl_beta, dev_ctx, static_cast<T>(0));" \
        in a["beta"].prelude


def test_an_optional_aclnn_parameter_keeps_the_optional():
    # aclnn's own `...Optional` parameters take a nullptr: nothing is filled
    api = _api("aclnnInstanceNorm", _t("x"), _t("gammaOptional"), _t("betaOptional"),
               Param("eps", "double", "input"), _t("y", "output"), _t("mean", "output"),
               _t("variance", "output"))
    a = _args(build_paddle_kernel(api, INSTANCE_NORM_OP, framework_dtypes=("float32",)))
    assert not any("Fill" in line for line in a["gammaOptional"].prelude)


def test_a_non_affine_role_is_not_filled():
    # a required tensor of another role (here a `shift` in place of `beta`) fed by an
    # optional: no identity is known, the optional goes as it is
    api = _api("aclnnInstanceNorm", _t("x"), _t("gamma"), _t("shift"),
               Param("eps", "double", "input"), _t("y", "output"), _t("mean", "output"),
               _t("variance", "output"))
    op = _op("instance_norm", "void InstanceNormKernel(const Context& dev_ctx, "
             "const DenseTensor& x, const paddle::optional<DenseTensor>& scale, "
             "const paddle::optional<DenseTensor>& shift, float epsilon, "
             "DenseTensor* y, DenseTensor* saved_mean, DenseTensor* saved_variance)")
    a = _args(build_paddle_kernel(api, op, framework_dtypes=("float32",)))
    assert not any("Fill" in line for line in a["shift"].prelude)
    assert any("static_cast<T>(1)" in line for line in a["gamma"].prelude)


def test_an_api_scoped_rule_wins():
    # group_norm's reviewed rule (arg_rules.yaml `rules`, aclnnGroupNorm) keeps its own
    # statements; the generic rule only applies where no such rule does
    api = _api("aclnnGroupNorm", _t("self"), _t("gamma"), _t("beta"),
               Param("N", "int64_t", "input"), Param("C", "int64_t", "input"),
               Param("HxW", "int64_t", "input"), Param("group", "int64_t", "input"),
               Param("eps", "double", "input"), _t("out", "output"),
               _t("meanOut", "output"), _t("rstdOut", "output"))
    op = _op("group_norm", "void GroupNormKernel(const Context& dev_ctx, const DenseTensor& x, "
             "const paddle::optional<DenseTensor>& scale, "
             "const paddle::optional<DenseTensor>& bias, float epsilon, int groups, "
             "const std::string& data_layout, DenseTensor* y, DenseTensor* mean, "
             "DenseTensor* variance)")
    a = _args(build_paddle_kernel(api, op, framework_dtypes=("float32",)))
    assert any("no scale: ones over the channels" in line for line in a["gamma"].prelude)
    assert not any("absent_affine" in line for line in a["gamma"].prelude)


def test_parse_rejects_a_role_in_both_lists():
    with pytest.raises(ParseError, match="absent_affine: needs exactly"):
        parse({"absent_affine": {"ones": ["weight"], "zeros": ["weight"], "layout": [],
                                 "evidence": "x"}})
