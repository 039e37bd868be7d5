"""Real-mode Paddle traces vs Paddle's own kernel-selection log (issue 12, item 4).

Paddle's profiler records no launch event for some kernels the runtime selects
(`add_n`, `embedding_grad`); the tracer names them from their API / grad-node scope.
This cross-check runs each model's step in a subprocess with Paddle's GLOG kernel-key
lines on and requires the trace to hold exactly the kernels selected there, call for
call, so a Paddle release that stops recording other kernels fails here.

The only trace calls the log cannot show are the NPU's gradient-accumulation `add`s
(CPU sums gradients with BLAS axpy, no kernel): they carry `cpu_ops=[CPU_ACCUMULATE]`
and are checked against a CPU run with `create_graph=True`, which takes the NPU's path
(`add_ad_func`) on CPU too.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import paddle  # installed by scripts/setup.sh

from analyzer.trace.entry import load_entry  # noqa: E402
from analyzer.trace.paddle.kernel_log import parse, run_logged  # noqa: E402
from analyzer.trace.paddle.real import CPU_ACCUMULATE, MARK, collect_launches  # noqa: E402
from analyzer.trace.paddle.tracer import trace_paddle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["examples/paddle_resnet50.py", "examples/paddle_mobilenetv3.py",
          "examples/paddle_crnn.py", "tests/fixtures/models/paddle_embedding_fanout.py",
          "tests/fixtures/models/paddle_buffers.py", "tests/fixtures/models/paddle_db_loss.py"]


def _split(trace):
    selected = Counter(c.op for c in trace.calls if CPU_ACCUMULATE not in c.cpu_ops)
    accumulated = [c for c in trace.calls if CPU_ACCUMULATE in c.cpu_ops]
    return selected, accumulated


@pytest.mark.parametrize("model", MODELS, ids=lambda m: Path(m).stem)
def test_trace_holds_every_kernel_the_runtime_selects(model):
    path = ROOT / model
    log = run_logged(path)
    selected, _ = _split(trace_paddle(path))
    assert log.lines > 0, "no kernel-key lines: did Paddle change its GLOG format?"
    assert log.kernels - selected == Counter(), "selected by Paddle, missing in the trace"
    assert selected - log.kernels == Counter(), "in the trace, never selected by Paddle"


def test_log_reads_the_legacy_operator_path():
    """Ops run through the legacy operator path select their phi kernel in
    prepared_operator.cc, which names the kernel itself (no `API kernel key` line)."""
    text = ("I1125 10:35:22.928642 15570 prepared_operator.cc:299] Dynamic mode PrepareImpl"
            " - kernel name: relu | kernel key: (CPU, Undefined(AnyLayout), float32) | "
            "kernel: {\n"
            "I1125 10:35:22.928824 15570 api.cc:122399] sum API kernel key: [CPU, NCHW, "
            "float32]\n"
            "I1125 10:35:22.929066 15570 prepared_operator.cc:299] Dynamic mode PrepareImpl"
            " - kernel name: relu_grad | kernel key: (CPU, Undefined(AnyLayout), float32)\n")
    log = parse(text)
    assert log.kernels == Counter({"relu": 1, "sum": 1, "relu_grad": 1})
    assert log.apis == Counter({"sum": 1}) and log.lines == 3


def test_legacy_activation_is_logged_and_traced():
    path = ROOT / "tests/fixtures/models/paddle_legacy_act.py"
    log = run_logged(path)
    assert log.kernels["relu"] == 1 and log.kernels["relu_grad"] == 1
    selected, _ = _split(trace_paddle(path))
    assert selected == log.kernels


def test_unrecorded_kernels_are_in_the_trace():
    trace = trace_paddle(ROOT / "tests/fixtures/models/paddle_embedding_fanout.py")
    selected, accumulated = _split(trace)
    assert selected["add_n"] == 1 and selected["embedding_grad"] == 1
    grad = next(c for c in trace.calls if c.op == "embedding_grad")
    assert grad.phase == "backward" and grad.module == "emb"
    assert {t.shape for t in grad.inputs} >= {(4, 6), (50, 16), (4, 6, 16)}
    add_n = next(c for c in trace.calls if c.op == "add_n")
    assert add_n.phase == "forward" and [t.shape for t in add_n.inputs] == [(4, 6, 16)] * 2
    assert any("add_n x1, embedding_grad x1" in n for n in trace.notes)
    # h feeds fc, multiply and add_n (2 adds); the tied weight feeds embedding and matmul
    assert sorted(t.inputs[0].shape for t in accumulated) == [(4, 6, 16), (4, 6, 16), (50, 16)]
    assert all(c.op == "add" and c.phase == "backward" for c in accumulated)


def test_accumulation_count_matches_the_create_graph_path():
    """paddle.grad(create_graph=True) sums gradients with add_ad_func on CPU, the path a
    custom device always takes: its extra `add` launches are the accumulations."""
    from paddle import profiler

    path = ROOT / "tests/fixtures/models/paddle_fanout.py"
    _, accumulated = _split(trace_paddle(path))
    entry = load_entry(path, "paddle")
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                             on_trace_ready=lambda _p: None)
    prof.start()
    try:
        for text in ("begin", "phase|backward"):
            ev = profiler.RecordEvent(MARK + text)
            ev.begin()
            ev.end()
        loss = entry.model(*entry.inputs)
        ev = profiler.RecordEvent(MARK + "phase|backward")
        ev.begin()
        paddle.grad([loss], list(entry.model.parameters()), create_graph=True)
        ev.end()
    finally:
        prof.stop()
    launches = collect_launches(prof.profiler_result)
    prof.profiler = None
    measured = sum(1 for la in launches if la.kernel == "add" and la.ctx.phase == "backward")
    assert measured == len(accumulated) == 7


def test_kernel_log_lines_parse():
    text = "\n".join([
        "I1124 00:30:34.0 1 api.cc:9] full_ API kernel key: [CPU, NCHW, float32]",
        "opscan-kernel-log-begin",
        "I1124 00:30:34.0 1 api.cc:9] adam_ API kernel key: [CPU, NCHW, float32]",
        "I1124 00:30:34.0 1 api_custom_impl.cc:1306] embedding_grad API kernel key: [CPU]",
        "I1124 00:30:34.0 1 api.cc:9] adam kernel: {\"input\":[",
        "opscan-kernel-log-end",
        "I1124 00:30:34.0 1 api.cc:9] sgd_ API kernel key: [CPU, NCHW, float32]"])
    log = parse(text)
    assert log.kernels == Counter({"adam": 1, "embedding_grad": 1})
    assert log.apis == Counter({"adam_": 1, "embedding_grad": 1})
