"""ATen catalog of the installed torch, the pure schema parser, and the CIA cross-check."""
from __future__ import annotations

import pytest

from opdb.ingest import torch_catalog as tc
from opdb.ingest import torch_npu_wheel as tw
from opdb.model import to_row


def test_parse_schema_basics():
    parsed, kwonly = tc.parse_schema(
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert (parsed.base, parsed.overload, parsed.returns) == ("add", "out", "Tensor(a!)")
    assert [(p.name, p.ctype, p.role, p.default) for p in parsed.params] == [
        ("self", "Tensor", "input", None), ("other", "Tensor", "input", None),
        ("alpha", "Scalar", "input", "1"), ("out", "Tensor(a!)", "inout", None)]
    assert kwonly == (False, False, True, True)
    assert tc.is_out_variant("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert not tc.is_out_variant("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    p, _ = tc.parse_schema('f(Tensor x, str a="(,)", int[2] k=[1, 2]) -> Tensor')
    assert [(q.name, q.default) for q in p.params] == [("x", None), ("a", '"(,)"'), ("k", "[1, 2]")]


@pytest.mark.parametrize("bad", ["add(Tensor self -> Tensor", "add(Tensor self)", "(Tensor x) -> Tensor",
                                 "add(Tensor) -> Tensor"])
def test_parse_schema_rejects(bad):
    with pytest.raises(tc.SchemaError):
        tc.parse_schema(bad)


def test_op_kind_rule():
    foreach = frozenset({"add_", "mul_"})
    assert tc.op_kind("aten::_fused_adamw_.tensor_lr", foreach) == "optimizer"
    assert tc.op_kind("aten::_foreach_add_.List", foreach) == "optimizer"
    assert tc.op_kind("aten::_foreach_exp", foreach) == "forward"
    assert tc.op_kind("aten::convolution_backward", foreach) == "backward"
    assert tc.op_kind("aten::_standard_gamma_grad", foreach) == "backward"
    assert tc.op_kind("aten::add.Tensor", foreach) == "forward"


@pytest.fixture(scope="module")
def catalog():
    import torch  # installed by scripts/setup.sh
    assert torch.__version__.startswith("2.13"), torch.__version__
    return tc.load_torch_catalog()


def test_catalog_size_order_and_source(catalog):
    ops = catalog.framework_ops
    assert len(ops) > 3000
    assert [o.name for o in ops] == sorted({o.name for o in ops})
    assert all(o.name.startswith("aten::") and o.framework == "torch" for o in ops)
    assert ops[0].source.source == "torch" and ops[0].source.version.startswith("2.13.0")
    assert catalog.provenance[0].rows == len(ops)


def test_catalog_entries(catalog):
    ops = {o.name: o for o in catalog.framework_ops}
    add = ops["aten::add.Tensor"]
    assert add.schema == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert (add.composite_implicit, add.has_decomposition, add.kind) == (False, True, "forward")
    matmul = ops["aten::matmul"]
    assert (matmul.composite_implicit, matmul.has_decomposition) == (True, False)
    assert ops["aten::add_.Tensor"].params[0].role == "inout"
    assert ops["aten::convolution_backward"].kind == "backward"
    assert ops["aten::_fused_adam_"].kind == "optimizer"
    assert ops["aten::_foreach_addcdiv_.Scalar"].kind == "optimizer"
    assert ops["aten::addmm"].has_decomposition


def test_catalog_params_agree_with_torch(catalog):
    import torch

    by_key = {(s.name, s.overload_name): s for s in torch._C._jit_get_all_schemas()}
    for op in catalog.framework_ops:
        base, overload = tc.split_op_name(op.name)
        schema = by_key[("aten::" + base, overload)]
        assert [a.name for a in schema.arguments] == [p.name for p in op.params], op.name
        writes = [bool(a.alias_info and a.alias_info.is_write) for a in schema.arguments]
        assert writes == [p.role == "inout" for p in op.params], op.name


def test_catalog_deterministic(catalog):
    again = tc.load_torch_catalog()
    assert [to_row(o) for o in again.framework_ops] == [to_row(o) for o in catalog.framework_ops]


def test_torch_npu_2_13_adapts_47_composite_implicit_ops(catalog):
    """torch_npu 2.13.0 overrides 47 overloads that torch 2.13 CPU decomposes implicitly."""
    cia = {o.name for o in catalog.framework_ops if o.composite_implicit}
    adapted = tw.adapted_ops(tw.load_committed_releases(["2.13.0"]), "2.13.0")
    both = sorted(adapted & cia)
    assert len(both) == 47
    for op in ("aten::matmul", "aten::scaled_dot_product_attention", "aten::lstm.input",
               "aten::one_hot", "aten::adaptive_avg_pool2d"):
        assert op in both
    # every aten op the wheel adapts exists in torch 2.13
    assert {o for o in adapted if o.startswith("aten::")} <= {o.name for o in catalog.framework_ops}
