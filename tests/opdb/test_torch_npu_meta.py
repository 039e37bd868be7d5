"""torch_npu's Python Meta registrations are read with ast (never imported)."""
from __future__ import annotations

import pytest

from opdb.ingest.torch_npu_meta import load, parse

TEXT = '''
from torch.library import Library, impl
m = Library("npu", "IMPL", "Meta")
m_aten = Library("aten", "IMPL", "Meta")
other = Library("npu", "DEF")


@impl(m, "npu_two")
def two_meta(x, y):
    out = x.new_empty(x.shape)
    idx = torch.empty([0])
    return (out, idx)


@impl(m_aten, "foo.out")
def foo_out(x, *, out):
    return out


@impl(other, "not_meta")
def not_meta(x):
    return x


def helper():
    return 1


@impl(m, "npu_expr")
def expr_meta(x):
    return torch.empty_like(x), x
'''


def test_parse_meta_registrations():
    regs = {r.op: r for r in parse(TEXT)}
    assert set(regs) == {"npu::npu_two", "aten::foo.out", "npu::npu_expr"}
    assert regs["npu::npu_two"].function == "two_meta"
    assert regs["npu::npu_two"].returns == ("out", "idx")
    assert regs["aten::foo.out"].returns == ("out",)
    assert regs["npu::npu_expr"].returns == ("", "x")


def test_parse_error_names_the_line():
    with pytest.raises(ValueError, match=r"_meta_registrations.py:1: not Python"):
        parse("def (:\n")


def test_committed_snapshot_has_flash_attention():
    regs = load("2.13.0")
    assert len(regs) > 200
    fa = regs["npu::npu_fusion_attention"]
    assert fa.returns[:4] == ("attention_score", "softmax_max", "softmax_sum", "softmax_out")
    assert load("0.0.0") == {}
