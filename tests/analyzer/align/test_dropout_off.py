"""Dropout off in a torch dump: the swapped names (F.dropout*, torch.dropout*,
scaled_dot_product_attention's dropout_p) are restored after each step, and a dropout
called through a name bound before the swap is caught by the first step's catch-all, which
then stays on for the run."""
from __future__ import annotations

import types

import torch
import torch.nn.functional as F
from torch.nn.functional import dropout as early_bound_dropout

from analyzer.align.session_torch import TorchSession


def _entry(model):
    return types.SimpleNamespace(model=model, inputs=())


class _Functional(torch.nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, True) + torch.dropout(x, 0.5, True)


class _EarlyBound(torch.nn.Module):
    def forward(self, x):
        return early_bound_dropout(x, 0.5, True)


def test_swapped_names_restored_and_catch_all_dropped():
    s = TorchSession(_entry(_Functional()))
    x = torch.ones(64, 64)
    before = F.dropout, torch.dropout, F.scaled_dot_product_attention
    for _ in range(3):
        with s.step_context(None):
            assert torch.equal(s.model(x), 2 * x)
            q = torch.randn(1, 2, 4, 8)
            out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.9)
            assert torch.allclose(out, F.scaled_dot_product_attention(q, q, q))
        assert (F.dropout, torch.dropout, F.scaled_dot_product_attention) == before
    assert s._guard is False  # the first step showed the swap misses nothing
    hits = s.dropout_hits()
    assert hits["dropout"] == 6 and hits["scaled_dot_product_attention(dropout_p)"] == 3


def test_early_bound_dropout_keeps_the_catch_all_on():
    s = TorchSession(_entry(_EarlyBound()))
    x = torch.ones(64, 64)
    for _ in range(3):
        with s.step_context(None):
            assert torch.equal(s.model(x), x)
    assert s._guard is True and s.dropout_hits()["dropout"] == 3
    assert any("catch-all" in n for n in s.notes)
    # without the session the same call drops values: the test can fail
    assert not torch.equal(_EarlyBound()(x), x)
