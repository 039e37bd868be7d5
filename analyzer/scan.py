"""The scan pipeline as a library call: trace -> graph -> classify -> fallback cost -> ScanReport.

    result = scan(ScanOptions(model="examples/torch_resnet50.py", framework="torch"))
    result.report.to_json()   # what every report format renders from

The CLI (`opscan`) only parses arguments, calls `scan()` and writes the reports.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from analyzer.model import CATEGORIES, GAP_CATEGORIES, FallbackCost, ScanReport, Trace

REPORT_SCHEMA_VERSION = 1


@dataclass
class ScanOptions:
    model: str
    framework: str
    mode: str = "auto"
    target: str | None = None
    soc: str | None = None
    steps: int = 1
    script: bool = False
    script_args: list[str] = field(default_factory=list)
    progress: Callable[[str], None] | None = None


@dataclass
class ScanResult:
    report: ScanReport
    trace: Trace
    graphml: str  # GraphML text of the call graph


def trace_model(opts: ScanOptions, adapted: set[str]) -> Trace:
    """Run the framework's tracer (`analyzer.trace.trace`) on the model file."""
    from analyzer.trace import MODES, trace

    if opts.mode not in MODES:
        from opdb.errors import OpscanError
        raise OpscanError(f"unknown --mode {opts.mode!r}", hint="use auto, real or meta")
    return trace(opts.model, framework=opts.framework, mode=opts.mode, steps=opts.steps,
                 adapted=adapted, script_argv=list(opts.script_args) if opts.script else None,
                 progress=opts.progress)


def normalize_op_names(trace: Trace) -> None:
    """Give every call opdb's op spelling (`aten::add.Tensor`), so trace, graph and
    verdicts use one name per op."""
    from analyzer.classify import opdb_op_name

    if trace.framework != "torch":  # paddle calls already carry the phi kernel name
        return
    for c in trace.calls:
        c.op = opdb_op_name(trace.framework, c.overload or c.op)


def summary_line(report_model: str, target: str, soc: str, verdicts, fallback: FallbackCost,
                 partial: bool) -> str:
    """The one line people act on."""
    kernels = [v for v in verdicts if v.category != "not-a-kernel"]
    gaps = [v for v in kernels if v.category in GAP_CATEGORIES]
    ops = {v.op for v in kernels}
    gap_ops = {v.op for v in gaps}
    calls = sum(v.calls for v in kernels)
    gap_calls = sum(v.calls for v in gaps)
    name = Path(report_model).name
    head = f"{'PARTIAL: ' if partial else ''}{name} on {target} ({soc}): "
    setup = sum(v.setup_calls for v in kernels)
    tail = ""
    if setup:  # ops count for coverage; their calls are not per-step work
        tail = (f"; {setup} setup calls before the first step "
                f"({sum(v.setup_calls for v in gaps)} in ops with gaps)")
    if not gaps:
        return head + f"all {len(ops)} kernel ops ({calls} calls) have an NPU adapter" + tail
    by_cat = Counter(v.category for v in gaps)
    cats = ", ".join(f"{by_cat[c]} {c}" for c in CATEGORIES if by_cat.get(c))
    mb = fallback.bytes / 1e6
    return (head + f"{len(ops) - len(gap_ops)}/{len(ops)} kernel ops supported; "
            f"{len(gap_ops)} ops with gaps ({cats}) in {gap_calls} of {calls} calls; "
            f"CPU fallback would cost {fallback.transfers} transfers ({mb:.2f} MB) per step"
            + tail)


def scan(opts: ScanOptions, db=None) -> ScanResult:
    """Trace the model, classify every op against opdb for the target, and build the report."""
    from analyzer.classify import ClassifyContext, classify_trace
    from analyzer.fallback import compute_fallback, gap_keys, passthrough_keys
    from analyzer.graph import build_call_graph, graph_summary, graphml_text
    from opdb.query import OpDB

    say = opts.progress or (lambda _text: None)
    if db is None:
        say("opening opdb")
        db = OpDB.open()
    ctx = ClassifyContext.create(db, opts.framework, opts.target, opts.soc)
    say(f"target {ctx.target}, soc {ctx.soc}")
    trace = trace_model(opts, db.adapted_ops(opts.framework, ctx.target))
    normalize_op_names(trace)
    say(f"classifying {len(trace.calls)} calls ({len(trace.unique_ops())} unique ops)")
    verdicts = classify_trace(ctx, trace)
    say("building the op graph and the fallback cost")
    graph = build_call_graph(trace)
    fallback = compute_fallback(graph, gap_keys(verdicts), passthrough_keys(verdicts),
                                steps=trace.steps)
    counts = {c: 0 for c in CATEGORIES}
    for v in verdicts:
        counts[v.category] += 1
    notes = list(trace.notes)
    blacklist = sorted({n for v in verdicts if v.category == "signature-drift"
                        for n in [v.op, *v.aliases]})
    if blacklist:
        notes.append(f'CUSTOM_DEVICE_BLACK_LIST suggestion: export CUSTOM_DEVICE_BLACK_LIST="{",".join(blacklist)}"')
    for op, n in sorted(trace.cpu_only_ops.items()):
        notes.append(f"CPU-only kernel avoided: {op} ({n} calls on CPU; the NPU runs the op it came from)")
    report = ScanReport(
        schema_version=REPORT_SCHEMA_VERSION, tool="opscan 0.1.0", model=str(opts.model),
        framework=opts.framework, framework_version=trace.framework_version, mode=trace.mode,
        target=str(ctx.target), soc=ctx.soc, steps=trace.steps, partial=trace.partial,
        error=trace.error,
        summary=summary_line(str(opts.model), str(ctx.target), ctx.soc, verdicts, fallback, trace.partial),
        counts=counts, verdicts=verdicts, fallback=fallback, notes=notes,
        opdb={"snapshot_sha256": db.snapshot_sha256},
        graph=graph_summary(graph), cpu_route=list(trace.cpu_route))
    return ScanResult(report, trace, graphml_text(graph))
