"""A grad kernel asked for with one step of its forward API's gradient identity renders the
whole identity (docs/opgen.md "Batch K after the fixes", class 8 of "Why paddle first
passes fail"): `divide_grad` asked for with aclnnNeg used to write -x into dx and leave dy
unwritten (batch K scored 0); `add_grad` with aclnnReduceSum reduced x into dx (batch J,
0). The facts: Paddle's backward YAML (the forward op), opdb (its primary API and the phi
tensors that API's parameters take), opdb/sources/grad_identities.yaml (the gradient per
forward API, keyed by API, not by kernel)."""
from __future__ import annotations

import pytest

from codegen.paddle_grad_identity import (Node, _arity_checked, _calls, _input_kinds,
                                          _kinds_fit, _leaves, _rebind, grad_identity,
                                          identities, parse_expr)


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def _cc(db, api, kernel):
    from codegen.api import prepare
    r = prepare(db, api, "paddle", op=kernel, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r


def test_parse_expr_nests_calls_and_leaves():
    n = parse_expr("Neg(Mul(Div(grad, other), out))")
    assert n.api == "aclnnNeg" and n.args[0].api == "aclnnMul"
    assert _calls(n) == ["aclnnNeg", "aclnnMul", "aclnnDiv"]
    assert _leaves(n) == ["grad", "other", "out"]
    assert parse_expr("grad") == Node(leaf="grad")
    n = parse_expr("Muls(PowTensorScalar(out, 3), -0.5)")
    assert n.args[1] == Node(const="-0.5") and _leaves(n) == ["out"]
    assert _arity_checked([("g", n)]) == {"aclnnMuls": ("tensor", "scalar"),
                                           "aclnnPowTensorScalar": ("tensor", "scalar")}
    for bad in ("Mul(grad, out", "Mul(grad out)", "Mul(grad), x", "", "Mul(grad; out)"):
        with pytest.raises(ValueError):
            parse_expr(bad)


def test_every_identity_names_real_parameters_and_arities(db):
    # a typo in the table (aclnnCos names its input `input`, not `self`) would silently
    # keep the identity from binding: every key and leaf is a parameter of the API
    from codegen.paddle_target import fw_params
    for api_name, ent in identities().items():
        if api_name.startswith("op:"):  # keyed by a forward phi op: its kernel's names
            fwp = fw_params(db.framework_op("paddle", api_name[3:]))
            ins = [f.name for f in fwp if not f.is_output and f.kind == "tensor"]
            attrs = {f.name: f.kind for f in fwp if f.kind in ("int_array", "scalar", "float")}
            # inputs Paddle gives no gradient (label_smooth's prior_dist) may be left out
            assert ent["grads"] and set(ent["grads"]) <= set(ins), api_name
            for expr in list(ent["grads"].values()) + list(ent["transposed"].values()):
                assert set(_leaves(expr)) <= set(ins) | set(attrs) | {"grad"}, api_name
                _rebind(expr, {x: x for x in _leaves(expr)}, attrs)  # kinds bind
            continue
        api = db.aclnn_api(api_name)
        assert api is not None, api_name
        ins = [p.name for p in api.params if p.role == "input" and "Tensor" in p.ctype]
        outs = [p.name for p in api.params if p.role == "output"]
        # numbers: an aclScalar or an integer (aclnnCat's `dim`, a phi Scalar `axis`)
        attrs = {p.name: "int_array" if "IntArray" in p.ctype else "scalar"
                 for p in api.params if p.role == "input"
                 and ("IntArray" in p.ctype or "aclScalar" in p.ctype
                      or p.ctype.strip() in ("int64_t", "int32_t"))}
        attrs.update({p.name: "tensor_list" for p in api.params
                      if p.role == "input" and "TensorList" in p.ctype})
        assert set(ent["grads"]) == set(ins), api_name
        for expr in list(ent["grads"].values()) + list(ent["transposed"].values()):
            assert set(_leaves(expr)) <= set(ins) | set(outs) | set(attrs) | {"grad"}, api_name
            for call in _calls(expr):
                step = db.aclnn_api(call)
                assert step is not None, call
            bound = _rebind(expr, {x: x for x in _leaves(expr)}, attrs)
            for call, kinds in _arity_checked([("g", bound)], consts=True).items():
                assert _kinds_fit(kinds, _input_kinds(db.aclnn_api(call))), (api_name, call)


def test_divide_grad_binds_the_forward_tensors(db):
    gi = grad_identity(db, db.aclnn_api("aclnnNeg"), db.framework_op("paddle", "divide_grad"))
    assert gi is not None and gi.forward_api == "aclnnDiv" and gi.incoming == "dout"
    grads = dict(gi.grads)
    assert grads["dx"] == parse_expr("Div(dout, y)")
    assert grads["dy"] == parse_expr("Neg(Mul(Div(dout, y), out))")
    assert gi.broadcast and gi.axis == "axis" and set(gi.inputs) == {"x", "y"}


def test_no_identity_for_a_backward_api_another_api_or_a_forward(db):
    op = db.framework_op("paddle", "divide_grad")
    assert grad_identity(db, db.aclnn_api("aclnnExp"), op) is None  # not a step
    assert grad_identity(db, db.aclnn_api("aclnnSiluBackward"),
                         db.framework_op("paddle", "silu_grad")) is None
    assert grad_identity(db, db.aclnn_api("aclnnDiv"),
                         db.framework_op("paddle", "divide")) is None
    # square's forward maps to aclnnMul with x twice: `other` is no phi tensor of its own
    assert grad_identity(db, db.aclnn_api("aclnnMul"),
                         db.framework_op("paddle", "square_grad")) is None


def test_divide_grad_renders_both_gradients_summed_back(db):
    cc, r = _cc(db, "aclnnNeg", "divide_grad")
    assert "EXEC_NPU_CMD(aclnnDiv, dev_ctx, dout, y_al, dx_full);" in cc
    assert "EXEC_NPU_CMD(aclnnMul, dev_ctx, dy_t1, out, dy_t2);" in cc
    assert "EXEC_NPU_CMD(aclnnNeg, dev_ctx, dy_t2, dy_full);" in cc
    assert cc.count("EXEC_NPU_CMD(aclnnReduceSum, dev_ctx,") == 2
    assert "EXEC_NPU_CMD(aclnnNeg, dev_ctx, x," not in cc
    # the README says what the body is instead of an empty argument table
    assert "aclnnNeg is one step of the gradient of aclnnDiv" in r.files["README.md"]
    assert "| # | aclnn param |" not in r.files["README.md"]
    # only x is left unread (its shape is dx's): no TODO for dout, y, out or dy
    assert [t for t in r.todos if "`" in t and "framework param" in t] == [
        t for t in r.todos if "`x`" in t]


def test_add_grad_copies_or_sums_and_writes_the_inplace_gradient_last(db):
    cc, r = _cc(db, "aclnnReduceSum", "add_grad")
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *dx, dout);" in cc
    assert "EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, dout, dy_axes, dy_keep_dims, dy_dtype, dy_view);" in cc
    # backward YAML: inplace (out_grad -> x_grad): dy reads dout before dx may overwrite it
    assert cc.index("if (dy) {") < cc.index("if (dx) {")


