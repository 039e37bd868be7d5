"""The eighth held-out paddle batch of docs/opgen.md (batch H, drawn by
benchmarks/opgen_draw_paddle.py --next, seed 20261125): the two mechanisms written after
its first pass, each applied by signatures or opdb facts, never by a kernel or API name.

- `reduce_all`: a phi reduction's `reduce_all` flag makes the dim list every dim of the
  input (PaddleCustomDevice reduce_min_kernel.cc MinRawKernel at 77090b64);
- routing: an API that upstream's adapter calls only as one step of a composite is
  replaced by the op's one-call API when opdb has a primary mapping with evidence that
  names the computation (`codegen.paddle_routing`).
The aclnn signatures are the real ones (hicann ops-math headers, as opdb has them), the phi
signatures Paddle 3.3.1's."""
from __future__ import annotations

import pytest

from codegen.paddle_target import build_paddle_kernel
from opdb.model import OpAclnnMapping, Param, Source
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

AMIN = _api("aclnnAmin", _t("self"), Param("dim", "const aclIntArray*", "input"),
            Param("keepDim", "bool", "input"), _t("out", "output"))
MIN_RAW = _op("min_raw", "void MinRawKernel(const Context& dev_ctx, const DenseTensor& x, "
                         "const IntArray& dims, bool keep_dim, bool reduce_all, "
                         "DenseTensor* out)")


def test_reduce_all_makes_the_dim_list_every_dim_of_the_input():
    # reduce_min_kernel.cc MinRawKernel: `if (reduce_all) { dim_vec = 0..rank-1;
    # aclnnAmin(x, dim_vec, ...) }`. Before, `reduce_all` was an unused-parameter TODO and
    # `dims` went as it is: with a partial `dims`, aclnn reduced too little for the
    # all-reduced `out` InferMeta shaped
    k = build_paddle_kernel(AMIN, MIN_RAW, framework_dtypes=("float32",))
    a = _args(k)["dim"]
    assert a.expr == "acl_dim_all"
    assert a.prelude == [
        "std::vector<int64_t> acl_dim_all = phi::IntArray(dims).GetData();",
        "if (reduce_all) {  // reduce_all: every dim of `x`",
        "  acl_dim_all.clear();",
        "  for (int64_t i = 0; i < x.dims().size(); ++i) acl_dim_all.push_back(i);",
        "}"]
    assert not [t for t in _todos(k) if "reduce_all" in t]


def test_reduce_all_reads_a_vector_dim_list_too():
    # logsumexp's axis is a std::vector<int> (converted to int64 first); the flag applies
    # to the converted list
    op = _op("logsumexp", "void LogsumexpKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const std::vector<int>& axis, bool keepdim, bool reduce_all, "
                          "DenseTensor* out)")
    lse = _api("aclnnLogSumExp", _t("self"), Param("dim", "const aclIntArray*", "input"),
               Param("keepDim", "bool", "input"), _t("out", "output"))
    a = _args(build_paddle_kernel(lse, op, framework_dtypes=("float32",)))["dim"]
    assert a.expr == "acl_dim_all"
    assert a.prelude[0].startswith("std::vector<int64_t> acl_dim(axis.begin(), axis.end());")
    assert a.prelude[1] == "std::vector<int64_t> acl_dim_all = phi::IntArray(acl_dim).GetData();"


def test_a_flag_of_another_name_or_no_dim_list_changes_nothing():
    # a bool under another name is not the reduction flag; an API without a dim list
    # (aclnnProd reduces everything) has nothing to widen: the TODO stays
    op = _op("min_like", "void K(const Context& dev_ctx, const DenseTensor& x, "
                         "const IntArray& dims, bool keep_dim, bool reduce_every, "
                         "DenseTensor* out)")
    k = build_paddle_kernel(AMIN, op, framework_dtypes=("float32",))
    assert _args(k)["dim"].expr == "dims"
    assert [u["name"] for u in k["unused"]] == ["reduce_every"]
    prod = _api("aclnnProd", _t("self"), Param("dtype", "aclDataType", "input"),
                _t("out", "output"))
    k = build_paddle_kernel(prod, MIN_RAW, framework_dtypes=("float32",))
    assert "reduce_all" in [u["name"] for u in k["unused"]]


