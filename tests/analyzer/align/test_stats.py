"""Statistics records: the CPU path (values read at once) and the device path (values kept
on the device, one conversion per step) give the same numbers, NaN/Inf are counted on
both, and a tensor seen twice shares one queued reduction."""
from __future__ import annotations

import math

import pytest

from analyzer.align.stats import StepStats


def _frameworks():
    import paddle
    import torch

    from analyzer.align import hooks_paddle as hp, hooks_torch as ht
    return [("torch", ht, lambda v: torch.tensor(v, dtype=torch.float32)),
            ("paddle", hp, lambda v: paddle.to_tensor(v, dtype="float32"))]


@pytest.mark.parametrize("i", [0, 1], ids=["torch", "paddle"])
def test_host_and_device_paths_agree(i):
    _, hooks, make = _frameworks()[i]
    values = [[1.5, -2.0, 3.25], [0.0], [1.0, float("nan"), float("inf"), float("-inf")]]
    got = {}
    for on_device in (False, True):
        batch = StepStats(hooks._to_floats)
        recs = [hooks.queue_stats(make(v), batch, on_device=on_device)[0] for v in values]
        assert recs[0]["Max"] is None  # filled only at flush
        batch.flush()
        got[on_device] = recs
    for host, dev in zip(got[False], got[True]):
        for k in ("Max", "Min", "Mean", "Norm"):
            assert host[k] == pytest.approx(dev[k], rel=1e-6, nan_ok=True)
        assert (host["NanCount"], host["InfCount"]) == (dev["NanCount"], dev["InfCount"])
    first, zero, bad = got[False]
    assert (first["Max"], first["Min"], first["Mean"]) == (3.25, -2.0, 0.916666687)
    assert first["Norm"] == pytest.approx(math.sqrt(1.5 ** 2 + 4 + 3.25 ** 2), rel=1e-7)
    assert zero["Norm"] == 0.0 and zero["NanCount"] == 0
    assert (bad["NanCount"], bad["InfCount"]) == (1, 2) and math.isnan(bad["Max"])
    assert first["dtype"] == "torch.float32" and first["shape"] == [3]


def test_alias_shares_the_queued_numbers():
    import torch

    from analyzer.align import hooks_torch as ht

    batch = StepStats(ht._to_floats)
    rec, slot = ht.queue_stats(torch.tensor([2.0, 4.0]), batch)
    twin = dict(rec, requires_grad=True)
    StepStats.alias(slot, twin)
    batch.flush()
    assert rec["Mean"] == twin["Mean"] == 3.0 and twin["requires_grad"] is True


def test_torch_cpu_numpy_path_matches_torch_reductions(monkeypatch):
    """Small CPU tensors are staged and reduce through numpy; the numbers are torch's own
    within float rounding (max/min exactly), whatever the dtype or layout; NaN/Inf and
    values whose squares would overflow float32 take torch's path (on the staged copy) and
    keep their counts."""
    import torch

    from analyzer.align import hooks_torch as ht

    g = torch.Generator().manual_seed(0)
    base = torch.randn(6, 40, generator=g) * 3 + 0.5
    cases = [base, base.t(), base[:, ::3], base.to(torch.bfloat16), base.to(torch.float16),
             base.double(), (base * 10).to(torch.int64), base > 0, base.requires_grad_(),
             torch.nn.Parameter(base.clone()), torch.full((8,), 3e18), torch.full((4,), -1e30),
             torch.tensor([1.0, float("nan"), float("inf")]), base.to(torch.complex64)]

    def run(limit):
        monkeypatch.setattr(ht, "_NUMPY_MAX", limit)
        batch = ht.new_step_stats()
        recs = [ht.queue_stats(t, batch)[0] for t in cases]
        batch.flush()
        return recs

    staged, fell_back = [], []  # tensors staged for numpy; those sent on to torch's path
    real_add, real_fallback = StepStats.add_array, ht._staged_fallback
    monkeypatch.setattr(StepStats, "add_array", lambda self, *a: staged.append(1) or real_add(self, *a))
    monkeypatch.setattr(ht, "_staged_fallback", lambda a: fell_back.append(1) or real_fallback(a))
    by_numpy, by_torch = run(1 << 14), run(0)
    assert len(staged) == len(cases)
    assert len(fell_back) == 3  # the overflowing two and the NaN/Inf one: torch's path on the copy
    for t, a, b in zip(cases, by_numpy, by_torch):
        assert (a["Max"], a["Min"], a["NanCount"], a["InfCount"]) == (b["Max"], b["Min"], b["NanCount"], b["InfCount"]) \
            or math.isnan(a["Max"]), t
        assert a["Mean"] == pytest.approx(b["Mean"], rel=1e-6, abs=1e-6, nan_ok=True), t
        assert a["Norm"] == pytest.approx(b["Norm"], rel=1e-6, nan_ok=True), t
        assert a["dtype"] == b["dtype"] and a["shape"] == b["shape"]
    assert by_numpy[10]["Norm"] == pytest.approx(3e18 * math.sqrt(8), rel=1e-6)  # squares overflow float32
    assert (by_numpy[12]["NanCount"], by_numpy[12]["InfCount"]) == (1, 1)


