"""Mechanisms found by scoring the fifteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 15 -n 12 --before 154`) against op-plugin
517f2e7d (docs/opgen.md, "Fifteenth sample"): class 10, the fast-route check of an op
whose results are floating for integer inputs (torch's
does_op_promote_integer_inputs_to_float). Nothing keys on an API or op name in code; the
tests name the upstream adapter."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

REJECT = "|| at::native::has_integral_tensor(self, true)) {"


def test_integer_promotion_is_probed_from_torch():
    assert torch_facts.promotes_integer_inputs("aten::_foreach_expm1") is True
    assert torch_facts.promotes_integer_inputs("aten::_foreach_div.List") is True
    assert torch_facts.promotes_integer_inputs("aten::_foreach_add.List") is False
    assert torch_facts.promotes_integer_inputs("aten::_foreach_pow.Scalar") is False
    assert torch_facts.promotes_integer_inputs("aten::no_such_op") is None


def test_foreach_expm1_sends_integral_lists_to_torch(db):
    """ForeachExpm1KernelNpuOpApi.cpp: `can_use_fast_route(self) ||
    has_integral_tensor(self, true)` -> `foreach_tensor_expm1_slow`. opdb gives the API
    int16/int8/uint8 on ascend910b, and torch's expm1 of an integer list is float32, so
    before, an int8 list reached the API with float32 outputs."""
    r = prepare(db, "aclnnForeachExpm1", "torch", op="aten::_foreach_expm1")
    text = r.files[ADAPTER.format("ForeachExpm1")]
    for head in ("std::vector<at::Tensor> _foreach_expm1(", "void _foreach_expm1_(",
                 "void _foreach_expm1_out("):
        assert REJECT in _fn(text, head), head


def test_an_op_that_keeps_integers_keeps_its_route(db):
    """`_foreach_pow.Scalar` with an integer exponent stays integral in torch: no extra
    reject (its API's dtypes already keep integer lists off it)."""
    r = prepare(db, "aclnnForeachPowScalar", "torch", op="aten::_foreach_pow.Scalar")
    body = _fn(r.files[ADAPTER.format("ForeachPow")], "std::vector<at::Tensor> _foreach_pow(")
    assert "at::native::can_use_fast_route({self}, exponent)" in body
    assert "has_integral_tensor" not in body
