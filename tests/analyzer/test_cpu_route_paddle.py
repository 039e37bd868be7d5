""""CPU trace vs NPU route" for Paddle: for every bundled Paddle example (and a model with
the kernels Paddle's profiler misses), every kernel and every API the Paddle profiler
shows for a plain CPU step (the porting guides' "dump op" method: export the profiler
trace, list its ops) is a report op, an alias of one, or a row of the section.

Paddle's kernel choice does not depend on the device, so the section is empty for Paddle
and everything the profiler shows must be in the trace itself. The other direction
(kernels the NPU runs that a CPU profiler never shows: unrecorded `add_n` /
`embedding_grad`, the gradient-accumulation `add`s) is checked against Paddle's kernel
log in test_paddle_kernel_log.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import paddle  # installed by scripts/setup.sh

from analyzer.trace.entry import load_entry  # noqa: E402
from analyzer.trace.paddle.tracer import trace_paddle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["examples/paddle_resnet50.py", "examples/paddle_mobilenetv3.py",
          "examples/paddle_crnn.py", "tests/fixtures/models/paddle_embedding_fanout.py"]


def dump_op(path: Path, tmp_path: Path) -> tuple[set[str], set[str]]:
    """(kernels, APIs) of one profiled CPU step, read from the exported trace file."""
    from paddle import profiler

    entry = load_entry(path, "paddle")
    out = tmp_path / "dump.json"
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                             on_trace_ready=lambda _p: None)
    prof.start()
    try:
        entry.run_step()
    finally:
        prof.stop()
    prof.export(str(out), format="json")
    prof.profiler = None  # one live profiler per process: let the tracer make its own
    kernels, apis = set(), set()
    for e in json.loads(out.read_text())["traceEvents"]:
        name = e.get("name", "").rsplit("[", 1)[0]
        if e.get("cat") == "DygraphKernelLaunch":
            kernels.add(name.removesuffix(" kernel launch"))
        elif e.get("cat") == "Operator" and name.endswith(" dygraph"):
            apis.add(name.removesuffix(" dygraph"))
    return kernels, apis


@pytest.mark.parametrize("model", MODELS, ids=lambda m: Path(m).stem)
def test_profiler_ops_are_report_ops_or_route_rows(model, tmp_path):
    path = ROOT / model
    kernels, apis = dump_op(path, tmp_path)
    trace = trace_paddle(path)
    ops = {c.op for c in trace.calls}
    names = ops | {a for c in trace.calls for a in c.aliases}
    section = {r.op for r in trace.cpu_route}
    assert kernels, "the profiler recorded no kernel launches"
    assert sorted(kernels - ops - section) == []
    assert sorted(apis - names - section) == []
    # the report has more than the profiler: only kernels the profiler cannot show
    extra = ops - kernels
    assert extra <= {"add_n", "embedding_grad"} | {c.op for c in trace.calls if c.cpu_ops}
