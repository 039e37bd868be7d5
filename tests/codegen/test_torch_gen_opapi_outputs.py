"""Issue 9: an op torch has no meta function for takes its output's sizes and dtype from
op-plugin's generated adapter (517f2e7d op_plugin_functions.yaml gen_opapi `size:` /
`dtype:`), not from its first tensor input: `_ctc_loss_backward`'s `out: {size: log_probs,
dtype: grad}` (aclnnCtcLossBackward refuses an out that is not 3-d, and `grad` is {N})."""
from __future__ import annotations

import json

from codegen.api import prepare
from opdb import op_plugin_gen_outputs as gen
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def _ctc_bwd(db):
    return prepare(db, "aclnnCtcLossBackward", "torch", op="aten::_ctc_loss_backward")


def test_ctc_loss_backward_out_takes_log_probs_sizes_and_grad_dtype(db):
    r = _ctc_bwd(db)
    body = _fn(r.files[ADAPTER.format("CtcLossBackward")], "at::Tensor _ctc_loss_backward(")
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format(log_probs.sizes(), "
            "grad.options().dtype(grad.scalar_type()));") in body
    assert "op_plugin_functions.yaml:150: gen_opapi `out: {size: log_probs, dtype: grad}`" in body
    assert "apply_tensor_without_format(grad)" not in body
    assert "TODO(opgen): no meta function" not in body
    binding = next(v for k, v in r.files.items() if k.endswith("binding.cpp"))
    assert ("at::Tensor out = at::empty(log_probs.sizes(), grad.options().dtype("
            "grad.scalar_type()));") in binding


def test_ctc_loss_backward_out_variant_resizes_to_log_probs(db):
    body = _fn(_ctc_bwd(db).files[ADAPTER.format("CtcLossBackward")],
               "at::Tensor& _ctc_loss_backward_out(")
    assert "out.resize_(log_probs.sizes());" in body
    assert "out.resize_(grad.sizes());" not in body
    assert "TODO(opgen): no meta function" not in body


def test_only_plain_input_names_are_translated(tmp_path, monkeypatch):
    table = {"aten::a": {"line": 3, "outputs": {"out": {"size": "x.sizes()", "dtype": "y"}}},
             "aten::b": {"line": 4, "outputs": {"out": {"size": "f(x, y)", "dtype": "x"}}},
             "aten::c": {"line": 5, "outputs": {"out": {"size": "x", "dtype": "at::kFloat"}}},
             "aten::d": {"line": 6, "outputs": {"out0": {"size": "x", "dtype": "x"},
                                                "out1": {"size": "y", "dtype": "y"}}},
             "aten::e": {"line": 7, "outputs": {"out": {"size": "z", "dtype": "x"}}}}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(table))
    monkeypatch.setattr(gen, "PATH", p)
    gen._table.cache_clear()
    try:
        assert gen.single_output_like("aten::a", {"x", "y"})[:2] == ("x", "y")
        for op in ("aten::b", "aten::c", "aten::d", "aten::e", "aten::missing"):
            assert gen.single_output_like(op, {"x", "y"}) is None
    finally:
        gen._table.cache_clear()


def test_extract_reads_the_yaml(tmp_path):
    y = tmp_path / "f.yaml"
    y.write_text("all_version: [v2.1]\nofficial:\n"
                 "  - func: f(Tensor a, Tensor b) -> Tensor\n    op_api: all_version\n"
                 "    gen_opapi:\n      out:\n        size: b\n        dtype: a\n"
                 "      exec: aclnnF\n"
                 "  - func: g(Tensor a) -> Tensor\n    op_api: all_version\n")
    assert gen.extract(y) == {"aten::f": {"line": 3, "outputs": {"out": {"size": "b",
                                                                         "dtype": "a"}}}}


def test_kl_div_target_backward_takes_target_not_grad_output(db):
    """op-plugin op_plugin_functions.yaml:5773 `out: {size: target, dtype: target}`: the
    gradient w.r.t. `target` has its sizes; `grad_output` (the first tensor input) is a
    scalar under a reducing `reduction`."""
    r = prepare(db, "aclnnKlDivTargetBackward", "torch", op="npu::kl_div_target_backward")
    text = r.files[ADAPTER.format("KlDivTargetBackward")]
    assert ("npu_preparation::apply_tensor_without_format(target.sizes(), "
            "grad_output.options().dtype(target.scalar_type()));") in text
    assert "apply_tensor_without_format(grad_output)" not in text
    assert "opgen_meta" not in text  # no meta function runs: no meta helpers