# ---- routing a composite's step to the one-call API ------------------------------------

SRC = Source("PaddleCustomDevice", "77090b64", "backends/npu/kernels/k.cc", 1)
DERIVED = Source("opdb-derive", "cross-framework", "op_plugin/ops/opapi/KKernelNpuOpApi.cpp", 9)


class _DB:
    """The two opdb queries routing asks (mappings of an op, an API by name)."""

    def __init__(self, maps, apis):
        self.maps, self.apis = maps, set(apis)

    def mappings(self, framework=None, op=None, aclnn=None):
        return [m for m in self.maps if (op is None or m.op == op)
                and (aclnn is None or m.aclnn == aclnn)]

    def aclnn_api(self, name):
        return _api(name, _t("self"), _t("out", "output")) if name in self.apis else None


def _m(op, api, evidence, role="primary", conf=0.9, src=SRC):
    return OpAclnnMapping("paddle", op, api, evidence, conf, src, role=role)


# trap names: nothing in the rule may depend on them
STEP_MAPS = [_m("qux", "aclnnZed1p", "adapter", "composite"),
             _m("qux", "aclnnZedSub", "adapter", "composite"),
             _m("qux", "aclnnQux", "cross-framework", conf=0.63, src=DERIVED),
             _m("qux", "aclnnInplaceQux", "cross-framework", conf=0.63, src=DERIVED),
             _m("qux", "aclnnQux", "name", conf=0.5, src=Source("opdb-derive", "name", "", None))]


def test_a_composite_step_is_routed_to_the_ops_one_call_api():
    from codegen.paddle_routing import one_call_route

    db = _DB(STEP_MAPS, ["aclnnZed1p", "aclnnQux", "aclnnInplaceQux"])
    r = one_call_route(db, "paddle", "aclnnZed1p", _op("qux", "void K(const Context& dev_ctx, "
                                                       "const DenseTensor& x, DenseTensor* out)"))
    assert (r.api, r.step_role, r.evidence) == ("aclnnQux", "composite", "cross-framework")
    assert r.note("aclnnZed1p", "qux") == (
        "aclnnZed1p is a composite step of upstream's `qux` adapter, not the op; routed to "
        "aclnnQux, which computes it in one call (opdb cross-framework mapping, "
        "op_plugin/ops/opapi/KKernelNpuOpApi.cpp)")


@pytest.mark.parametrize("maps, why", [
    # the API is the op's own primary in upstream's adapter: kept
    ([_m("qux", "aclnnZed1p", "adapter", "primary"),
      _m("qux", "aclnnQux", "cross-framework", conf=0.63, src=DERIVED)], "primary"),
    # a step, but the only primary is a name match (`scale` -> aclnnScale is another
    # computation): kept, as the reviewed multi-call entries need it
    ([_m("qux", "aclnnZed1p", "adapter", "composite"),
      _m("qux", "aclnnQux", "name", conf=0.5)], "name-only primary"),
    # upstream's adapter does not call the API at all: the user's choice stands
    ([_m("qux", "aclnnQux", "cross-framework", conf=0.63, src=DERIVED)], "not a step"),
])
def test_no_route_without_both_facts(maps, why):
    from codegen.paddle_routing import one_call_route

    db = _DB(maps, ["aclnnZed1p", "aclnnQux"])
    op = _op("qux", "void K(const Context& dev_ctx, const DenseTensor& x, DenseTensor* out)")
    assert one_call_route(db, "paddle", "aclnnZed1p", op) is None, why


@pytest.fixture(scope="module")
def shipped():
    from opdb.query import OpDB
    return OpDB.open()


