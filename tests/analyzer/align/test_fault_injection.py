"""Issue 15: a planted relative 1e-3 error on one op's output (gelu, layer_norm, softmax,
conv, matmul at several depths) is found: the right module and the right op.
benchmarks/align_faults.py runs the full seeded sweep."""
from __future__ import annotations

import pytest

from analyzer.align.compare import compare_dumps
from analyzer.align.fault import Fault
from analyzer.align.layout import read_meta

from .conftest import MODELS

TORCH = MODELS / "torch_tiny_vit.py"
PADDLE = MODELS / "paddle_tiny_transformer.py"
CASES = [("torch", TORCH, "gelu", 1), ("torch", TORCH, "softmax", 0), ("torch", TORCH, "conv", 0),
         ("torch", TORCH, "matmul", 5), ("torch", TORCH, "layer_norm", 3),
         ("paddle", PADDLE, "layer_norm", 2), ("paddle", PADDLE, "softmax", 1),
         ("paddle", PADDLE, "matmul", 4)]


@pytest.mark.parametrize("framework,model,kind,n", CASES,
                         ids=[f"{c[0]}-{c[2]}{c[3]}" for c in CASES])
def test_planted_fault_names_module_and_op(align_dumps, framework, model, kind, n):
    a = align_dumps(f"{framework}-tiny-a", model, framework, save_inputs=True, level="op")
    b = align_dumps(f"{framework}-tiny-{kind}{n}", model, framework, inputs_from=str(a), level="op",
                    fault=Fault(kind, n))
    hit = read_meta(b)["fault"]["hit"]
    assert hit is not None, "the fault never fired"
    rep = compare_dumps(a, b)
    assert rep.origin is not None and rep.origin.key == hit["module"]
    assert rep.op is not None and rep.op.key == hit["op_key"]
    assert rep.summary.startswith(f"runs part ways at {hit['module']}")


def test_no_fault_no_divergence(align_dumps):
    a = align_dumps("torch-tiny-a", TORCH, "torch", save_inputs=True, level="op")
    again = align_dumps("torch-tiny-again", TORCH, "torch", inputs_from=str(a), level="op")
    rep = compare_dumps(a, again)
    assert rep.counts["failed"] == 0 and rep.origin is None


def test_module_level_dumps_descend_to_the_op_by_rerunning_both_sides(align_dumps, tmp_path):
    from analyzer.align.api import compare_and_report

    a = align_dumps("torch-tiny-mod-a", TORCH, "torch", save_inputs=True)
    b = align_dumps("torch-tiny-mod-softmax1", TORCH, "torch", inputs_from=str(a), fault=Fault("softmax", 1))
    rep, _ = compare_and_report(a, b, tmp_path / "out", formats="json",
                                classify=lambda op, dtypes: {"category": "supported"})
    assert rep.origin.key == "Module.blocks.1.attn.Attention.forward.0"
    assert rep.op is not None and rep.op.name == "_softmax.default"
    assert rep.suspects[0].op == "aten::_softmax"
    assert any(d.startswith("re-ran both sides on the CPU at --level op inside blocks.1.attn") for d in rep.descent)
    assert rep.repro and (tmp_path / "out" / "repro" / rep.op.key / "inputs.pt").is_file()