@pytest.mark.parametrize("kernel,api,calls", [
    ("reciprocal_grad", "aclnnMul", ["aclnnMul, dev_ctx, dout, out, dx_t1",
                                     "aclnnMul, dev_ctx, dx_t1, out, dx_t2",
                                     "aclnnNeg, dev_ctx, dx_t2, *dx"]),
    ("abs_grad", "aclnnInplaceMul", ["aclnnSign, dev_ctx, x, dx_t1",
                                     "aclnnMul, dev_ctx, dout, dx_t1, *dx"]),
    ("rsqrt_grad", "aclnnPowTensorScalar", ["aclnnPowTensorScalar, dev_ctx, out, dx_c1, dx_t2",
                                            "aclnnMuls, dev_ctx, dx_t2, dx_c3, dx_t4",
                                            "aclnnMul, dev_ctx, dout, dx_t4, *dx"]),
    ("sqrt_grad", "aclnnMuls", ["aclnnMuls, dev_ctx, out, dx_c1, dx_t2",
                                "aclnnDiv, dev_ctx, dout, dx_t2, *dx"]),
    ("log_grad", "aclnnDiv", ["aclnnDiv, dev_ctx, dout, x, *dx"]),
    ("cos_grad", "aclnnSin", ["aclnnSin, dev_ctx, x, dx_t1",
                              "aclnnMul, dev_ctx, dout, dx_t1, dx_t2",
                              "aclnnNeg, dev_ctx, dx_t2, *dx"]),
])
def test_unary_identities(db, kernel, api, calls):
    cc, r = _cc(db, api, kernel)
    assert "phi::Scalar dx_c1(3.0);" in cc if kernel == "rsqrt_grad" else True
    for c in calls:
        assert f"EXEC_NPU_CMD({c});" in cc, c
    assert "aclnnReduceSum" not in cc and not r.todos