def test_paddle_view_and_copy_paths_agree(monkeypatch):
    """Paddle CPU tensors: a DLPack view (large tensors) and Tensor.numpy()'s copy (small
    ones) give the same numbers, on a strided view and on bfloat16 too."""
    import numpy as np
    import paddle

    from analyzer.align import hooks_paddle as hp

    paddle.seed(0)
    base = paddle.randn([64, 48]) * 2 + 0.25
    cases = [base, base.transpose([1, 0]), base.astype("bfloat16"), base.astype("float64")]
    views = []
    real = np.from_dlpack
    monkeypatch.setattr(np, "from_dlpack", lambda x: views.append(1) or real(x))
    got = {}
    for limit in (0, 1 << 30):  # every tensor viewed / every tensor copied
        monkeypatch.setattr(hp, "_VIEW_MIN", limit)
        got[limit] = [hp.tensor_stats(t) for t in cases]
    assert len(views) == len(cases)
    for a, b in zip(got[0], got[1 << 30]):
        assert a == b


def _reference_fill(values, n, single):
    """What a record's four numbers must be: Mean = Sum / numel; computed in float32 ->
    the mean rounded to float32 (kept when beyond float32's range), all four to 9 digits."""
    import struct

    mx, mn, total, norm = values
    mean = total / n
    if single:
        if abs(mean) <= 3.4028234663852886e38 or mean != mean:
            mean = struct.unpack("f", struct.pack("f", mean))[0]
        return [float("%.9g" % v) for v in (mx, mn, mean, norm)]
    return [mx, mn, mean, norm]


@pytest.mark.parametrize("mix", ["all-float32", "mixed", "float64", "mean-overflow"])
def test_host_flush_fills_every_record_like_the_reference(mix):
    """The host path's one-pass flush (all float32, a mix with float64, none) gives each
    record, and each alias of it, exactly the reference numbers."""
    import random

    rnd = random.Random(mix)
    batch = StepStats(lambda vals: pytest.fail("no device group here"))
    want, recs = [], []
    for i in range(40):
        single = {"all-float32": True, "mixed": i % 3 != 0, "float64": False, "mean-overflow": True}[mix]
        vals = (rnd.uniform(0, 50), rnd.uniform(-50, 0), rnd.uniform(-1e3, 1e3) / 7, rnd.uniform(0, 1e4) / 3)
        if mix == "mean-overflow" and i == 5:
            vals = (1e39, 1.0, 1e40, 1e39)  # a float64 beyond float32's range stays as it is
        if i == 7:
            vals = (float("nan"), float("nan"), float("nan"), float("inf"))
        n = rnd.randint(1, 5000)
        rec = {"Max": None}
        slot = batch.add_host(vals, rec, n, single)
        twin = {}
        StepStats.alias(slot, twin)
        recs.append((rec, twin))
        want.append(_reference_fill(vals, n, single))
    assert len(batch) == 40
    batch.flush()
    for (rec, twin), exp in zip(recs, want):
        for r in (rec, twin):
            got = [r["Max"], r["Min"], r["Mean"], r["Norm"]]
            assert [repr(g) for g in got] == [repr(e) for e in exp]
    assert len(batch) == 0


