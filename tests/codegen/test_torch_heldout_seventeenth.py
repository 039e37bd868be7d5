"""Mechanisms found by scoring the seventeenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 17 -n 12 --before 178`) against op-plugin
517f2e7d (docs/opgen.md, "Seventeenth sample"): class 2 (c), what an unset optional
float means, probed from torch's CPU kernel (Logit; also the fourteenth sample's
LogitGrad); class 2 (b), `random_()`'s bounds and the generator draw over them,
reviewed per-API rules in opdb/sources/arg_rules.yaml (InplaceRandom); class 19, an
output in the API's own shape, a reviewed per-API entry (PreluBackward). Nothing keys
on an API or op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_unset_float_meaning_is_probed_from_torch():
    # ATen's logit kernels: eps < 0 clamps nothing, as eps=None; eps=0.0 clamps to [0, 1]
    assert torch_facts.unset_float_means("aten::logit", "eps") == -1.0
    assert torch_facts.unset_float_means("aten::logit_backward", "eps") == -1.0
    # nan_to_num: an unset `nan` is 0.0; an unset `posinf` is the dtype's maximum, which
    # no candidate gives (the ±inf sample shows it)
    assert torch_facts.unset_float_means("aten::nan_to_num", "nan") == 0.0
    assert torch_facts.unset_float_means("aten::nan_to_num", "posinf") is None
    # scaled_dot_product_attention: `scale` unset is 1/sqrt(E), not 0 (the finite sample)
    assert torch_facts.unset_float_means("aten::scaled_dot_product_attention", "scale") is None
    assert torch_facts.unset_float_means("aten::logit", "self") is None
    assert torch_facts.unset_float_means("aten::no_such_op", "eps") is None


def test_logit_sends_minus_one_for_an_unset_eps(db):
    """LogitKernelNpuOpApi.cpp: `eps.value_or(-1)` in `logit` and `logit_out` (and
    `logit_` through `at::native::logit_` -> `logit_out`). Before, `value_or(0.0)`:
    aclnnLogit clamped `self` to [0, 1], so 1.5 gave inf where torch gives NaN."""
    r = prepare(db, "aclnnLogit", "torch", op="aten::logit")
    text = r.files[ADAPTER.format("Logit")]
    for head in ("at::Tensor logit(", "at::Tensor& logit_out(", "at::Tensor& logit_("):
        body = _fn(text, head)
        assert "eps.value_or(-1.0)" in body, head
        assert "value_or(0.0)" not in body and "TODO(opgen)" not in body, head


def test_logit_grad_sends_minus_one_for_an_unset_eps(db):
    """LogitBackwardKernelOpApi.cpp: `eps.value_or(-1)` (the fourteenth sample's
    LogitGrad, class 2 (c), left there)."""
    r = prepare(db, "aclnnLogitGrad", "torch", op="aten::logit_backward.grad_input")
    text = r.files[ADAPTER.format("LogitBackward")]
    for head in ("at::Tensor logit_backward(", "at::Tensor& logit_backward_out("):
        assert "eps.value_or(-1.0)" in _fn(text, head), head


def test_an_unprobed_optional_float_keeps_its_todo(db):
    """An upsample's `scales` (the op needs a 3-d input, which the probe's samples are
    not): `value_or(0.0)` with its TODO, as before (upstream: `scales.value_or(0)`)."""
    r = prepare(db, "aclnnUpsampleNearestExact1d", "torch", op="aten::_upsample_nearest_exact1d")
    body = _fn(r.files[ADAPTER.format("UpsampleNearestExact1d")],
               "at::Tensor _upsample_nearest_exact1d(")
    assert "scales.value_or(0.0)" in body
    assert "`scales` unset -> 0.0" in body


def test_random_without_bounds_draws_over_the_dtype_range(db):
    """RandomKernelNpuOpApi.cpp random_(self, generator): from = 0, to =
    get_dtype_max_value(self.scalar_type()) (2^24 + 1 for float32, ...), on both the
    eager and the graph-capture API. Before: placeholders 0 and 0, an empty range."""
    r = prepare(db, "aclnnInplaceRandom", "torch", op="aten::random_")
    body = _fn(r.files[ADAPTER.format("Random")], "at::Tensor& random_(")
    assert "TODO(opgen)" not in body
    assert body.count("int64_t acl_from = 0;") == 2
    assert body.count("acl_to_dtype == at::kFloat ? (int64_t(1) << 24) + 1") == 2
    assert "EXEC_NPU_CMD(aclnnInplaceRandom, self, acl_from, acl_to, acl_seed, acl_offset);" in body
    assert "EXEC_NPU_CMD(aclnnInplaceRandomTensor, self, acl_from, acl_to," in body


def test_random_to_keeps_its_own_bound(db):
    """`random_.to(self, to, generator)`: `to` is the op's own; `from` is 0
    (RandomKernelNpuOpApi.cpp random_(self, to, generator): from = 0)."""
    r = prepare(db, "aclnnInplaceRandom", "torch", op="aten::random_.to")
    body = _fn(r.files[ADAPTER.format("Random")], "at::Tensor& random_(")
    assert "acl_to_dtype" not in body and "TODO(opgen)" not in body
    assert "int64_t acl_from = 0;  // no `from`: the range starts at 0" in body
    assert "EXEC_NPU_CMD(aclnnInplaceRandom, self, acl_from, to, acl_seed, acl_offset);" in body


def test_random_counts_the_generator_offset_over_its_range(db):
    """RandomKernelNpuOpApi.cpp random_op_api_: calc_final_counter_offset(self, true,
    from, to, true), whose unroll follows the range (int32 random_(): 2, where the
    dtype-based count gives 4 and the next random op could reuse counters). The draw
    takes the call's own `from`/`to` expressions (a rule's `{{@name}}`), whatever fed
    them; Uniform (UniformKernelNpuOpApi.cpp: calc_final_counter_offset(self)) keeps the
    two-argument draw."""
    for op, pair in (("aten::random_", "acl_from, acl_to"), ("aten::random_.to", "acl_from, to"),
                     ("aten::random_.from", "from, acl_to")):
        text = prepare(db, "aclnnInplaceRandom", "torch", op=op).files[ADAPTER.format("Random")]
        body = _fn(text, "at::Tensor& random_(")
        assert f"opgen_philox_inputs(generator, self, {pair});" in body, op
        assert f"opgen_philox_state(generator, self, {pair});" in body, op
        assert "calc_final_counter_offset(counted, true, from, to, true)" in text, op
    u = prepare(db, "aclnnInplaceUniform", "torch", op="aten::uniform_")
    text = u.files[ADAPTER.format("Uniform")]
    assert "opgen_philox_inputs(generator, self);" in text
    assert "calc_final_counter_offset(counted, true, from, to, true)" not in text


def test_prelu_backward_grad_weight_in_the_apis_own_shape(db):
    """aclnn_prelu_backward.cpp CheckShape: `gradWeight` must be `{C}` when `weight` has
    more than one element, else `weight`'s shape; torch's meta function gives `self`'s
    shape, and torch's prelu passes `weight` as (1, C, 1, 1). PreluBackwardKernelNpuOpApi.cpp
    reshapes to 1-d and back. A reviewed per-API entry (arg_rules.yaml
    `api_output_shapes`): `grad_weight` like `weight`, the API writes its 1-d view."""
    r = prepare(db, "aclnnPreluBackward", "torch", op="aten::_prelu_kernel_backward")
    body = _fn(r.files[ADAPTER.format("PreluKernelBackward")],
               "std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward(")
    assert "at::Tensor grad_weight = npu_preparation::apply_tensor_without_format(weight.sizes()," in body
    assert ("at::Tensor opgen_grad_weight_api = weight.numel() == 1 ? grad_weight : "
            "grad_weight.view({weight.numel()});") in body
    assert "grad_self, opgen_grad_weight_api);" in body
    assert "return std::make_tuple(grad_self, grad_weight);" in body
    # the other output keeps the meta function's shape
    assert "at::Tensor grad_self = npu_preparation::apply_tensor_without_format(std::get<0>(meta).sizes()," in body


def test_api_output_shapes_entries_are_checked():
    import pytest

    from opdb.arg_rules import parse
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError):
        parse({"aliases": [], "rules": [], "api_output_shapes": [{"apis": "x", "output": "y"}]})
    ok = parse({"aliases": [], "rules": [], "api_output_shapes": [
        {"apis": "^aclnnX$", "output": "y", "sizes": "{w}.sizes()", "aclnn_view": "{y}",
         "evidence": "e"}]})
    assert ok.output_shape_for("aclnnX", "y").sizes == "{w}.sizes()"
    assert ok.output_shape_for("aclnnXY", "y") is None


def test_a_rule_naming_an_argument_takes_its_expression(monkeypatch):
    """`{{@name}}` in a rule's statement is the expression passed for an earlier aclnn
    argument (here a framework value and another rule's local); naming a later or
    unknown one is a one-line error, not broken C++."""
    import pytest

    import codegen.argmap as argmap
    from codegen.cppcall import call_args
    from codegen.torch_target import TorchDialect
    from opdb.arg_rules import load, parse
    from opdb.errors import OpscanError
    from tests.codegen.torch_adapter_parts import aclnn_api, fw_param

    def rules(seed_line):
        base = load()
        extra = parse({"aliases": [], "rules": [
            {"aclnn": "lo", "kind": "int", "apis": "^aclnnT$", "needs": [],
             "torch": ["int64_t {var} = 0;  // fixed"], "evidence": "e"},
            {"aclnn": "seed", "kind": "int", "apis": "^aclnnT$", "with": ["lo", "hi"],
             "needs": [], "torch": [seed_line], "evidence": "e"}]})
        return type(base)(base.aliases, extra.rules + base.rules)

    api = aclnn_api("aclnnT", ("self", "aclTensor*", "input"), ("lo", "int64_t", "input"),
                    ("hi", "int64_t", "input"), ("seed", "int64_t", "input"))
    fwp = [fw_param("self", "tensor", "const at::Tensor&"), fw_param("hi", "int", "int64_t")]
    monkeypatch.setattr(argmap, "_load_rules", lambda: rules("int64_t {var} = {{@lo}} + {{@hi}};"))
    args = call_args(argmap.map_args(api, fwp, "torch"), TorchDialect({"self", "hi"}), "self")
    assert args[3].prelude == ["int64_t acl_seed = acl_lo + hi;"]
    monkeypatch.setattr(argmap, "_load_rules", lambda: rules("int64_t {var} = {{@nope}};"))
    with pytest.raises(OpscanError, match="not an earlier argument of aclnnT"):
        call_args(argmap.map_args(api, fwp, "torch"), TorchDialect({"self", "hi"}), "self")