@pytest.mark.parametrize("text,says", [
    ("identities: [{api: aclnnX, grads: {self: grad}}]", "evidence"),
    ("identities: [{api: X, grads: {self: grad}, evidence: e}]", "aclnn"),
    ("identities: [{api: aclnnX, grads: {self: 'Mul(grad'}, evidence: e}]", "bad gradient"),
    ("identities: [{api: aclnnX, grads: {}, evidence: e}]", "grads"),
    ("identities: [{api: aclnnX, grad: {self: grad}, evidence: e}]", "unknown keys"),
    ("identities: [{api: aclnnX, grads: {self: grad}, evidence: e},"
     " {api: aclnnX, grads: {self: grad}, evidence: e}]", "twice"),
])
def test_a_malformed_table_is_a_one_line_error(text, says):
    from codegen.paddle_grad_identity import load_identities
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError) as exc:
        load_identities(text, "t.yaml")
    assert says in str(exc.value) and "\n" not in str(exc.value) and "t.yaml" in str(exc.value)


# batch L: a gradient that is the forward API again with a host step over an attribute
# (roll_grad: aclnnRoll of dout by the negated shifts; batch L scored 1, rolling x by
# +shifts)
def test_host_steps_parse_over_attributes_only():
    n = parse_expr("Roll(grad, negated(shifts), dims)")
    assert n.args[1] == Node(host="negated", args=(Node(leaf="shifts"),))
    assert _leaves(n) == ["grad", "shifts", "dims"] and _calls(n) == ["aclnnRoll"]
    for bad in ("Roll(grad, reversed(shifts), dims)", "Roll(grad, negated(Neg(grad)), dims)",
                "Roll(grad, negated(shifts, dims), dims)", "Roll(grad, negated(2), dims)"):
        with pytest.raises(ValueError):
            parse_expr(bad)


def test_roll_grad_rolls_the_incoming_gradient_back(db):
    gi = grad_identity(db, db.aclnn_api("aclnnRoll"), db.framework_op("paddle", "roll_grad"))
    assert gi is not None and gi.forward_api == "aclnnRoll" and gi.incoming == "out_grad"
    assert _arity_checked(gi.grads) == {"aclnnRoll": ("tensor", "int_array", "int_array")}
    cc, r = _cc(db, "aclnnRoll", "roll_grad")
    assert ("    std::vector<int64_t> x_grad_h1 = phi::IntArray(shifts).GetData();\n"
            "    for (int64_t& v : x_grad_h1) v = -v;  // shifts, negated\n"
            "    EXEC_NPU_CMD(aclnnRoll, dev_ctx, out_grad, x_grad_h1, axis, *x_grad);") in cc
    assert [t for t in r.todos if "not read" in t] == [
        "TODO(opgen): framework param `x` (const DenseTensor&) is not read: the gradient "
        "identity of aclnnRoll does not need it (check)"]


def test_the_forward_roll_is_no_identity(db):
    assert grad_identity(db, db.aclnn_api("aclnnRoll"), db.framework_op("paddle", "roll")) is None


