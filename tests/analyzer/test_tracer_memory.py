"""Issue 16: the tracers keep no tensor alive longer than the framework would (the paddle
recorder's id map used to hold every traced tensor, 2.7x the plain step's peak RSS on
PP-OCRv4). The scripts check at every step's end that earlier steps' tensors are freed,
and raise otherwise, which turns the trace partial. The torch route profiler holds one
step's events at a time. Peak RSS and wall time against the plain step are measured by
benchmarks/scan_cost.py (docs/benchmarks.md)."""
from __future__ import annotations

from pathlib import Path

from analyzer.trace import trace

FIX = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def test_paddle_tracer_keeps_no_tensor_alive():
    import paddle  # noqa: F401 - installed by scripts/setup.sh
    tr = trace(FIX / "script_tensor_lifetime_paddle.py", framework="paddle", steps=3,
               script_argv=["-c", "x.yml"])
    assert not tr.partial, tr.error
    assert tr.steps == 3


def test_torch_tracer_keeps_no_tensor_alive():
    import torch  # noqa: F401 - installed by scripts/setup.sh
    from tests.analyzer import npu_adapted

    tr = trace(FIX / "script_tensor_lifetime_torch.py", framework="torch", steps=3,
               script_argv=["-c", "x.yml"], adapted=npu_adapted.adapted_ops())
    assert not tr.partial, tr.error
    assert tr.steps == 3


def test_torch_route_profiler_holds_one_step_at_a_time(monkeypatch):
    """Real mode profiles the step to measure what runs inside each emulated kernel. A
    single profiler session for the whole trace held every step's events (torch_shufflenetv2:
    peak RSS 1.45x the plain step at --steps 1, 2.27x at --steps 4); now each step's events
    are folded into route rows and dropped at the step's end, so what the profiler holds
    is one step's worth whatever --steps is."""
    import torch

    from analyzer.trace.torch.tracer import trace_torch
    from tests.analyzer import npu_adapted

    held: list[int] = []
    disable = torch.autograd._disable_profiler_legacy

    def spy():
        records = disable()
        held.append(sum(len(thread) for thread in records))
        return records

    monkeypatch.setattr(torch.autograd, "_disable_profiler_legacy", spy)
    from analyzer.trace.torch import tracer
    monkeypatch.setattr(tracer, "REUSE_STEADY_ROUTE", False)  # profile every step
    tr = trace_torch(FIX / "tiny_mlp.py", adapted=set(npu_adapted.adapted_ops()), steps=4)
    assert not tr.partial, tr.error
    assert tr.cpu_route
    # one session per step (then an empty one, stopped with the trace)
    assert len(held) == 5, held
    assert held[1] == held[2] == held[3], held  # steps 2..4 run the same ops: same size
    assert held[4] < held[1] / 10, held