def test_batch_g_log_renders_the_one_call_api(shipped):
    # batch G drew `log` with aclnnLog1p (upstream: InplaceOne, Sub, Log1p = log(x));
    # opdb now gives Log1p the composite role and aclnnLog op-plugin's cross-framework
    # primary. Before this branch, the render computed log(1 + x)
    from codegen.resolve import resolve

    r = resolve(shipped, "aclnnLog1p", "paddle", op="log")
    assert r.api.name == "aclnnLog"
    assert "routed to aclnnLog" in r.how and r.alternatives[0] == "aclnnLog1p"
    # the torch target is not routed (its resolution is h9t6's; unchanged here)
    assert resolve(shipped, "aclnnLog1p", "torch", op="aten::log1p").api.name == "aclnnLog1p"


def test_held_out_rows_with_a_reviewed_multi_call_entry_keep_their_api(shipped):
    # scale's upstream composes aclnnMuls + aclnnAdds (reviewed kernel rules); its only
    # other primary is a name match (aclnnScale), so nothing routes it away
    from codegen.resolve import resolve

    assert resolve(shipped, "aclnnMuls", "paddle", op="scale").api.name == "aclnnMuls"
    assert resolve(shipped, "aclnnSubs", "paddle",
                   op="elementwise_pow_grad").api.name == "aclnnSubs"


# ---- batch I (drawn after H's fixes): the general mechanisms written after it ----------

MUL = _api("aclnnMul", _t("self"), _t("other"), _t("out", "output"))
MULTIPLY_RAW = _op("multiply_raw", "void MultiplyRawKernel(const Context& dev_ctx, "
                                   "const DenseTensor& x, const DenseTensor& y, int axis, "
                                   "DenseTensor* out)")


def test_axis_aligns_the_lower_rank_operand_by_a_view():
    # Paddle's element-wise `axis` (ElementwiseRawInferMeta; elementwise_mul_kernel.cc
    # MultiplyRawKernel broadcasts by hand unless the ranks line up). Before, `axis` was an
    # unused-parameter TODO and aclnn aligned the trailing dims whatever `axis` said
    k = build_paddle_kernel(MUL, MULTIPLY_RAW, framework_dtypes=("float32",))
    a = _args(k)
    assert a["self"].expr == "acl_self_ax" and a["other"].expr == "acl_other_ax"
    assert a["other"].prelude == [
        "phi::DenseTensor acl_other_ax(y);",
        "if (y.dims().size() < x.dims().size()) {  // axis: Paddle aligns `y`'s dims at "
        "`axis`, aclnn at the last dim",
        "  const int64_t acl_other_ax_lo = y.dims().size(), acl_other_ax_hi = x.dims().size();",
        "  const int64_t acl_other_ax_at = axis < 0 ? acl_other_ax_hi - acl_other_ax_lo + axis "
        "+ 1 : axis;",
        "  if (acl_other_ax_hi - acl_other_ax_at - acl_other_ax_lo > 0) {",
        "    std::vector<int64_t> acl_other_ax_d = phi::vectorize(acl_other_ax.dims());",
        "    acl_other_ax_d.insert(acl_other_ax_d.end(), acl_other_ax_hi - acl_other_ax_at - "
        "acl_other_ax_lo, 1);",
        "    acl_other_ax.Resize(phi::make_ddim(acl_other_ax_d));",
        "  }",
        "}"]
    assert not [u for u in k["unused"] if u["name"] == "axis"]


def _paddle_axis_view(x_shape, y_shape, axis):
    """The view's dims of `y`, as the generated C++ computes them (only the lower-rank
    operand is viewed; Paddle's CPU kernels reject an axis below -1)."""
    lo, hi = len(y_shape), len(x_shape)
    if lo >= hi:
        return list(y_shape)
    at = hi - lo + axis + 1 if axis < 0 else axis
    return list(y_shape) + [1] * max(hi - at - lo, 0)


@pytest.mark.parametrize("x_shape, y_shape, axis", [
    ((2, 3, 4), (3,), 1), ((2, 3, 4), (2, 3), 0), ((2, 3, 4), (4,), -1),
    ((2, 3, 4, 5), (3, 4), 1), ((2, 3, 4), (2, 1, 4), 0)])