# batch M: the gradient of aclnnPowTensorScalar reads its Scalar attribute, once less one
# on the host (pow_grad asked for with aclnnMuls; batch M scored 0, writing x * factor)
def test_scalar_host_steps_take_a_scalar_attribute_only():
    n = parse_expr("PowTensorScalar(self, decremented(exponent))")
    assert n.args[1] == Node(host="decremented", args=(Node(leaf="exponent"),))
    bound = _rebind(n, {"self": "x", "exponent": "factor"}, {"factor": "scalar"})
    assert bound.args[1].attr == "scalar"
    assert _arity_checked([("g", bound)]) == {"aclnnPowTensorScalar": ("tensor", "scalar")}
    with pytest.raises(KeyError):  # an int list is not a Scalar
        _rebind(n, {"self": "x", "exponent": "shifts"}, {"shifts": "int_array"})
    with pytest.raises(KeyError):  # nor is a tensor
        _rebind(n, {"self": "x", "exponent": "y"}, {})
    with pytest.raises(KeyError):  # negated reads an int list, not a Scalar
        _rebind(parse_expr("Roll(grad, negated(s), d)"), {"grad": "g", "s": "f", "d": "a"},
                {"f": "scalar", "a": "int_array"})


def test_pow_grad_is_dout_times_factor_times_x_to_the_factor_less_one(db):
    gi = grad_identity(db, db.aclnn_api("aclnnMuls"), db.framework_op("paddle", "pow_grad"))
    assert gi is not None and gi.forward_api == "aclnnPowTensorScalar"
    assert _arity_checked(gi.grads) == {"aclnnMul": ("tensor", "tensor"),
                                        "aclnnMuls": ("tensor", "scalar"),
                                        "aclnnPowTensorScalar": ("tensor", "scalar")}
    cc, r = _cc(db, "aclnnMuls", "pow_grad")
    assert ("    phi::Scalar dx_h1(factor.to<double>() - 1.0);  // factor - 1\n"
            "    phi::DenseTensor dx_t2;\n"
            "    dx_t2.set_meta(dout.meta());\n"
            "    dev_ctx.Alloc(&dx_t2, dx_t2.dtype());\n"
            "    EXEC_NPU_CMD(aclnnPowTensorScalar, dev_ctx, x, dx_h1, dx_t2);\n") in cc
    assert "    EXEC_NPU_CMD(aclnnMuls, dev_ctx, dx_t2, factor, dx_t3);\n" in cc
    assert "    EXEC_NPU_CMD(aclnnMul, dev_ctx, dout, dx_t3, *dx);\n" in cc
    assert r.todos == []
    # every step of the identity renders it; the forward and other kernels do not get it
    for step in ("aclnnPowTensorScalar", "aclnnMul"):
        assert _cc(db, step, "pow_grad")[0].count("EXEC_NPU_CMD(") == 3
    assert grad_identity(db, db.aclnn_api("aclnnPowTensorScalar"),
                         db.framework_op("paddle", "pow")) is None


# batch G's elementwise_pow_grad (asked for with aclnnSubs, the y - 1 step; scored 0): the
# gradient of aclnnPowTensorTensor, whose scratch y - 1 has y's shape, not dout's
def test_elementwise_pow_grad_scratches_take_the_shape_they_are_computed_from(db):
    gi = grad_identity(db, db.aclnn_api("aclnnSubs"),
                       db.framework_op("paddle", "elementwise_pow_grad"))
    assert gi is not None and gi.forward_api == "aclnnPowTensorTensor" and gi.broadcast
    cc, r = _cc(db, "aclnnSubs", "elementwise_pow_grad")
    assert ("    phi::DenseTensor dx_t3;\n"
            "    dx_t3.set_meta(y.meta());\n"
            "    dev_ctx.Alloc(&dx_t3, dx_t3.dtype());\n"
            "    EXEC_NPU_CMD(aclnnSubs, dev_ctx, y, dx_c1, dx_c2, dx_t3);\n"
            "    phi::DenseTensor dx_t4;\n"
            "    dx_t4.set_meta(dout.meta());\n") in cc
    assert "    EXEC_NPU_CMD(aclnnMul, dev_ctx, dout, dx_t5, dx_full);\n" in cc
    assert ("    dy_t2.set_meta(x.meta());\n    dev_ctx.Alloc(&dy_t2, dy_t2.dtype());\n"
            "    EXEC_NPU_CMD(aclnnLog, dev_ctx, x, dy_t2);\n") in cc
    assert "EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, dy_full, dy_axes" in cc and r.todos == []
    def calls(text):
        return [ln for ln in text.splitlines() if "EXEC_NPU_CMD(" in ln]
    for step in ("aclnnPowTensorTensor", "aclnnLog", "aclnnInplaceMul"):
        assert calls(_cc(db, step, "elementwise_pow_grad")[0]) == calls(cc), step
    # a one-input forward's scratches keep dout's shape (the input's, by InferMeta)
    assert "dx_t1.set_meta(dout.meta());" in _cc(db, "aclnnMul", "cos_grad")[0]


