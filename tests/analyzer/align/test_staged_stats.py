"""Small host tensors' statistics are staged (copied as they come by, reduced a buffer at a
time, stats.StagedReductions) instead of reduced one by one: the records must hold the
per-tensor path's numbers (Max/Min exactly, Mean/Norm within float32 rounding, the same
NaN/Inf counts and dtype/shape), for a mix of dtypes and layouts, NaN/Inf, values whose
squares overflow float32, 0-d tensors, empty tensors, a step whose staged tensors fill
the buffer several times, and tensors changed in place after they were recorded."""
from __future__ import annotations

import math

import pytest

from analyzer.align import stats


def _same(a: dict, b: dict, what) -> None:
    assert (a["dtype"], a["shape"], a["NanCount"], a["InfCount"]) == \
        (b["dtype"], b["shape"], b["NanCount"], b["InfCount"]), what
    for k in ("Max", "Min"):
        assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), (what, k)
    scale = max(abs(a["Max"]), abs(a["Min"])) if a["Max"] is not None else 0.0
    # float32 sums in another order: Mean within a few ulps of the largest magnitude
    assert a["Mean"] == pytest.approx(b["Mean"], rel=1e-6, abs=1e-6 * scale, nan_ok=True), (what, "Mean")
    assert a["Norm"] == pytest.approx(b["Norm"], rel=1e-6, nan_ok=True), (what, "Norm")


def _torch_cases():
    import torch

    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 40, generator=g) * 3 + 0.5
    return [base, base.t(), base[:, ::3], base.double(), base.to(torch.bfloat16), base.to(torch.float16),
            (base * 10).to(torch.int64), base > 0, base.to(torch.complex64), base.clone().requires_grad_(),
            torch.tensor(2.5), torch.tensor(-1.0, dtype=torch.float64), torch.empty(0), torch.empty(3, 0),
            torch.full((8,), 3e18), torch.full((4,), -1e30),  # squares overflow float32
            torch.tensor([1.0, float("nan"), float("inf")]), torch.tensor([float("-inf"), 2.0]),
            torch.tensor([1e300, 2.0], dtype=torch.float64),  # squares overflow float64
            torch.randn(2048, generator=g), torch.randn(2049, generator=g),  # at and past STAGED_MAX
            torch.randn(30000, generator=g)]  # the chunked path (unchanged)


def _run_torch(cases, staged: bool, monkeypatch) -> list:
    from analyzer.align import hooks_torch as ht

    monkeypatch.setattr(ht, "STAGED_MAX", stats.STAGED_MAX if staged else 0)
    batch = ht.new_step_stats()
    recs = [ht.queue_stats(t, batch)[0] for t in cases]
    batch.flush()
    return recs


def test_torch_staged_records_match_the_per_tensor_path(monkeypatch):
    cases = _torch_cases()
    staged, single = _run_torch(cases, True, monkeypatch), _run_torch(cases, False, monkeypatch)
    for t, a, b in zip(cases, staged, single):
        _same(a, b, (t.dtype, tuple(t.shape)))
    by_shape = {(str(r["dtype"]), tuple(r["shape"])): r for r in staged}
    assert by_shape[("torch.float32", ())]["Mean"] == 2.5
    nan = staged[16]
    assert math.isnan(nan["Max"]) and (nan["NanCount"], nan["InfCount"]) == (1, 1)
    assert (staged[17]["Min"], staged[17]["InfCount"]) == (-math.inf, 1)
    assert staged[14]["Norm"] == pytest.approx(3e18 * math.sqrt(8), rel=1e-6)
    assert staged[18]["Norm"] == math.inf and (staged[18]["NanCount"], staged[18]["InfCount"]) == (0, 0)
    assert staged[12]["Max"] is None and staged[12]["shape"] == [0]  # empty: no numbers, as before


def test_paddle_staged_records_match_the_per_tensor_path(monkeypatch):
    import numpy as np
    import paddle

    from analyzer.align import hooks_paddle as hp

    rng = np.random.default_rng(4)
    base = paddle.to_tensor((rng.standard_normal((6, 40)) * 3 + 0.5).astype("float32"))
    cases = [base, base.transpose([1, 0]), base.astype("float64"), base.astype("bfloat16"),
             base.astype("int64"), paddle.to_tensor(2.5), paddle.to_tensor([1.0, float("nan"), float("inf")]),
             paddle.full([8], 3e18), paddle.zeros([0]), paddle.to_tensor(rng.standard_normal(5000).astype("float32"))]
    got = {}
    for staged in (True, False):
        monkeypatch.setattr(hp, "STAGED_MAX", stats.STAGED_MAX if staged else 0)
        batch = stats.StepStats(hp._to_floats)  # Paddle's careful path: stats.numpy_fallback
        with paddle.no_grad():
            recs = [hp.queue_stats(t, batch)[0] for t in cases]
        batch.flush()
        got[staged] = recs
    for t, a, b in zip(cases, got[True], got[False]):
        _same(a, b, (str(t.dtype), tuple(t.shape)))
    assert (got[True][6]["NanCount"], got[True][6]["InfCount"]) == (1, 1)