def test_the_view_broadcasts_as_paddles_axis(x_shape, y_shape, axis):
    # the view's trailing alignment (numpy's, aclnn's) gives Paddle's axis alignment:
    # checked against Paddle 3.3.1's own elementwise_mul with `axis` on the CPU
    import numpy as np
    import paddle

    rng = np.random.default_rng(0)
    x = rng.random(x_shape).astype("float32")
    y = rng.random(y_shape).astype("float32")
    want = paddle._legacy_C_ops.elementwise_mul(paddle.to_tensor(x), paddle.to_tensor(y),
                                                "axis", axis).numpy()
    got = x * y.reshape(_paddle_axis_view(x_shape, y_shape, axis))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_axis_views_need_two_tensor_inputs_and_a_forward_kernel():
    # a unary call (aclnnCumsum-like, `axis` would be its dim) and a grad kernel (a
    # broadcast product's grad reduces: a composite) get no views
    grad = _op("multiply_grad", "void G(const Context& dev_ctx, const DenseTensor& x, "
                                "const DenseTensor& y, const DenseTensor& out_grad, int axis, "
                                "DenseTensor* x_grad, DenseTensor* y_grad)", kind="backward")
    k = build_paddle_kernel(MUL, grad, framework_dtypes=("float32",))
    assert not any(a.expr.endswith("_ax") for a in k["args"])
    neg = _api("aclnnNeg", _t("self"), _t("out", "output"))
    one = _op("neg_like", "void K(const Context& dev_ctx, const DenseTensor& x, int axis, "
                          "DenseTensor* out)")
    k = build_paddle_kernel(neg, one, framework_dtypes=("float32",))
    assert _args(k)["self"].expr == "x" and "axis" in [u["name"] for u in k["unused"]]


def test_an_input_of_another_shape_is_not_copied_into_the_inplace_output():
    # full_batch_size_like (batch I): aclnnInplaceFillScalar's selfRef is fed by `out`, and
    # `x` is only a shape reference (InferMeta gives out `shape` with x's batch dim);
    # PaddleCustomDevice full_kernel.cc allocates and fills `out`. Before, x was copied into
    # out unconditionally, which resized out to x's dims
    fill = _api("aclnnInplaceFillScalar", _t("selfRef", "inout"),
                Param("value", "const aclScalar*", "input"))
    op = _op("full_batch_size_like", "void FullBatchSizeLikeKernel(const Context& dev_ctx, "
                                     "const DenseTensor& x, const std::vector<int>& shape, "
                                     "const Scalar& val, DataType dtype, int x_batch_size_dim, "
                                     "int out_batch_size_dim, DenseTensor* out)")
    # (since ws/h9p13 aclnnInplaceFillScalar, which overwrites every element, gets no copy
    # at all; the guard is checked on an in-place API that reads its tensor)
    a = _args(build_paddle_kernel(fill, op, framework_dtypes=("float32",)))["selfRef"]
    assert not any("phi::Copy" in ln for ln in a.prelude)
    reads = _api("aclnnInplaceFillDiagonal", _t("selfRef", "inout"),
                 Param("fillValue", "const aclScalar*", "input"))
    a = _args(build_paddle_kernel(reads, op, framework_dtypes=("float32",)))["selfRef"]
    assert a.prelude[0] == "if (out->data() != x.data() && out->dims() == x.dims()) {"


def test_expand_as_size_is_the_outputs_dims():
    # expand_as_kernel.cc passes target_shape (= ExpandAsInferMeta's out dims) as size; the
    # reviewed aclnnExpand rule now takes `target_shape` where expand has `shape`
    expand = _api("aclnnExpand", _t("self"), Param("size", "const aclIntArray*", "input"),
                  _t("out", "output"))
    op = _op("expand_as", "void ExpandAsKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const paddle::optional<DenseTensor>& y, "
                          "const std::vector<int64_t>& target_shape, DenseTensor* out)")
    a = _args(build_paddle_kernel(expand, op, framework_dtypes=("float32",)))["size"]
    assert a.prelude == ["std::vector<int64_t> acl_size = phi::vectorize(out->dims());  "
                         "// `shape` with its -1 entries resolved: InferMeta's out shape"]