def _op(db, api, kernel):
    """The op as `opgen` resolves it (mean_grad's phi signature is PaddleCustomDevice's)."""
    from codegen.resolve import resolve
    return resolve(db, api, "paddle", op=kernel).op


# batch K's mean_grad (asked for with aclnnMul, scored 0: x * out_grad): the gradient of a
# reduction, out_grad broadcast back over the reduced dims and scaled by 1 / their count.
# mean_grad's kernel names the dim list `axes` where mean's names it `dims` (one YAML arg,
# `axis`): bound through the op YAML, not by name
def test_mean_grad_fills_one_over_the_count_and_multiplies_by_the_kept_dims_view(db):
    for step in ("aclnnMul", "aclnnInplaceFillScalar"):
        gi = grad_identity(db, db.aclnn_api(step), _op(db, step, "mean_grad"))
        assert gi is not None and gi.forward_api == "aclnnMean", step
        assert gi.reduce_all == "reduce_all" and "axes" in gi.read
    cc, r = _cc(db, "aclnnMul", "mean_grad")
    assert "std::vector<int64_t> x_grad_h1_red = phi::IntArray(axes).GetData();" in cc
    assert "if (x_grad_h1_red.empty() || reduce_all) {  // every dim of `x`" in cc
    assert "phi::Scalar x_grad_h1(1.0 / static_cast<double>(x_grad_h1_n));" in cc
    # upstream's order: x_grad filled, then multiplied in place by the view
    fill = cc.index("EXEC_NPU_CMD(aclnnInplaceFillScalar, dev_ctx, *x_grad, x_grad_h1);")
    mul = cc.index("EXEC_NPU_CMD(aclnnMul, dev_ctx, *x_grad, x_grad_v2, *x_grad);")
    assert fill < mul
    assert "phi::DenseTensor x_grad_v2(out_grad);" in cc
    assert "for (int64_t ax : x_grad_v2_red) x_grad_v2_dims[ax] = 1;" in cc
    assert cc.count("EXEC_NPU_CMD(") == 2
    assert [t for t in r.todos if "keep_dim" not in t] == []
    # the forward and a step of no reduction identity do not get it
    assert grad_identity(db, db.aclnn_api("aclnnMean"),
                         _op(db, "aclnnMean", "mean")) is None


def test_sum_grad_broadcasts_the_gradient_back_without_a_scale(db):
    # aclnnReduceSum names its list `dims`; sum_grad's kernel `dims_array`
    cc, _ = _cc(db, "aclnnMul", "sum_grad")
    assert "phi::IntArray(dims_array).GetData()" in cc
    assert "phi::Scalar x_grad_c1(1.0);" in cc
    assert "EXEC_NPU_CMD(aclnnMul, dev_ctx, *x_grad, x_grad_v2, *x_grad);" in cc


def test_shape_steps_parse_with_their_arity_and_bind_by_kind():
    n = parse_expr("Mul(filled(self, inverse_count(dim)), unreduced(grad, dim))")
    assert n.args[0].host == "filled" and n.args[0].args[1].host == "inverse_count"
    assert n.args[1].host == "unreduced" and _leaves(n) == ["self", "dim", "grad", "dim"]
    assert _calls(n) == ["aclnnMul", "aclnnInplaceFillScalar"]
    with pytest.raises(ValueError):
        parse_expr("unreduced(grad)")
    # `unreduced` over a tensor where the list should be: no identity
    with pytest.raises(KeyError):
        _rebind(parse_expr("unreduced(grad, self)"), {"grad": "dout", "self": "x"}, {})
    ok = _rebind(n, {"self": "x", "grad": "dout", "dim": "axes"}, {"axes": "int_array"})
    assert ok.args[1].args[1].leaf == "axes"


