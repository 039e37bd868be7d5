"""The scan pipeline as a library call: trace -> graph -> classify -> fallback cost -> ScanReport.

    result = scan(ScanOptions(model="examples/torch_resnet50.py", framework="torch"))
    result.report.to_json()   # what every report format renders from

The CLI (`opscan`) only parses arguments, calls `scan()` and writes the reports.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from typing import Callable

from analyzer.model import FallbackCost, ScanReport, Trace

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
    suspects: tuple[str, ...] = ()  # paddle: kernels to blacklist as precision suspects
    current_blacklist: str | None = None  # paddle: the user's CUSTOM_DEVICE_BLACK_LIST to judge


@dataclass
class ScanResult:
    report: ScanReport
    trace: Trace
    graphml: str  # GraphML text of the call graph
    pairing: list = field(default_factory=list)  # target vs installed framework, freshness
    graph: object = None  # the call graph (analyzer.graph.build_call_graph)


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
    """Give every call opdb's op spelling (`aten::add.Tensor`, opdb.names.normalize_op_name),
    so trace, graph and verdicts use one name per op."""
    from opdb.names import normalize_op_name

    if trace.framework != "torch":  # paddle calls already carry the phi kernel name
        return
    for c in trace.calls:
        c.op = normalize_op_name(trace.framework, c.overload or c.op)


def summary_line(report_model: str, target: str, soc: str, verdicts, fallback: FallbackCost,
                 partial: bool) -> str:
    """The one line people act on (owned by ScanReport.summarize)."""
    return ScanReport.summarize(report_model, target, soc, verdicts, fallback, partial)


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
    pairing = db.pairing(opts.framework, ctx.target if opts.target else None).lines()
    say(f"target {ctx.target}, soc {ctx.soc}")
    trace = trace_model(opts, db.adapted_ops(opts.framework, ctx.target))
    normalize_op_names(trace)
    groups = trace.unique_ops()  # calls by (op, dtypes): grouped once, for both lines
    say(f"classifying {len(trace.calls)} calls ({len(groups)} unique ops)")
    verdicts = classify_trace(ctx, trace, groups)
    say("building the op graph and the fallback cost")
    from analyzer.step_repeats import find_repeats

    repeats = find_repeats(trace)  # a repeating tail of steps is listed once (weighted)
    graph = build_call_graph(trace, repeats=repeats)
    fallback = compute_fallback(graph, gap_keys(verdicts), passthrough_keys(verdicts),
                                steps=trace.steps)
    counts = ScanReport.count(verdicts)
    from analyzer.scan_checks import coverage_notes

    notes = pairing + list(trace.notes) + coverage_notes(trace, opts.script)
    if repeats is not None:
        notes.append(f"{repeats.describe()} call for call (ops, dtypes, shapes, tensor flow): "
                     f"the GraphML lists step {repeats.template}'s calls once for them (graph "
                     "attribute repeated_steps); every count and cost covers all "
                     f"{trace.steps} steps")
    blacklist = None
    if opts.framework == "paddle":  # the one place a blacklist is computed (analyzer.blacklist)
        from analyzer.blacklist import suggest_blacklist

        blacklist = suggest_blacklist(ctx, verdicts, trace, graph, suspects=tuple(opts.suspects),
                                      current=opts.current_blacklist,
                                      framework_version=trace.framework_version)
    for op, n in sorted(trace.cpu_only_ops.items()):
        notes.append(f"CPU-only kernel avoided: {op} ({n} calls on CPU; the NPU runs the op it came from)")
    report = ScanReport(
        schema_version=REPORT_SCHEMA_VERSION, tool="opscan 0.1.0", model=str(opts.model),
        framework=opts.framework, framework_version=trace.framework_version, mode=trace.mode,
        target=str(ctx.target), soc=ctx.soc, steps=trace.steps, partial=trace.partial,
        error=trace.error,
        summary=summary_line(str(opts.model), str(ctx.target), ctx.soc, verdicts, fallback, trace.partial),
        counts=counts, verdicts=verdicts, fallback=fallback, notes=notes,
        opdb=opdb_provenance(db, pairing),
        graph=graph_summary(graph), blacklist=blacklist, cpu_route=list(trace.cpu_route))
    return ScanResult(report, trace, graphml_text(graph), pairing, graph)


def opdb_provenance(db, pairing: list[str]) -> dict[str, str]:
    """The report's `opdb` block: snapshot hash, every overlay source (kind, version,
    sha256, date) and the target pairing lines."""
    out = {"snapshot_sha256": db.snapshot_sha256}
    for p in db.overlay_sources():
        out[f"overlay {p.source}@{p.version}"] = (
            f"{p.kind}; sha256 {p.sha256 or 'unknown'}; date {p.date or 'unknown'}; "
            f"{p.rows} rows; {p.path}")
    for i, line in enumerate(pairing, 1):
        out[f"target note {i}"] = line
    return out
