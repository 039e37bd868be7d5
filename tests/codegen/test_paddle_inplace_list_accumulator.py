"""An in-place aclnn list API bound to a paddle kernel with separate input and output lists,
a fresh flag output the API only raises, an input the API takes as its inverse, and a list
longer than the API takes in one call (docs/opgen.md "Fifth audit: the pool at head,
paddle"): check_finite_and_unscale on aclnnForeachNonFiniteCheckAndUnscale scored 1 blind.
Upstream PaddleCustomDevice amp/check_finite_and_unscale_kernel.cc copies each xs[i] into
outs[i], passes 1 / scale, zero-fills a float32 `found_inf_tmp` and casts it to bool, and
calls the API on chunks of at most 256 tensors. Each test is built from parts (no kernel
or API name decides anything) and fails without its mechanism."""
from __future__ import annotations

from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api, args_by_name, op, tensor

SIG = ("void CheckKernel(const Context& dev_ctx, const std::vector<const DenseTensor*>& xs, "
       "const DenseTensor& scale, std::vector<DenseTensor*> outs, DenseTensor* found)")


def _list(name, role="inout"):
    return Param(name, "const aclTensorList*", role, ("float32", "float16", "bfloat16"))


def _op(name, signature):
    """The phi kernel of `signature`, a non-const `std::vector<DenseTensor*>` an output list
    (as opdb's extract of phi's headers gives it)."""
    import dataclasses
    o = op(name, signature)
    return dataclasses.replace(o, params=tuple(
        dataclasses.replace(p, role="output") if p.ctype == "std::vector<DenseTensor*>" else p
        for p in o.params))


def _build(a, signature=SIG, name="check_parts", fresh=None):
    from unittest import mock

    from codegen import paddle_target
    # the YAML lookup of which outputs Paddle allocates afresh, given for a made-up kernel
    with mock.patch.object(paddle_target, "fresh_outputs",
                           lambda kernel: frozenset(fresh or ())):
        return paddle_target.build_paddle_kernel(a, _op(name, signature))


def _api(inv="invScale"):
    return api("aclnnParts", _list("scaledGrads"),
               tensor("foundInf", "inout", dtypes=("float32",)),
               tensor(inv, dtypes=("float32",)))


def test_an_in_place_list_fed_by_an_unused_input_list_copies_each_member_first():
    k = _build(_api())
    grads = args_by_name(k)["scaledGrads"]
    pre = "\n".join(grads.prelude)
    assert "for (size_t i = 0; i < outs.size() && i < xs.size(); ++i) {" in pre
    assert "if (outs[i]->data() != xs[i]->data() && outs[i]->dims() == xs[i]->dims()) {" in pre
    assert "phi::Copy(dev_ctx, *xs[i], dev_ctx.GetPlace(), false, outs[i]);" in pre
    assert pre.index("phi::Copy(") < pre.index("std::vector<const phi::DenseTensor*> "
                                               "acl_scaled_grads(outs.begin(), outs.end());")
    assert "xs" not in {u["name"] for u in k["unused"]}


def test_an_input_named_as_the_inverse_of_the_phi_one_is_passed_as_its_reciprocal():
    k = _build(_api())
    inv = args_by_name(k)["invScale"]
    assert "EXEC_NPU_CMD(aclnnReciprocal, dev_ctx, scale, acl_inv_scale);" in inv.prelude
    assert inv.expr == "acl_inv_scale" and not inv.todo
    # a name that is not `inv_` + the phi name is passed as given
    k = _build(_api("invStd"))
    assert args_by_name(k)["invStd"].expr == "scale"


def test_a_fresh_output_the_api_reads_starts_from_zeros_in_a_dtype_the_api_takes():
    k = _build(_api(), fresh={"found"})
    found = args_by_name(k)["foundInf"]
    assert ("phi::DenseTensor acl_found_inf_zeros = opgen_zeros_as(dev_ctx, *found, "
            "{phi::DataType::FLOAT32});") in found.prelude[-1]
    assert found.expr == "acl_found_inf_zeros"
    assert "opgen_cast_back(dev_ctx, acl_found_inf_zeros, found);" in k["after"]
    assert k["zeros_as"]


def test_an_output_that_may_be_an_input_s_memory_is_not_zeroed():
    # the YAML does not list the kernel (fresh empty) or writes the output in place
    k = _build(_api(), fresh=set())
    assert args_by_name(k)["foundInf"].expr == "*found" and not k["zeros_as"]


def test_a_list_longer_than_one_call_takes_is_split_with_every_list_cut_alike():
    from unittest import mock

    from opdb.call_limits import CallLimit
    a = api("aclnnParts", _list("x", "input"), Param("scalars", "const aclScalarList*",
                                                     "input", ()),
            tensor("flag", dtypes=("float32",)), _list("out", "output"))
    sig = ("void PartsKernel(const Context& dev_ctx, const std::vector<const DenseTensor*>& x, "
           "const std::vector<phi::Scalar>& scalars, const DenseTensor& flag, "
           "std::vector<DenseTensor*> out)")
    limit = CallLimit("aclnnParts", 48, 24, False, "op-plugin X.cpp:1")
    with mock.patch("opdb.call_limits.tensors_per_call",
                    lambda name: limit if name == "aclnnParts" else None):
        k = _build(a, sig, "parts")
    split = k["split"]
    assert split["max"] == 24 and split["total"] == "x.size()"
    assert split["exprs"] == ["opgen_x_part", "opgen_scalars_part", "flag", "opgen_out_part"]
    assert ("std::decay_t<decltype(scalars)> opgen_scalars_part(scalars.begin() + opgen_i, "
            "scalars.begin() + (opgen_i + 24 < scalars.size() ? opgen_i + 24 : "
            "scalars.size()));") in split["decls"]
    # an API without a limit row is called once
    assert _build(a, sig, "parts")["split"] is None


def test_check_finite_and_unscale_renders_all_four():
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnForeachNonFiniteCheckAndUnscale", "paddle",
                op="check_finite_and_unscale", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert "phi::Copy(dev_ctx, *xs[i], dev_ctx.GetPlace(), false, outs[i]);" in cc
    assert "EXEC_NPU_CMD(aclnnReciprocal, dev_ctx, scale, acl_inv_scale);" in cc
    assert "opgen_zeros_as(dev_ctx, *found_infinite, {phi::DataType::FLOAT32});" in cc
    # float32/float16/bfloat16 registered (the `xs` list keys the dtype, as upstream's
    # list less its double): no float64 to cast, so the reciprocal goes as it is
    assert ("EXEC_NPU_CMD(aclnnForeachNonFiniteCheckAndUnscale, dev_ctx, "
            "opgen_scaled_grads_part, acl_found_inf_zeros, acl_inv_scale);") in cc
    assert ("custom_kernel::CheckFiniteAndUnscaleKernel,\n                          float,\n"
            "                          phi::dtype::float16,\n"
            "                          phi::dtype::bfloat16)") in cc
    assert "opgen_i += 250" in cc
    assert not [t for t in r.todos if "is not passed" in t or "matched by position" in t]


def test_fresh_outputs_are_the_yaml_outputs_no_inplace_pair_writes():
    from codegen.paddle_target import fresh_outputs
    # ops.yaml check_finite_and_unscale_: `inplace : (x -> out)`
    assert fresh_outputs("check_finite_and_unscale") == {"found_infinite"}
    assert "out" not in fresh_outputs("index_put")  # `inplace : (x -> out)`
    assert fresh_outputs("no_such_kernel_anywhere") == frozenset()