# batch J's concat_grad (asked for with aclnnSliceV2, scored 1: one call with every slice
# parameter nullptr): the gradient of aclnnCat, a slice of out_grad per member of the list
def test_concat_grad_slices_the_gradient_per_member_at_a_running_offset(db):
    gi = grad_identity(db, db.aclnn_api("aclnnSliceV2"), _op(db, "aclnnSliceV2", "concat_grad"))
    assert gi is not None and gi.forward_api == "aclnnCat"
    assert dict(gi.attr_kinds) == {"axis_scalar": "scalar"}  # concat's `axis`, by the YAML
    cc, r = _cc(db, "aclnnSliceV2", "concat_grad")
    assert "int64_t x_grad_dim = axis_scalar.to<int64_t>();" in cc
    assert "if (x_grad[j] && x_grad[j]->numel() != 0) {" in cc
    assert ("std::vector<int64_t> x_grad_ends = {x_grad_offset + x[j]->dims()[x_grad_dim]};"
            in cc)
    assert ("EXEC_NPU_CMD(aclnnSliceV2, dev_ctx, out_grad, x_grad_starts, x_grad_ends, "
            "x_grad_axes, x_grad_steps, *x_grad[j]);") in cc
    assert "if (x[j]->numel() != 0) x_grad_offset += x[j]->dims()[x_grad_dim];" in cc
    assert cc.count("EXEC_NPU_CMD(") == 1 and r.todos == []
    # a list gradient only as a slice per member: `sliced` over a plain tensor binds nothing
    with pytest.raises(KeyError):
        _rebind(parse_expr("sliced(grad, grad, dim)"), {"grad": "dout", "dim": "axis"},
                {"axis": "scalar"})


def test_signatures_parse_with_optional_core_dims():
    from codegen.paddle_grad_identity import load_identities, parse_signature
    from opdb.errors import OpscanError
    ins, out = parse_signature("(n?,k),(k,m?)->(n?,m?)")
    assert ins == ((("n", True), ("k", False)), (("k", False), ("m", True)))
    assert out == (("n", True), ("m", True))
    for bad in ("(n,k)(k,m)", "(n?,k),(k,m?)->(n?,m?", "(n?,k),(k?,m)->(n?,m?)", "(1,k)->(k)"):
        with pytest.raises(ValueError):
            parse_signature(bad)
    with pytest.raises(OpscanError, match="one core per input"):
        load_identities("identities: [{api: aclnnMatmul, signature: '(n,k),(k),(k)->(n)', "
                        "grads: {self: grad, mat2: grad}, evidence: e}]")
    with pytest.raises(OpscanError, match="transposed"):
        load_identities("identities: [{api: aclnnMul, transposed: {x: grad}, "
                        "grads: {self: grad}, evidence: e}]")
    with pytest.raises(OpscanError, match="`api` or a phi `op`"):
        load_identities("identities: [{api: aclnnMul, op: mul, grads: {self: grad}, "
                        "evidence: e}]")


