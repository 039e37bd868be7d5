"""analyzer.trace.memory and --mode auto: the live-bytes estimate, the real/meta choice,
and the watchdog that stops a real run before the OOM killer would."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from analyzer.model import OpCall, TensorMeta, Trace
from analyzer.trace import memory, trace
from analyzer.trace.memory import MemoryEstimate, Watchdog, estimate

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def _t(i: int, n: int) -> TensorMeta:
    return TensorMeta(i, "float32", (n,))  # n floats: 4n bytes


def test_estimate_simulates_live_bytes():
    calls = [
        # forward: w (leaf, 400 B) and x (leaf, 40 B) -> a (80 B) -> view v of a (free)
        OpCall(0, "aten::mm", "aten::mm.default", "forward", [_t(1, 100), _t(2, 10)], [_t(3, 20)]),
        OpCall(1, "aten::view", "aten::view.default", "forward", [_t(3, 20)], [_t(4, 20)]),
        OpCall(2, "aten::relu", "aten::relu.default", "forward", [_t(4, 20)], [_t(5, 20)]),
        # backward reads a (alive until here) and makes a grad g (400 B, read by optimizer)
        OpCall(3, "aten::mm", "aten::mm.default", "backward", [_t(3, 20), _t(5, 20)], [_t(6, 100)]),
        # optimizer: new state s (400 B) updated in place, param updated in place
        OpCall(4, "aten::zeros_like", "aten::zeros_like.default", "optimizer", [_t(1, 100)], [_t(7, 100)]),
        OpCall(5, "aten::add_", "aten::add_.Tensor", "optimizer", [_t(7, 100), _t(6, 100)], [_t(7, 100)]),
        OpCall(6, "aten::add_", "aten::add_.Tensor", "optimizer", [_t(1, 100), _t(7, 100)], [_t(1, 100)]),
    ]
    est = estimate(Trace(framework="torch", mode="meta", model="m.py", calls=calls))
    # the peak is at the optimizer's zeros_like: a and relu(a) died after the backward mm,
    # the grad g (400) is still read, the state s (400) lives on
    assert est == MemoryEstimate(leaves=440, optimizer_state=400, peak=440 + 400 + 400)
    assert est.transient == 400


def test_steady_estimate_counts_the_optimizer_state_from_the_start():
    """A later step runs its forward with the optimizer state the first step created: the
    same calls estimated with steady=True peak higher, by the state's share at the peak."""
    calls = [
        OpCall(0, "aten::mm", "aten::mm.default", "forward", [_t(1, 100), _t(2, 10)], [_t(3, 20)]),
        OpCall(1, "aten::relu", "aten::relu.default", "forward", [_t(3, 20)], [_t(5, 20)]),
        OpCall(2, "aten::mm", "aten::mm.default", "backward", [_t(3, 20), _t(5, 20)], [_t(6, 100)]),
        OpCall(3, "aten::zeros_like", "aten::zeros_like.default", "optimizer", [_t(1, 100)], [_t(7, 100)]),
        OpCall(4, "aten::add_", "aten::add_.Tensor", "optimizer", [_t(7, 100), _t(6, 100)], [_t(7, 100)]),
    ]
    t = Trace(framework="torch", mode="meta", model="m.py", calls=calls)
    first, later = estimate(t), estimate(t, steady=True)
    # first step: the peak is after the backward (a and relu(a) gone, g and s alive)
    assert first == MemoryEstimate(leaves=440, optimizer_state=400, peak=440 + 400 + 400)
    # a later step: s (400) is alive from the start, so the backward's peak holds
    # a (80) + relu(a) (80) + g (400) on top of the leaves and the state
    assert later == MemoryEstimate(leaves=440, optimizer_state=400, peak=440 + 400 + 80 + 80 + 400)


def test_auto_estimates_from_one_meta_step_whatever_steps_is(monkeypatch):
    """--steps 3 in auto mode: one meta step for the estimate (not three), then the real
    trace of the three steps asked for."""
    import analyzer.trace.torch as torch_tracer

    seen = []
    real_trace = torch_tracer.trace

    def spy(model, *, mode, steps, **kw):
        seen.append((mode, steps))
        return real_trace(model, mode=mode, steps=steps, **kw)

    monkeypatch.setattr(torch_tracer, "trace", spy)
    t = trace(FIX / "tiny_mlp.py", framework="torch", steps=3, adapted={"aten::addmm"})
    assert seen == [("meta", 1), ("real", 3)]
    assert t.mode == "real" and t.steps == 3


def test_auto_traces_the_steps_asked_for_when_it_keeps_meta(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    t = trace(FIX / "tiny_mlp.py", framework="torch", steps=2, adapted={"aten::addmm"})
    assert t.mode == "meta" and t.steps == 2


def test_auto_runs_real_when_the_step_fits():
    t = trace(FIX / "tiny_mlp.py", framework="torch", adapted={"aten::addmm"})
    assert t.mode == "real"
    assert t.notes[0].startswith("mode auto: real (a real step needs about ")


def test_auto_keeps_the_meta_trace_when_memory_is_short(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    for framework, model in (("torch", "tiny_mlp.py"), ("paddle", "eval_style_paddle.py")):
        t = trace(FIX / model, framework=framework, adapted={"aten::addmm"})
        assert t.mode == "meta" and t.calls, framework
        assert t.notes[0].startswith("mode auto: meta, shapes and dtypes only (a real step "
                                     "would need about ")
        assert t.notes[0].endswith("that is more than 50% of the 0 MB free; use --mode real "
                                   "to run it anyway)")


def test_auto_runs_scripts_once_for_real():
    t = trace(FIX / "script_paddle_train.py", framework="paddle", script_argv=[])
    assert t.mode == "real" and t.notes[0].startswith("mode auto: real (a --script runs once")


def test_watchdog_stops_with_a_message(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    codes = []
    dog = Watchdog(limit=1, what="the real-mode step", interval=0.01, exit_fn=codes.append)
    with dog:
        dog._thread.join(timeout=5)
    assert codes == [3]
    assert err.getvalue().startswith("opscan: error: stopped the real-mode step: it used ")
    assert "(use --mode meta, which allocates no tensor storage)" in err.getvalue()


def test_watchdog_is_quiet_below_its_limit(monkeypatch):
    codes = []
    with Watchdog(limit=1 << 60, what="x", interval=0.01, exit_fn=codes.append):
        pass
    assert codes == []


@pytest.mark.parametrize("avail,ok", [(None, True), (10_000, True), (1_999, False)])
def test_fits_asks_for_a_wide_margin(avail, ok):
    assert memory.fits(MemoryEstimate(0, 0, 1000), avail) is ok
