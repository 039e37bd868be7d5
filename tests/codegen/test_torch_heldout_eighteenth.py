"""Mechanisms found by scoring the eighteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 18 -n 12 --before 190`) against op-plugin
517f2e7d (docs/opgen.md, "Eighteenth sample"). Nothing keys on an API or op name in code;
the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

IFELSE_SRC = """namespace op_api {
void _split_a(const at::TensorList x, at::TensorList r, bool is_inplace) {
  size_t tensor_count = x.size();
  size_t max_tensor_count = 1;
  if (is_inplace) {
    max_tensor_count = 48;
  } else {
    max_tensor_count = 24;
  }
  EXEC_NPU_CMD(aclnnA, x, r);
}
std::vector<at::Tensor> f(at::TensorList x) {
  if (!at::native::can_use_fast_route(x)) { return slow(x); }
}
}  // namespace op_api
"""


def test_a_limit_chosen_by_an_if_else_statement_is_extracted():
    """ForeachAbsKernelOpApi.cpp: `size_t max_tensor_count = 1; if (is_inplace) {
    max_tensor_count = 48; } else { max_tensor_count = 24; }`. Before, only the ternary
    was read, and the 1 of the declaration dropped the row."""
    rows = rows_of_file(IFELSE_SRC, "op_plugin/ops/opapi/X.cpp", {})
    assert [(r["api"], r["inplace"], r["out_of_place"], r["fast_route"], r["source"]["line"])
            for r in rows] == [("aclnnA", 48, 24, True, 4)]


def test_foreach_abs_has_upstreams_limit_in_opdb():
    lim = tensors_per_call("aclnnForeachAbs")
    assert lim is not None and (lim.inplace, lim.out_of_place, lim.fast_route) == (48, 24, True)
    assert lim.where.endswith("op_plugin/ops/opapi/ForeachAbsKernelOpApi.cpp:19")


def test_foreach_abs_routes_lists_to_torch_and_splits(db):
    """ForeachAbsKernelOpApi.cpp: lists `can_use_fast_route` rejects and dtypes the API
    lacks go to `foreach_tensor_abs_slow(_)`, DO_COMPATIBILITY, calls of at most 24 (48
    in place). Before, every list went to one call of the API, with no fallback."""
    r = prepare(db, "aclnnForeachAbs", "torch", op="aten::_foreach_abs")
    text = r.files[ADAPTER.format("ForeachAbs")]
    body = _fn(text, "std::vector<at::Tensor> _foreach_abs(")
    assert "if (!at::native::can_use_fast_route({self}) || " in body
    assert "return at::native::foreach_tensor_abs_slow(self);" in body
    assert "DO_COMPATIBILITY(aclnnForeachAbs, at::native::foreach_tensor_abs_slow(self));" in body
    assert "opgen_i += 24" in body
    inplace = _fn(text, "void _foreach_abs_(")
    assert "at::native::foreach_tensor_abs_slow_(self);" in inplace and "opgen_i += 48" in inplace


def test_an_integral_scalar_goes_as_a_double_for_a_floating_list(db):
    """ForeachMulScalarKernelOpApi.cpp: `adaptToDouble(scalar, tensors1)` before
    aclnnForeachMulScalarV2, which takes only FLOAT32/DOUBLE scalars for float32 lists
    (ops-nn aclnn_foreach_mul_scalar_v2.cpp CheckDtype). Before, the Scalar went as it
    was, so `torch._foreach_mul_(float_list, 2)` failed with an int64 aclScalar."""
    r = prepare(db, "aclnnForeachMulScalar", "torch", op="aten::_foreach_mul.Scalar")
    text = r.files[ADAPTER.format("ForeachMul")]
    conv = ("at::Scalar acl_scalar = !self.empty() && at::isFloatingType(self[0].scalar_type()) "
            "&& at::isIntegralType(scalar.type(), false) ? at::Scalar(scalar.toDouble()) : scalar;")
    for head in ("std::vector<at::Tensor> _foreach_mul(", "void _foreach_mul_(",
                 "void _foreach_mul_out("):
        body = _fn(text, head)
        assert conv in body, head
        assert "EXEC_NPU_CMD(aclnnForeachMulScalarV2, opgen_x_part, acl_scalar, " in body, head


def test_a_scalar_of_a_single_tensor_op_is_left_alone(db):
    """Only a Scalar next to a tensor list: aclnnAdds takes `add.Scalar`'s `other` as it is
    (op-plugin AddKernelNpuOpApi.cpp)."""
    r = prepare(db, "aclnnAdds", "torch", op="aten::add.Scalar")
    assert "toDouble()" not in r.files[ADAPTER.format("Add")]


def test_op_plugins_main_route_is_read_from_its_compat_facts():
    from opdb.op_plugin_routes import main_route
    api, why = main_route("aten::upsample_bilinear2d_backward")
    assert api == "aclnnUpsampleBilinear2dBackwardV2"
    assert "UpsampleBilinear2dBackwardKernelNpuOpApi.cpp:77" in why
    assert "op_api::upsample_bilinear2d_backward_old" in why
    assert main_route("aten::mul.Tensor") is None  # its fallbacks are acl_op::mul only


def test_the_version_upstream_runs_wins_a_tie(db):
    """UpsampleBilinear2dBackwardKernelNpuOpApi.cpp runs aclnnUpsampleBilinear2dBackwardV2
    and keeps V1 for `DO_COMPATIBILITY` only; V1 ignores `scalesH`/`scalesW` on A2/A3
    (ops-cv aclnn_upsample_bilinear_2d_backward.cpp). Both take the same parameters, so
    before, the tie went to the API asked for, V1."""
    r = prepare(db, "aclnnUpsampleBilinear2dBackward", "torch",
                op="aten::upsample_bilinear2d_backward")
    text = r.files[ADAPTER.format("UpsampleBilinear2dBackward")]
    for head in ("at::Tensor upsample_bilinear2d_backward(",
                 "at::Tensor& upsample_bilinear2d_backward_out("):
        body = _fn(text, head)
        assert "EXEC_NPU_CMD(aclnnUpsampleBilinear2dBackwardV2, grad_output, " in body, head
        assert "EXEC_NPU_CMD(aclnnUpsampleBilinear2dBackward, " not in body, head


def test_an_unset_value_can_be_an_expression_of_the_ops_values(db):
    """NanToNumKernelNpuOpApi.cpp get_posinf_and_neginf: an unset posinf/neginf is the
    largest/lowest finite value of `self`'s dtype (ATen's meaning). A reviewed per-API
    entry (arg_rules.yaml, `needs: [self]`); before, both went as 0.0, so
    `torch.nan_to_num(x)` turned +-inf into 0."""
    r = prepare(db, "aclnnNanToNum", "torch", op="aten::nan_to_num")
    text = r.files[ADAPTER.format("NanToNum")]
    assert not r.todos
    for head in ("at::Tensor nan_to_num(", "at::Tensor& nan_to_num_out(",
                 "at::Tensor& nan_to_num_("):
        body = _fn(text, head)
        assert "float acl_posinf = static_cast<float>(posinf.value_or((self.scalar_type() == " \
               "at::kHalf ? 65504.0 : " in body, head
        assert "std::numeric_limits<float>::lowest()" in body, head
        assert "float acl_nan = static_cast<float>(nan.value_or(0.0));" in body, head
        assert "value_or(0.0));\n    float acl_neginf" not in body, head


def test_an_updated_output_is_its_inputs_value_and_qualified_names_pair(db):
    """AmpUpdateScaleKernelNpuOpApi.cpp: EXEC_NPU_CMD(aclnnAmpUpdateScale, current_scale,
    growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval,
    current_scale, growth_tracker). torch's `scale_growth_factor` is the API's
    `growthFactor` with a word in front, and `updatedScale`/`updatedGrowthTracker` are
    the new values of `currentScale`/`growthTracker`, which the op writes in place.
    Before: `currentScale` nullptr, both factors 0.0, `updatedGrowthTracker` <- `self`."""
    r = prepare(db, "aclnnAmpUpdateScale", "torch", op="aten::_amp_update_scale_")
    body = _fn(r.files[ADAPTER.format("AmpUpdateScale")], "at::Tensor& _amp_update_scale_(")
    assert ("EXEC_NPU_CMD(aclnnAmpUpdateScale, self, growth_tracker, found_inf, "
            "scale_growth_factor, scale_backoff_factor, growth_interval, self, growth_tracker);"
            ) in body
    assert "at::Tensor& out = self;" not in body  # the API writes `self` as `updatedScale`
    assert len(r.todos) == 1  # `currentScale` <- `self` by position, which is right


def test_a_qualified_name_needs_one_partner_on_each_side():
    from codegen.argmap import FwParam, _qualified_pairs
    from opdb.model import AclnnApi, Param, Source
    api = AclnnApi("aclnnX", (Param("growthFactor", "double", "input"),
                              Param("factor", "double", "input")), Source("test", "", "", ""))
    fws = [FwParam("scale_growth_factor", "float", "double"),
           FwParam("other_growth_factor", "float", "double")]
    assert _qualified_pairs(api, [None, None], fws) == []  # two partners: no pairing
    assert _qualified_pairs(api, [None, None], fws[:1]) == [(0, fws[0])]  # `factor`: one word


def test_cdist_backward_sends_an_infinite_p_as_minus_one(db):
    """CdistBackwardNpuOpApi.cpp: `p_cast = -1` for an infinite p (ops-math
    aclnn_cdist_backward.cpp rejects other negative p; -1 selects the inf kernel). A
    reviewed per-API entry (arg_rules.yaml, `first`); before, inf went as it was."""
    r = prepare(db, "aclnnCdistBackward", "torch", op="aten::_cdist_backward")
    body = _fn(r.files[ADAPTER.format("CdistBackward")], "at::Tensor _cdist_backward(")
    assert "float acl_p = std::isinf(p) ? -1.0f : static_cast<float>(p);" in body
    assert "EXEC_NPU_CMD(aclnnCdistBackward, grad, x1, x2, cdist, acl_p, out);" in body


def test_a_parameter_first_deny_line_is_extracted():
    """aclnnAdaptiveMaxPool3d.md: "参数`indicesOut`的数据类型不支持INT64" for A2/A3. Before, only
    "不支持INT64数据类型" and "`x`不支持..." were read, so opdb gave the API int64 indices on
    every chip."""
    from opdb.sources.cann.extract_soc_dtypes import restrictions
    line = ("  - <term>Atlas A3 训练系列产品/Atlas A3 推理系列产品</term>、<term>Atlas A2 训练系列产品/"
            "Atlas A2 推理系列产品</term>：参数`indicesOut`的数据类型不支持INT64，")
    assert restrictions(line) == [{"line": 1, "products": [
        "Atlas A3 训练系列产品/Atlas A3 推理系列产品", "Atlas A2 训练系列产品/Atlas A2 推理系列产品"],
        "deny": ["INT64"], "param": "indicesOut"}]


def test_int64_indices_the_api_lacks_on_the_soc_are_allocated_int32(db):
    """AdaptiveMaxPool3dKernelNpuOpApi.cpp allocates `indices` int32 before Ascend950; the
    API's doc rejects int64 `indicesOut` on A2/A3. Before, the meta function's int64 went
    to the API on ascend910b."""
    r = prepare(db, "aclnnAdaptiveMaxPool3d", "torch", op="aten::adaptive_max_pool3d")
    body = _fn(r.files[ADAPTER.format("AdaptiveMaxPool3d")],
               "std::tuple<at::Tensor, at::Tensor> adaptive_max_pool3d(")
    assert ("self.options().dtype(std::get<1>(meta).scalar_type() == at::kLong ? at::kInt : "
            "std::get<1>(meta).scalar_type()));") in body
    assert "aclnnAdaptiveMaxPool3d.md:177" in body
    r950 = prepare(db, "aclnnAdaptiveMaxPool3d", "torch", op="aten::adaptive_max_pool3d",
                   soc="ascend950")
    assert "at::kInt" not in r950.files[ADAPTER.format("AdaptiveMaxPool3d")]


def test_a_deny_line_for_every_tensor_does_not_narrow_an_output(db):
    """aclnnThresholdBackward.md: "不支持INT64数据类型" on A2/A3 names no parameter: int64
    inputs are refused too, so the output keeps the meta function's dtype."""
    r = prepare(db, "aclnnThresholdBackward", "torch", op="aten::threshold_backward")
    assert "at::kInt" not in r.files[ADAPTER.format("ThresholdBackward")]
