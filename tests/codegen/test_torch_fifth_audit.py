"""Fifth audit, torch rows 13-24 (docs/opgen.md, "Fifth audit: the pool at head, torch
rows 13-24"): a `Tensor?` input torch's meta function cannot take unset. torch 2.13's
Python meta function of `_thnn_fused_lstm_cell` reads `.device` of both biases and
raises AttributeError when they are None, so an adapter that sizes its outputs by the
meta function failed every `LSTMCell(bias=False)` call, where op-plugin 517f2e7d
LstmCellKernelNpuOpApi.cpp allocates like `cx` / `input_gates` and aclnnThnnFusedLstmCell
zero-fills absent biases. The fact is probed on Meta tensors; nothing keys on an API or
op name in code."""
from __future__ import annotations

import pytest
import torch

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_unset_optional_the_meta_function_refuses_is_probed():
    got = torch_facts.meta_unset_optional_placeholders("aten::_thnn_fused_lstm_cell")
    assert got == (("input_bias", (("input_gates", 1),)),
                   ("hidden_bias", (("input_gates", 1),)))
    # meta functions that take their `Tensor?` unset, or have none, or no Python-only
    # Meta kernel: nothing to stand in
    for op in ("aten::binary_cross_entropy", "aten::multi_margin_loss",
               "aten::addmm", "aten::add.Tensor", "aten::no_such_op"):
        assert torch_facts.meta_unset_optional_placeholders(op) == (), op


def test_the_placeholder_gives_the_meta_function_the_sizes_of_a_real_bias():
    """What the rendered expression does, in Python: unset biases raise in torch's meta
    function; placeholders of `input_gates.size(1)` give the sizes a real bias gives."""
    ov = torch.ops.aten._thnn_fused_lstm_cell.default
    g = torch.empty(3, 20, device="meta")
    cx = torch.empty(3, 5, device="meta")
    with pytest.raises(Exception):
        ov(g, g, cx)
    ph = torch.empty(g.size(1), device="meta")
    assert [t.shape for t in ov(g, g, cx, ph, ph)] == [(3, 5), (3, 5), (3, 20)]


def test_lstm_cell_adapter_stands_in_for_unset_biases_in_the_meta_call_only(db):
    """Before: `opgen_meta(input_bias)` (None) in the meta call, which raised."""
    r = prepare(db, "aclnnThnnFusedLstmCell", "torch", op="aten::_thnn_fused_lstm_cell")
    body = _fn(r.files[ADAPTER.format("ThnnFusedLstmCell")],
               "std::tuple<at::Tensor, at::Tensor, at::Tensor> _thnn_fused_lstm_cell(")
    for b in ("input_bias", "hidden_bias"):
        assert (f"(({b}.has_value() && {b}->defined()) ? opgen_meta({b}) : "
                "c10::optional<at::Tensor>(at::empty({input_gates.size(1)}, "
                "input_gates.options().device(at::kMeta))))") in body
    # the API still gets the biases as given
    assert ("EXEC_NPU_CMD(aclnnThnnFusedLstmCell, input_gates, hidden_gates, cx, "
            "input_bias, hidden_bias, out0, out1, out2);") in body
