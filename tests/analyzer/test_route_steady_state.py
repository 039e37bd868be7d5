"""Issue 16 (scan wall time): once two consecutive profiled steps dispatched the same
calls and folded into the same route rows, later steps with the same calls reuse those
rows instead of running the RecordFunction profiler (analyzer.trace.torch.tracer
._StepProfiler); a step that differs is named in a note, and profiling resumes."""
from __future__ import annotations

from pathlib import Path

import pytest

import torch  # noqa: F401 - installed by scripts/setup.sh

from analyzer.trace.torch import tracer
from tests.analyzer import npu_adapted

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "models"
_DISABLE = torch.autograd._disable_profiler_legacy


def _trace(path: Path, steps: int, reuse: bool, monkeypatch):
    monkeypatch.setattr(tracer, "REUSE_STEADY_ROUTE", reuse)
    sessions: list[int] = []
    def spy():
        records = _DISABLE()
        sessions.append(sum(len(thread) for thread in records))
        return records

    monkeypatch.setattr(torch.autograd, "_disable_profiler_legacy", spy)
    tr = tracer.trace_torch(path, adapted=set(npu_adapted.adapted_ops()), steps=steps)
    assert not tr.partial, tr.error
    return tr, sessions


@pytest.mark.parametrize("model", ["tests/fixtures/models/tiny_mlp.py",  # SGD: steps 1 == 2
                                   "tests/fixtures/models/tiny_decoder.py"])  # AdamW: 1 != 2
def test_reused_rows_equal_profiling_every_step(model, monkeypatch):
    every, all_sessions = _trace(ROOT / model, 4, False, monkeypatch)
    steady, sessions = _trace(ROOT / model, 4, True, monkeypatch)
    assert steady.cpu_route == every.cpu_route
    assert [c.op for c in steady.calls] == [c.op for c in every.calls]
    assert len(all_sessions) == 5  # one per step, then the empty one stopped with the trace
    assert len(sessions) < len(all_sessions)  # at least step 4 was not profiled
    assert not any("CPU route" in n for n in steady.notes)


def test_a_step_that_differs_is_named_and_profiling_resumes(monkeypatch):
    every, _ = _trace(FIX / "route_diverging_step.py", 5, False, monkeypatch)
    steady, sessions = _trace(FIX / "route_diverging_step.py", 5, True, monkeypatch)
    # steps 1, 2 profiled (equal: steady), step 3 reused, step 4 differs (not profiled,
    # named), step 5 profiled again: equal to the reference, so steady again
    assert [n for n in steady.notes if "CPU route" in n] == [
        "CPU route: step 4 was not profiled and its calls differ from the steps before it, "
        "so its rows are not counted; later steps are profiled"]
    assert len(sessions) == 3, sessions
    assert {r.op for r in steady.cpu_route} <= {r.op for r in every.cpu_route}


def test_fingerprint_ignores_tensor_ids_only():
    from analyzer.model import OpCall, TensorMeta

    a = OpCall(0, "aten::add.Tensor", "aten::add.Tensor", "forward",
               [TensorMeta(1, "float32", (2, 3))], [TensorMeta(2, "float32", (2, 3))],
               "fc", "m.py:3", [], [], 1)
    b = OpCall(5, "aten::add.Tensor", "aten::add.Tensor", "forward",
               [TensorMeta(7, "float32", (2, 3))], [TensorMeta(9, "float32", (2, 3))],
               "fc", "m.py:3", [], [], 2)
    c = OpCall(5, "aten::add.Tensor", "aten::add.Tensor", "forward",
               [TensorMeta(7, "float32", (2, 4))], [TensorMeta(9, "float32", (2, 4))],
               "fc", "m.py:3", [], [], 2)
    assert tracer.step_fingerprint([a]) == tracer.step_fingerprint([b])
    assert tracer.step_fingerprint([a]) != tracer.step_fingerprint([c])


def test_an_unprofiled_failing_step_is_named(monkeypatch):
    monkeypatch.setattr(tracer, "REUSE_STEADY_ROUTE", True)
    tr = tracer.trace_torch(FIX / "route_failing_step.py",
                            adapted=set(npu_adapted.adapted_ops()), steps=5)
    assert tr.partial and "step 4 fails on purpose" in tr.error
    notes = [n for n in tr.notes if "CPU route" in n]
    assert len(notes) == 1 and notes[0].startswith("CPU route: the ")
    assert notes[0].endswith(" call(s) after step 3 were not profiled, so their rows are "
                             "not counted"), notes
