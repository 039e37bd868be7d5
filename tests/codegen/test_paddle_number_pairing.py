"""Required aclnn numbers with no same-named phi value (docs/opgen.md "Why paddle first
passes fail, by mechanism": the largest class, "a required parameter spelled differently").
They are paired in order with the phi kernel's leftover number attributes when both sides
have the same count, by the two signatures only. The APIs are the real aclnn signatures
(hicann ops-math / ops-nn, as opdb has them); the phi signatures are Paddle 3.3.1's.
The reviewed aliases that already fixed these kernels are removed here, so the tests show
what a fresh kernel with the same defect gets without a reviewed entry."""
from __future__ import annotations

import pytest

import codegen.argmap as argmap
from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t

SCALAR = "const aclScalar*"


@pytest.fixture
def no_reviewed_aliases(monkeypatch):
    """The alias table without the entries written from held-out batches B-F for these
    names (exponent/factor, clip_value_min/min, clip_value_max/max, p_scalar/porder)."""
    drop = {"exponent", "factor", "clip_value_min", "clip_value_max", "min", "max",
            "p_scalar", "porder", "beta", "delta"}
    table = {k: {v for v in vs if v not in drop} for k, vs in argmap._ALIASES.items()
             if k not in drop}
    monkeypatch.setattr(argmap, "_ALIASES", table)


def _mapped(k):
    return {p.aclnn.name: (p.fw.name if p.fw else None, p.decision) for p in k["argmap"].params}


POW = _api("aclnnPowTensorScalar", _t("self"), Param("exponent", SCALAR, "input"),
           _t("out", "output"))
POW_OP = _op("pow", "void PowKernel(const Context& dev_ctx, const DenseTensor& x, "
                    "const Scalar& factor, DenseTensor* out)")
CLAMP = _api("aclnnClamp", _t("self"), Param("clipValueMin", SCALAR, "input"),
             Param("clipValueMax", SCALAR, "input"), _t("out", "output"))
CLIP_OP = _op("clip", "void ClipKernel(const Context& dev_ctx, const DenseTensor& x, "
                      "const Scalar& min, const Scalar& max, DenseTensor* out)")


def test_a_sole_required_number_takes_the_sole_leftover_attribute(no_reviewed_aliases):
    # batch B's pow: before, `exponent` was a placeholder and `factor` unused
    k = build_paddle_kernel(POW, POW_OP, framework_dtypes=("float32",))
    assert _mapped(k)["exponent"] == ("factor", "kind")
    assert not k["unused"]
    todo = next(p.todo for p in k["argmap"].params if p.aclnn.name == "exponent")
    assert "matched by kind and order among the unmatched numbers" in todo
    assert "factor" in _args(k)["exponent"].expr


def test_equal_counts_pair_in_order(no_reviewed_aliases):
    # batch C's clip: clipValueMin <- min, clipValueMax <- max
    got = _mapped(build_paddle_kernel(CLAMP, CLIP_OP, framework_dtypes=("float32",)))
    assert got["clipValueMin"] == ("min", "kind") and got["clipValueMax"] == ("max", "kind")


def test_unequal_counts_pair_nothing(no_reviewed_aliases):
    # p_norm: aclnnNorm's one required `pScalar` against `porder` and `epsilon` (both
    # float): no evidence which one, so the placeholder stays
    norm = _api("aclnnNorm", _t("self"), Param("pScalar", SCALAR, "input"),
                Param("dim", "const aclIntArray*", "input"), Param("keepdim", "bool", "input"),
                _t("out", "output"))
    pnorm = _op("p_norm", "void PNormKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "float porder, int axis, float epsilon, bool keepdim, bool asvector, "
                          "DenseTensor* out)")
    assert _mapped(build_paddle_kernel(norm, pnorm, framework_dtypes=("float32",)))[
        "pScalar"] == (None, "unmapped")


def test_bools_and_optional_aclnn_numbers_are_not_paired(no_reviewed_aliases):
    a = _api("aclnnFoo", _t("self"), Param("someFlag", "bool", "input"), _t("out", "output"))
    o = _op("foo", "void FooKernel(const Context& dev_ctx, const DenseTensor& x, bool lazy_mode, "
                   "DenseTensor* out)")
    assert _mapped(build_paddle_kernel(a, o, framework_dtypes=("float32",)))["someFlag"] == \
        (None, "unmapped")


def test_the_reviewed_alias_still_wins():
    # with the table as shipped, pow maps by alias (no review TODO)
    assert _mapped(build_paddle_kernel(POW, POW_OP, framework_dtypes=("float32",)))[
        "exponent"] == ("factor", "alias")


def test_an_api_with_another_unfed_required_param_pairs_nothing():
    # batch F's clip_by_norm calls aclnnNorm as one step (upstream computes the 2-norm, then
    # scales x): `dim` has no counterpart, so `max_norm` is not taken for `pScalar`
    norm = _api("aclnnNorm", _t("self"), Param("pScalar", SCALAR, "input"),
                Param("dim", "const aclIntArray*", "input"), Param("keepdim", "bool", "input"),
                _t("out", "output"))
    cbn = _op("clip_by_norm", "void ClipByNormKernel(const Context& dev_ctx, "
                              "const DenseTensor& x, float max_norm, DenseTensor* out)")
    k = build_paddle_kernel(norm, cbn, framework_dtypes=("float32",))
    assert _mapped(k)["pScalar"] == (None, "unmapped")
    assert [u["name"] for u in k["unused"]] == ["max_norm"]