def test_matmul_grad_is_two_matmuls_on_transposed_views_summed_over_broadcast_dims(db):
    # batch N scored matmul_grad 0: asked with aclnnMatmul it wrote x @ y into dx. Upstream
    # (matmul_kernel.cc AclnnMatmulBackward) and Paddle's MatmulGradKernel: dX = G Y^T or,
    # with transpose_x, Y G^T; dY = X^T G or, with transpose_y, G^T X; each summed over
    # the broadcast batch dims; 1-d operands as [1, k] / [k, 1]
    gi = grad_identity(db, db.aclnn_api("aclnnMatmul"), db.framework_op("paddle", "matmul_grad"))
    assert gi is not None and gi.forward_api == "aclnnMatmul"
    assert dict(gi.flags) == {"x": "transpose_x", "y": "transpose_y"}
    assert dict(gi.grads)["dx"] == parse_expr("Matmul(dout, transposed(y), 0)")
    assert dict(gi.alt)["dy"] == parse_expr("Matmul(transposed(dout), x, 0)")
    cc, r = _cc(db, "aclnnMatmul", "matmul_grad")
    assert not r.todos
    # (the float64 re-entry's compute_as helpers call aclnnCast: test_paddle_identity_float64)
    calls = [ln.strip() for ln in cc.splitlines() if "EXEC_NPU_CMD" in ln
             and "aclnnCast" not in ln]
    assert calls == [
        "EXEC_NPU_CMD(aclnnMatmul, dev_ctx, y_t, dx_v1, dx_full, dx_c2);",
        "EXEC_NPU_CMD(aclnnMatmul, dev_ctx, dout_p, dx_v3, dx_full, dx_c4);",
        "EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, dx_full, dx_axes, dx_keep_dims, dx_dtype, "
        "dx_view);",
        "EXEC_NPU_CMD(aclnnMatmul, dev_ctx, dy_v5, x_t, dy_full, dy_c6);",
        "EXEC_NPU_CMD(aclnnMatmul, dev_ctx, dy_v7, dout_p, dy_full, dy_c8);",
        "EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, dy_full, dy_axes, dy_keep_dims, dy_dtype, "
        "dy_view);"]
    assert "int8_t dx_c2 = 0;" in cc  # cubeMathType 0, as upstream
    assert "if (transpose_x && x.dims().size() >= 2) {  // the transpose" in cc
    # 1-d operands lack a core dim: [1, k] / [k, 1], and dout gets the 1 it lacks
    assert "if (x.dims().size() == 1) dout_p_d.insert(dout_p_d.end() - 1, 1);" in cc
    assert "if (y.dims().size() == 1) dout_p_d.insert(dout_p_d.end() - 0, 1);" in cc
    assert "dx_full_d.resize(dout_p.dims().size() - 2);" in cc


def test_a_transposed_operand_without_a_transposed_form_has_no_identity(db, monkeypatch):
    import codegen.paddle_grad_identity as m
    table = {k: dict(v) for k, v in identities().items()}
    table["aclnnMatmul"]["transposed"] = {}
    monkeypatch.setattr(m, "identities", lambda: table)
    assert grad_identity(db, db.aclnn_api("aclnnMatmul"),
                         db.framework_op("paddle", "matmul_grad")) is None


def test_tile_grad_sums_the_repeat_pairs_by_an_entry_keyed_by_the_forward_op(db):
    # batch K scored tile_grad 0: phi's tile has no aclnn API in opdb, so no entry keyed by
    # a forward API reached it, and asked with aclnnSliceV2 (upstream's bool path) it
    # sliced x with every slice parameter nullptr
    op = db.framework_op("paddle", "tile_grad")
    gi = grad_identity(db, db.aclnn_api("aclnnSliceV2"), op)
    assert gi is not None and gi.forward_api == "tile" and not gi.step
    assert dict(gi.grads)["x_grad"] == _rebind(parse_expr("unrepeated(out_grad, repeat_times)"),
                                               {"out_grad": "out_grad",
                                                "repeat_times": "repeat_times"},
                                               {"repeat_times": "int_array"})
    assert grad_identity(db, db.aclnn_api("aclnnReduceSum"), op).step
    assert grad_identity(db, db.aclnn_api("aclnnExp"), op) is None  # neither
    cc, r = _cc(db, "aclnnSliceV2", "tile_grad")
    assert not r.todos and "EXEC_NPU_CMD(aclnnSliceV2" not in cc
    for want in ("std::vector<int64_t> x_grad_r1_rep = phi::IntArray(repeat_times).GetData();",
                 "std::vector<int64_t> x_grad_r1_dims = phi::vectorize(x.dims());",
                 "x_grad_r1_pairs.push_back(x_grad_r1_rep[i]);",
                 "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, x_grad_r1_out, out_grad);",
                 "x_grad_r1_in.Resize(phi::make_ddim(x_grad_r1_pairs));",
                 "EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, x_grad_r1_in, x_grad_r1_axes, "
                 "x_grad_r1_keep_dims, x_grad_r1_dtype, x_grad_r1_out);"):
        assert want in cc, want