def test_with_no_primary_the_step_named_like_the_kernel_is_the_target():
    # the interpolate family (interpolate_kernel.cc) dispatches on the mode, so opdb calls
    # both APIs of bilinear_interp_grad's adapter composite and has no primary; the step
    # whose name shares a word with the kernel's is the one that computes it (trap names)
    from codegen.paddle_routing import one_call_route

    maps = [_m("quux_mode_grad", "aclnnWarpOtherBackward", "adapter", "composite"),
            _m("quux_mode_grad", "aclnnWarpQuuxBackward", "adapter", "composite"),
            _m("quux_mode_grad", "aclnnQuuxTable", "adapter", "composite")]
    db = _DB(maps, ["aclnnWarpOtherBackward", "aclnnWarpQuuxBackward", "aclnnQuuxTable"])
    op = _op("quux_mode_grad", "void G(const Context& dev_ctx, const DenseTensor& x, "
                               "DenseTensor* x_grad)", kind="backward")
    r = one_call_route(db, "paddle", "aclnnWarpOtherBackward", op)
    # aclnnQuuxTable shares `quux` too but is a forward API inside a grad kernel
    assert (r.api, r.evidence) == ("aclnnWarpQuuxBackward", "adapter")
    assert "shares `quux` with the kernel's" in r.source
    # the requested step already names the kernel: kept
    assert one_call_route(db, "paddle", "aclnnWarpQuuxBackward", op) is None
    # two steps name it: no guess
    db2 = _DB(maps + [_m("quux_mode_grad", "aclnnQuuxModeBackward", "adapter", "composite")],
              ["aclnnWarpOtherBackward", "aclnnWarpQuuxBackward", "aclnnQuuxModeBackward"])
    assert one_call_route(db2, "paddle", "aclnnWarpOtherBackward", op) is None


def test_batch_h_and_i_interpolate_rows_render_their_modes_api(shipped):
    from codegen.resolve import resolve

    r = resolve(shipped, "aclnnUpsampleNearest2dBackward", "paddle", op="bilinear_interp_grad")
    assert r.api.name == "aclnnUpsampleBilinear2dBackward"
    assert resolve(shipped, "aclnnUpsampleNearest2d", "paddle",
                   op="bilinear_interp").api.name == "aclnnUpsampleBilinear2d"
    # batch G's nearest_interp keeps its own mode's API; composites whose steps share no
    # word with the kernel (elementwise_pow_grad, reciprocal_grad) are not routed
    assert resolve(shipped, "aclnnUpsampleNearest2d", "paddle",
                   op="nearest_interp").api.name == "aclnnUpsampleNearest2d"
    assert resolve(shipped, "aclnnMul", "paddle", op="reciprocal_grad").api.name == "aclnnMul"


def test_an_adapter_primary_not_named_like_the_op_is_no_target(shipped):
    # dropout_grad: aclnnDropoutDoMask computes it and is its primary (opdb.roles rule 1b,
    # the kernel's head word); aclnnInplaceMuls, the `downscale_in_infer` branch's scaling,
    # is an auxiliary step and routes to DoMask
    from codegen.resolve import resolve

    assert resolve(shipped, "aclnnDropoutDoMask", "paddle",
                   op="dropout_grad").api.name == "aclnnDropoutDoMask"
    assert resolve(shipped, "aclnnInplaceMuls", "paddle",
                   op="dropout_grad").api.name == "aclnnDropoutDoMask"
    # tril_triu_grad's two APIs are both primary (`lower` picks one): neither is routed
    assert resolve(shipped, "aclnnTriu", "paddle", op="tril_triu_grad").api.name == "aclnnTriu"
    # a related primary is a target, the base API before its rank variant
    assert resolve(shipped, "aclnnInplaceFillScalar", "paddle",
                   op="nll_loss_grad").api.name == "aclnnNLLLossBackward"
    assert resolve(shipped, "aclnnTriu", "paddle", op="tril").api.name == "aclnnTril"
