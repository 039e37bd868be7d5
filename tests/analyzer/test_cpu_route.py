""""CPU trace vs NPU route": for every bundled torch example, every op the torch profiler
records on a plain CPU step ("dump op") is either a report op or a row of the section.

Allowances, the section's own rules applied to the CPU run, for CPU paths chosen by
memory layout (the emulated NPU, like torch_npu, writes fresh outputs contiguously):
- an op the CPU ran nested inside an op the report lists as an NPU kernel runs inside that
  kernel on the NPU too (`cat` may `narrow`);
- an op nested inside a composite of the section is part of that composite's
  decomposition (`reshape` copies a non-contiguous gradient with `_unsafe_view`);
- the autograd engine's AccumulateGrad re-lays out a non-contiguous gradient
  (`new_empty_strided`); NPU gradients arrive contiguous.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import torch  # installed by scripts/setup.sh

from analyzer.trace.entry import load_entry  # noqa: E402
from analyzer.trace.torch.route import base, is_view_op  # noqa: E402
from analyzer.trace.torch.tracer import trace_torch  # noqa: E402
from tests.analyzer import npu_adapted  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# The 7B decoder is meta-only: its tiny config (same code) stands in for it.
MODELS = ["examples/torch_resnet50.py", "examples/torch_shufflenetv2.py",
          "examples/torch_transformer.py", "examples/torch_lstm_attention.py",
          "tests/fixtures/models/tiny_decoder.py", "tests/fixtures/models/recall_model.py",
          # real model code from a library (the `hf` extra)
          "examples/hf_llama_decoder.py", "examples/hf_convnext.py"]


def fold(name: str) -> str:
    """In-place and functional variants count as one op (`add_` ~ `add`): the autograd
    engine sums gradients with either, depending on who still references them."""
    n = base(name)
    return n[:-1] if n.endswith("_") and not n.endswith("__") else n


def cpu_profile(path: Path):
    entry = load_entry(path, "torch")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        entry.run_step()
    return [e for e in prof.events() if e.name.startswith("aten::")]


def unexplained(trace, events) -> list[str]:
    report_ops = {fold(c.op) for c in trace.calls}
    section = {fold(r.op) for r in trace.cpu_route}
    composites = {fold(r.op) for r in trace.cpu_route if r.reason in ("composite", "view")}
    out = set()
    for e in events:
        name = fold(e.name)
        if name in report_ops or name in section:
            continue
        p = e.cpu_parent
        while p is not None and fold(p.name) not in report_ops | composites \
                and "AccumulateGrad" not in p.name:
            p = p.cpu_parent
        if p is None:
            out.add(e.name)
    return sorted(out)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: Path(m).stem)
def test_profiler_ops_are_report_ops_or_route_rows(model):
    path = ROOT / model
    trace = trace_torch(path, adapted=set(npu_adapted.adapted_ops()))
    assert trace.cpu_route, "real mode always has CPU kernels inside NPU kernels"
    assert unexplained(trace, cpu_profile(path)) == []


def test_route_rows_say_why():
    trace = trace_torch(ROOT / "tests/fixtures/models/recall_model.py",
                        adapted=set(npu_adapted.adapted_ops()))
    rows = {(r.op, r.reason, r.under) for r in trace.cpu_route}
    # measured nesting: mm ran inside the adapted matmul, forward and backward
    assert ("aten::mm", "inside-adapted-op", "aten::matmul") in rows
    assert ("aten::mm", "inside-adapted-op", "aten::matmul_backward") in rows
    # a CPU-only kernel, and where it sat
    assert ("aten::_scaled_dot_product_flash_attention_for_cpu", "cpu-only",
            "aten::scaled_dot_product_attention") in rows
    # composites decompose above the backend; views are metadata
    assert ("aten::linear", "composite", "") in rows
    assert any(r[0] == "aten::t" and r[1] == "view" for r in rows)
    # the CPU optimizer's single-tensor ops vs the NPU's foreach kernels
    assert ("aten::add_", "foreach", "aten::_foreach_add_.List") in rows


def test_view_ops_by_schema():
    assert is_view_op("aten::t") and is_view_op("aten::view.default")
    assert not is_view_op("aten::add_.Tensor") and not is_view_op("aten::linear")


def test_meta_mode_rows_come_from_dispatched_kernels():
    trace = trace_torch(ROOT / "tests/fixtures/models/recall_model.py",
                        adapted=set(npu_adapted.adapted_ops()), mode="meta")
    rows = {(r.op, r.reason, r.under) for r in trace.cpu_route}
    assert ("aten::mm", "inside-adapted-op", "aten::matmul") in rows
    assert ("aten::add_", "foreach", "aten::_foreach_add_.List") in rows


class _Rec:
    """A legacy-profiler record: push (name, handle) or pop (handle)."""

    def __init__(self, kind, name, handle):
        self._k, self._n, self._h = kind, name, handle

    def kind(self):
        return self._k

    def name(self):
        return self._n

    def handle(self):
        return self._h


def _records(tree, out=None, ids=None):
    """Nested (name, [children]) -> push/pop records."""
    out = [] if out is None else out
    ids = ids if ids is not None else [0]
    for name, children in tree:
        ids[0] += 1
        h = ids[0]
        out.append(_Rec("push", name, h))
        _records(children, out, ids)
        out.append(_Rec("pop", "", h))
    return out


def test_route_folder_reads_nesting_from_push_pop_records():
    from analyzer.trace.torch.route import RouteFolder

    step = [
        ("aten::linear", [("aten::t", [("aten::transpose", [])]),  # composite above the NPU
                          ("opscan::kernel::aten::addmm", [
                              ("aten::empty", []),  # the emulator's bookkeeping: no row
                              ("opscan::cpu", [("aten::addmm", [("aten::addmm", [])]),
                                               ("aten::_mkldnn_foo", [])])])]),
        ("opscan::fallback::aten::erfinv", [("opscan::cpu", [("aten::erfinv", [
            ("aten::is_leaf", []), ("aten::copy_", [("aten::copy_", [])])])])]),
        ("opscan::kernel::aten::matmul (backward)", [("opscan::cpu", [("aten::mm", [])])]),
    ]
    records = _records(step)
    records.insert(0, _Rec("pop", "", 999))  # a range opened before the session began
    folder = RouteFolder()
    folder.fold([records])
    folder.fold([_records(step)])  # the next step: counts add up
    assert dict(folder.counts) == {
        ("aten::linear", "composite", ""): 2,
        ("aten::t", "view", "aten::linear"): 2,
        ("aten::transpose", "view", "aten::t"): 2,
        ("aten::_mkldnn_foo", "cpu-only", "aten::addmm"): 2,
        # a redispatch logs copy_ twice in a row: one event; is_leaf is hidden
        ("aten::copy_", "inside-cpu-fallback", "aten::erfinv"): 2,
        ("aten::mm", "inside-adapted-op", "aten::matmul (backward)"): 2,
    }
