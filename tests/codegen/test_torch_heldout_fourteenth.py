"""Mechanisms found by scoring the fourteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 14 -n 12 --before 142`) against op-plugin
517f2e7d (docs/opgen.md, "Fourteenth sample"): class 10, a list limit op-plugin keeps in a
constant of the adapter file itself (not in ForeachConstants.h), so the API got no list
route and no split. Nothing keys on an API or op name in code; the tests name the
upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

SRC = """namespace op_api {
constexpr int MY_MAX_TENSOR_COUNT = 24;
void _split_a(const at::TensorList x, at::TensorList r) {
  size_t max_tensor_count = MY_MAX_TENSOR_COUNT; // a file constant
  EXEC_NPU_CMD(aclnnA, x, r);
}
std::vector<at::Tensor> f(at::TensorList x) {
  if (!at::native::can_use_fast_route(x)) { return slow(x); }
}
}  // namespace op_api
"""


def test_a_limit_in_the_files_own_constant_is_extracted():
    """ForeachNormKernelOpApi.cpp: `constexpr int FOREACH_NORM_MAX_TENSOR_COUNT = 24;`
    then `size_t max_tensor_count = FOREACH_NORM_MAX_TENSOR_COUNT;`. Before, only
    ForeachConstants.h's names were resolved and the row was dropped."""
    rows = rows_of_file(SRC, "op_plugin/ops/opapi/X.cpp", {"SINGLE": 48})
    assert [(r["api"], r["inplace"], r["out_of_place"], r["fast_route"], r["source"]["line"])
            for r in rows] == [("aclnnA", 24, 24, True, 4)]
    # a header constant of the same name loses to the file's own, as in C++
    assert rows_of_file(SRC, "p", {"MY_MAX_TENSOR_COUNT": 48})[0]["inplace"] == 24


def test_foreach_norm_has_upstreams_limit_in_opdb():
    lim = tensors_per_call("aclnnForeachNorm")
    assert lim is not None and (lim.inplace, lim.out_of_place, lim.fast_route) == (24, 24, True)
    assert lim.where.endswith("op_plugin/ops/opapi/ForeachNormKernelOpApi.cpp:71")


def test_foreach_norm_routes_lists_to_torch_and_splits_at_24(db):
    """ForeachNormKernelOpApi.cpp: lists `can_use_fast_route` rejects (and dtypes the API
    lacks) go to `foreach_tensor_norm_slow(self, scalar, opt_dtype)`; the API takes at
    most 24 tensors a call. Before, every list went to one call of the API."""
    r = prepare(db, "aclnnForeachNorm", "torch", op="aten::_foreach_norm.Scalar")
    text = r.files[ADAPTER.format("ForeachNorm")]
    body = _fn(text, "std::vector<at::Tensor> _foreach_norm(")
    assert "at::native::check_foreach_api_restrictions(self);" in body
    assert "if (!at::native::can_use_fast_route({self}, ord) || " in body
    assert "return at::native::foreach_tensor_norm_slow(self, ord, dtype);" in body
    assert "opgen_i += 24" in body
    assert "EXEC_NPU_CMD(aclnnForeachNorm, opgen_x_part, acl_scalar, opgen_out_part);" in body


def test_foreach_norm_casts_the_list_to_dtype_first(db):
    """ForeachNormKernelOpApi.cpp: with `opt_dtype` set, every tensor is cast to it
    (`_npu_dtype_cast`) before aclnnForeachNorm, which takes no dtype; torch's `dtype`
    means the same ("the input is cast to dtype before the operation"). Before, `dtype`
    was unpassed (a TODO): the output was in `dtype` and the API read the list as is."""
    r = prepare(db, "aclnnForeachNorm", "torch", op="aten::_foreach_norm.Scalar")
    body = _fn(r.files[ADAPTER.format("ForeachNorm")], "std::vector<at::Tensor> _foreach_norm(")
    assert "self_dtype_vec.push_back(dtype.has_value() ? t.to(*dtype) : t);" in body
    assert "auto opgen_x_part = self_dtype.slice(opgen_i, opgen_len);" in body
    assert "is not passed to aclnnForeachNorm" not in body
    assert not r.todos


def test_a_tensor_input_is_cast_and_tensor_options_are_left_alone(db):
    """The same rule on one tensor (`mean(self, dtype)` on aclnnMeanV2, which has no
    dtype); a factory op's `dtype` is its TensorOptions (allocation), never a cast."""
    r = prepare(db, "aclnnMeanV2", "torch", op="aten::mean")
    body = _fn(r.files[ADAPTER.format("Mean")], "at::Tensor mean(")
    assert "at::Tensor self_dtype = dtype.has_value() ? self.to(*dtype) : self;" in body
    assert "EXEC_NPU_CMD(aclnnMeanV2, self_dtype, " in body
    r = prepare(db, "aclnnRange", "torch", op="aten::range")
    assert ".to(*dtype)" not in "".join(r.files.values())


def test_an_output_dtype_argument_is_never_a_cast(db):
    """`npu_group_quant`'s `dst_type` and `_scaled_mm`'s `out_dtype` name the output's
    dtype: casting the input to them would quantize it before the API runs."""
    for api, op in (("aclnnGroupQuant", "npu::npu_group_quant"),
                    ("aclnnQuantMatmulV5", "aten::_scaled_mm")):
        r = prepare(db, api, "torch", op=op)
        assert "takes no dtype" not in "".join(r.files.values()), api
