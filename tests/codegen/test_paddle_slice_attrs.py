"""Paddle's slice attributes (docs/opgen.md "Batch J", classes 2 and 6 of "Why paddle
first passes fail"): `decrease_axis` (InferMeta drops those dims of `out`, the aclnn API
writes them: `out` goes as a view with the 1s put back), the legacy `starts` -1 / `ends` 0
/ `infer_flags` -1 "last element" (phi slice_kernel_impl.h SliceCompute), both by the
attribute names, and aclnnSliceV2's `steps` (ones per axis; a reviewed rule scoped to the
API). PaddleCustomDevice slice_kernel.cc SliceRawKernel (77090b64) does all three. Before,
batch J's slice passed a nullptr `steps` and `out` with its decreased dims (score 1)."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

_ARRAY = "const aclIntArray*"
SLICE_V2 = _api("aclnnSliceV2", _t("self"), Param("starts", _ARRAY, "input"),
                Param("ends", _ARRAY, "input"), Param("axes", _ARRAY, "input"),
                Param("steps", _ARRAY, "input"), _t("out", "output"))
SLICE = _op("slice", "void SliceKernel(const Context& dev_ctx, const DenseTensor& input, "
                     "const std::vector<int64_t>& axes, const IntArray& starts, "
                     "const IntArray& ends, const std::vector<int64_t>& infer_flags, "
                     "const std::vector<int64_t>& decrease_axis, DenseTensor* out)")


def test_out_goes_with_the_decreased_dims_put_back():
    k = build_paddle_kernel(SLICE_V2, SLICE, framework_dtypes=("float32",))
    out = _args(k)["out"]
    # the 0-d view (zero_dim_views) wraps it: acl_out_1d is a view of acl_out_undecreased
    assert "phi::DenseTensor acl_out_1d(acl_out_undecreased);" in out.prelude
    assert out.prelude[:2] == [
        "phi::DenseTensor acl_out_undecreased(*out);",
        "if (!decrease_axis.empty()) {  // decrease_axis: InferMeta dropped these dims (each 1); "
        "the API writes them"]
    assert ("  for (int64_t acl_out_undecreased_a : acl_out_undecreased_ax) "
            "acl_out_undecreased_d.insert(acl_out_undecreased_d.begin() + acl_out_undecreased_a, 1);"
            ) in out.prelude


def test_the_legacy_last_element_end_is_the_inputs_extent():
    ends = _args(build_paddle_kernel(SLICE_V2, SLICE, framework_dtypes=("float32",)))["ends"]
    assert ends.expr == "acl_ends_last"
    assert ends.prelude[0] == "std::vector<int64_t> acl_ends_last = phi::IntArray(ends).GetData();"
    assert "    acl_ends_last[acl_ends_last_i] = input.dims()[acl_ends_last_ax];" in ends.prelude


def test_steps_are_ones_and_nothing_is_left_unused():
    k = build_paddle_kernel(SLICE_V2, SLICE, framework_dtypes=("float32",))
    assert _args(k)["steps"].prelude == [
        "std::vector<int64_t> acl_steps(axes.size(), 1);  // one step of 1 per sliced axis: "
        "phi's slice has no strides"]
    assert _todos(k) == []


def test_without_decrease_axis_nothing_changes():
    # a kernel with starts/ends/axes but no decrease_axis: out and ends as they are
    op = _op("crop", "void CropKernel(const Context& dev_ctx, const DenseTensor& input, "
                     "const std::vector<int64_t>& axes, const IntArray& starts, "
                     "const IntArray& ends, const std::vector<int64_t>& infer_flags, "
                     "DenseTensor* out)")
    a = _args(build_paddle_kernel(SLICE_V2, op, framework_dtypes=("float32",)))
    assert not [x for x in a["out"].prelude if "undecreased" in x] and a["ends"].expr == "ends"