def test_expand_grad_sums_the_broadcast_dims_into_the_yaml_named_output(db):
    # the kernel names its output `in_grad` (the backward YAML: `x_grad`): bound by position
    for kernel in ("expand_grad", "expand_as_grad"):
        gi = grad_identity(db, db.aclnn_api("aclnnReduceSum"), db.framework_op("paddle", kernel))
        assert gi is not None and gi.forward_api == "aclnnExpand", kernel
        assert dict(gi.grads) == {"in_grad": parse_expr("out_grad")} and gi.broadcast
    cc, _ = _cc(db, "aclnnReduceSum", "expand_grad")
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *in_grad, out_grad);" in cc
    assert ("EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, out_grad, in_grad_axes, in_grad_keep_dims, "
            "in_grad_dtype, in_grad_view);") in cc


def test_fused_gemm_epilogue_grad_is_two_products_and_the_bias_column_sum(db):
    # batch J scored fused_gemm_epilogue_grad 0: asked with aclnnGemm it called one Gemm of
    # x and y into x_grad with `reserve_space` as C. Upstream: two Gemms (zero bias, beta 0:
    # the products, by trans_x/trans_y) and aclnnReduceSum of out_grad over axis 0. The
    # kernel is known to opdb only from PaddleCustomDevice's registration (class 14), and
    # the forward's beta 1 comes from a rule that reads the bias (`requires`)
    from codegen.resolve import _fw_op
    op = _fw_op(db, "paddle", "fused_gemm_epilogue_grad")
    gi = grad_identity(db, db.aclnn_api("aclnnGemm"), op)
    assert gi is not None and gi.forward_api == "aclnnGemm" and not gi.step
    assert dict(gi.flags) == {"x": "trans_x", "y": "trans_y"}
    assert dict(gi.owners) == {"x_grad": "x", "y_grad": "y", "bias_grad": "bias"}
    cc, r = _cc(db, "aclnnGemm", "fused_gemm_epilogue_grad")
    calls = [ln.strip() for ln in cc.splitlines() if "EXEC_NPU_CMD" in ln
             and "aclnnCast" not in ln]  # the float64 re-entry's helpers
    assert [c.split(",")[0] for c in calls] == ["EXEC_NPU_CMD(aclnnMatmul"] * 2 + [
        "EXEC_NPU_CMD(aclnnReduceSum"] + ["EXEC_NPU_CMD(aclnnMatmul"] * 2 + [
        "EXEC_NPU_CMD(aclnnReduceSum", "EXEC_NPU_CMD(aclnnInplaceCopy",
        "EXEC_NPU_CMD(aclnnReduceSum"]
    assert ("EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, out_grad, bias_grad_axes, "
            "bias_grad_keep_dims, bias_grad_dtype, bias_grad_view);") in calls
    assert "if (trans_x && x.dims().size() >= 2) {  // the transpose" in cc
    assert sorted(t.split("`")[1] for t in r.todos) == ["activation_grad", "reserve_space"]


def test_label_smooth_grad_scales_by_one_less_epsilon(db):
    # batch H scored label_smooth_grad 2: asked with aclnnMuls it multiplied by `epsilon`
    # (the floating-number pairing); upstream multiplies by 1 - epsilon. The forward has no
    # aclnn primary (upstream composes Muls, Add, Adds): the entry is keyed by the op, and
    # `complement` reads a float attribute
    gi = grad_identity(db, db.aclnn_api("aclnnMuls"), db.framework_op("paddle",
                                                                       "label_smooth_grad"))
    assert gi is not None and gi.forward_api == "label_smooth" and gi.step
    cc, r = _cc(db, "aclnnMuls", "label_smooth_grad")
    assert not r.todos
    assert "phi::Scalar label_grad_h1(1.0 - static_cast<double>(epsilon));  // 1 - epsilon" in cc
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, out_grad, label_grad_h1, *label_grad);" in cc
    with pytest.raises(ValueError):
        parse_expr("complement(Muls(grad, 2))")  # a host step reads one attribute
    with pytest.raises(KeyError):  # over a tensor: no identity
        _rebind(parse_expr("complement(grad)"), {"grad": "dout"})