def _large_cases(torch):
    """Large float tensors: bfloat16-valued float32 (few mantissa bits: float32 accumulation
    errors add up instead of cancelling), not a whole number of chunks or rows, a permuted
    (channels-last) layout, float64, and a shifted mean."""
    g = torch.Generator().manual_seed(1)
    n = 4 * (1 << 18) + 3 * 1024 + 7
    base = (torch.randn(n, generator=g) * 2 + 0.3).to(torch.bfloat16).float()
    img = torch.randn(4, 96, 56, 56, generator=g)
    return [base, img.permute(0, 2, 3, 1), img.double(), base[: 1 << 17] + 100.0]


def test_large_tensors_reduce_in_chunks_close_to_float64():
    """Above 16K elements the CPU statistics go through numpy in 1 MB chunks: Max and Min
    exact, Sum and Norm within 1e-7 relative of float64 (torch's float32 vector_norm is
    1e-5 off on the first case, 1M bfloat16-valued elements); Paddle's DLPack path the same."""
    import paddle
    import torch

    from analyzer.align import hooks_paddle as hp, hooks_torch as ht

    for t in _large_cases(torch):
        d = t.double()
        rms = float(d.norm()) / math.sqrt(d.numel())
        want_norm = float(d.norm())
        recs = [ht.tensor_stats(t), hp.tensor_stats(paddle.to_tensor(t.contiguous().numpy()))]
        for rec in recs:
            single = t.dtype == torch.float32
            exact = (lambda v: float("%.9g" % v)) if single else float
            assert (rec["Max"], rec["Min"]) == (exact(float(d.max())), exact(float(d.min())))
            assert abs(rec["Mean"] - float(d.mean())) <= 1e-7 * rms
            assert rec["Norm"] == pytest.approx(want_norm, rel=1e-7)
            assert (rec["NanCount"], rec["InfCount"]) == (0, 0)
    big = _large_cases(torch)[0]
    assert abs(float(torch.linalg.vector_norm(big)) - float(big.double().norm())) > 1e-6 * float(big.double().norm())


def test_large_tensor_with_nan_inf_in_a_later_chunk():
    """A NaN or Inf past the first chunk: Max/Min propagate it, the counts are right, on
    both frameworks' CPU paths."""
    import paddle
    import torch

    from analyzer.align import hooks_paddle as hp, hooks_torch as ht

    x = torch.randn(3 * (1 << 18) + 5)
    x[(1 << 18) + 17] = float("nan")
    x[-1] = float("-inf")
    y = torch.randn(3 * (1 << 18))
    y[-3] = float("inf")
    for t in (x, y):
        for rec in (ht.tensor_stats(t), hp.tensor_stats(paddle.to_tensor(t.numpy()))):
            if t is x:
                assert math.isnan(rec["Max"]) and (rec["NanCount"], rec["InfCount"]) == (1, 1)
            else:
                assert rec["Max"] == math.inf and (rec["NanCount"], rec["InfCount"]) == (0, 1)
                assert rec["Min"] == float("%.9g" % float(y[:-3].min()))


def test_tensor_that_requires_grad_is_read_without_a_python_detach(monkeypatch):
    """A CPU float tensor that requires grad is read through `Tensor.numpy(force=True)`
    (the detached view made inside the call), not a Python-level `detach()` then
    `numpy()`: ~3,200 instructions less per record; the same record either way."""
    import torch

    from analyzer.align import hooks_torch as ht

    x = (torch.linspace(-2, 3, 300, requires_grad=True) * 1.5).reshape(20, 15)
    want = ht.tensor_stats(x.detach().clone().requires_grad_(True))
    calls = []
    real = torch.Tensor.detach
    monkeypatch.setattr(torch.Tensor, "detach", lambda self: calls.append(1) or real(self))
    got = ht.tensor_stats(x)
    assert calls == []
    assert got == want and got["requires_grad"] is True