def test_many_staged_tensors_fill_the_buffer_several_times(monkeypatch):
    """More staged elements than one buffer holds: full buffers are reduced as the step goes,
    each record still gets its own tensor's numbers (and an alias of it the same)."""
    import torch

    g = torch.Generator().manual_seed(5)
    cases = [torch.randn(int(n), generator=g) * (i % 7 + 1) for i, n in
             enumerate(torch.randint(1, stats.STAGED_MAX + 1, (100,), generator=g))]
    assert sum(t.numel() for t in cases) > 2 * stats._STAGE
    cases[33][5] = float("nan")
    staged, single = _run_torch(cases, True, monkeypatch), _run_torch(cases, False, monkeypatch)
    for t, a, b in zip(cases, staged, single):
        _same(a, b, t.numel())
        d = t.double()
        if not math.isnan(a["Max"]):
            assert a["Norm"] == pytest.approx(float(d.norm()), rel=1e-6)
            assert a["Mean"] == pytest.approx(float(d.mean()), abs=1e-6 * float(d.abs().max()))
    assert staged[33]["NanCount"] == 1


def test_alias_of_a_staged_tensor_with_nan_gets_the_counts():
    """The NaN/Inf counts of a staged tensor are known only at flush: every record sharing
    its slot (the recorder's identity cache) gets them there."""
    import torch

    from analyzer.align import hooks_torch as ht

    batch = ht.new_step_stats()
    rec, slot = ht.queue_stats(torch.tensor([1.0, float("nan"), float("-inf"), 2.0]), batch)
    twin = dict(rec, requires_grad=False)
    stats.StepStats.alias(slot, twin)
    batch.flush()
    for r in (rec, twin):
        assert math.isnan(r["Max"]) and (r["NanCount"], r["InfCount"]) == (1, 1)


def test_in_place_change_after_recording_does_not_reach_the_record(monkeypatch):
    """A module output changed in place after its hook ran (ReLU(inplace), `out += x`):
    the staged copy keeps the numbers at the hook, like the per-tensor path; through a
    whole recorded step of a model, both paths give the same records."""
    import torch
    from torch import nn

    from analyzer.align import hooks_torch as ht

    batch = ht.new_step_stats()
    t = torch.tensor([-1.0, 2.0, -3.0])
    rec, _ = ht.queue_stats(t, batch)
    t.clamp_(min=0)
    batch.flush()
    assert (rec["Max"], rec["Min"]) == (2.0, -3.0) and rec["Mean"] == pytest.approx(-2.0 / 3, rel=1e-7)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fc = nn.Linear(16, 16)
            self.act = nn.ReLU(inplace=True)
            self.out = nn.Linear(16, 4)

        def forward(self, x):
            h = self.act(self.fc(x))  # changes fc's output in place
            y = self.out(h)
            y += 1.0  # changes out's output in place
            return y

    def step_data(staged: bool) -> dict:
        monkeypatch.setattr(ht, "STAGED_MAX", stats.STAGED_MAX if staged else 0)
        model = Net()
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
        rec = ht.TorchRecorder(model).install()
        try:
            rec.begin_step(0)
            model(x).square().mean().backward()
            return rec.end_step().data
        finally:
            rec.remove()

    a, b = step_data(True), step_data(False)
    assert list(a) == list(b)
    fc_out = a["Module.fc.Linear.forward.0"]["output"][0]
    assert fc_out["Min"] < 0  # the output as fc returned it, before ReLU clamped it
    assert a["Module.act.ReLU.forward.0"]["output"][0]["Min"] == 0.0
    for key in a:
        for side, recs in a[key].items():
            flat_a = recs if isinstance(recs, list) else list(recs.values())
            other = b[key][side]
            flat_b = other if isinstance(other, list) else list(other.values())
            for ra, rb in zip(flat_a, flat_b):
                if isinstance(ra, list):
                    ra, rb = ra[0], rb[0]
                if isinstance(ra, dict) and "Max" in ra:
                    _same(ra, rb, (key, side))
