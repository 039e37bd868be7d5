"""The analyzer's data model: a traced step (`Trace` of `OpCall`s), per-op
classifications (`OpVerdict`), the fallback cost, and the `ScanReport` every report
format renders from.

Tracers (analyzer.trace: torch/ and paddle/) produce a `Trace`; the graph
module turns it into a call graph (analyzer.digraph); the classifier turns unique ops into
`OpVerdict`s using opdb; analyzer.scan assembles a `ScanReport`; report writers only
read a `ScanReport` (through its JSON form, `ScanReport.to_json()`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from analyzer.dtypes_size import itemsize  # a small table, no framework import

# "setup": calls before the first training step (parameter initialisation, positional
# encodings, data preparation). They run on the device too, so their ops count for
# coverage and the blacklist, but not in per-step call counts or fallback costs.
PHASES = ("setup", "forward", "backward", "optimizer", "other")
SETUP = "setup"

CATEGORIES = (
    "supported",
    "unverified",
    "dtype-gap",
    "signature-drift",
    "cann-available",
    "decomposable",
    "needs-ascendc",
    "not-a-kernel",
)
# Categories that mean the op cannot run on the NPU as traced.
GAP_CATEGORIES = ("dtype-gap", "signature-drift", "cann-available", "decomposable",
                  "needs-ascendc")
# The one order of verdicts in every report: gaps (worst first), unverified, then the rest.
VERDICT_ORDER = ("signature-drift", "needs-ascendc", "cann-available", "dtype-gap",
                 "decomposable", "unverified", "supported", "not-a-kernel")


def verdict_order(v) -> tuple:
    """Sort key of a verdict (an OpVerdict or its JSON dict): category, most calls, op, dtypes."""
    get = (lambda k: v[k]) if isinstance(v, dict) else (lambda k: getattr(v, k))
    cat = get("category")
    return (VERDICT_ORDER.index(cat) if cat in VERDICT_ORDER else len(VERDICT_ORDER),
            -get("calls"), get("op"), tuple(get("dtypes")))


@dataclass(slots=True)
class TensorMeta:
    """A tensor seen by the tracer: a stable id within the trace, dtype and shape.
    Slotted, like OpCall: a long trace holds one per tensor argument of every call."""

    id: int
    dtype: str
    shape: tuple[int, ...]

    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * itemsize(self.dtype)


@dataclass(slots=True)
class OpCall:
    """One kernel call as the target NPU would dispatch it.

    op: the NPU-level op name: torch `aten::convolution_backward` (overload name
    kept in `overload`, e.g. `aten::convolution_backward.default`); paddle the phi
    kernel name as PaddleCustomDevice registers it (`conv2d_grad`, `adam`).
    aliases: other names of the same call (paddle API name `adam_`, fluid name).
    cpu_ops: what the CPU actually ran for this call when it differs (a composite
    decomposed on CPU, a CPU-only kernel like `_scaled_dot_product_flash_attention_for_cpu`).
    module: nn.Module / paddle Layer path that issued it (`layer1.0.conv1`), "" at top.
    source: the user's source line `model.py:42`, "" when unknown.
    inputs/outputs: tensor metadata; ids link calls into a graph.
    """

    index: int
    op: str
    overload: str
    phase: str
    inputs: list[TensorMeta] = field(default_factory=list)
    outputs: list[TensorMeta] = field(default_factory=list)
    module: str = ""
    source: str = ""
    aliases: list[str] = field(default_factory=list)
    cpu_ops: list[str] = field(default_factory=list)
    step: int = 0

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Distinct input dtypes (outputs when there are no tensor inputs)."""
        metas = self.inputs or self.outputs
        return tuple(sorted({t.dtype for t in metas}))


ROUTE_REASONS = ("inside-adapted-op", "inside-cpu-fallback", "foreach", "view", "cpu-only",
                 "composite")


@dataclass
class RouteDiff:
    """An op a CPU profiler shows for the step that the NPU does not run as such.

    reason: inside-adapted-op (a CPU kernel that ran inside the NPU kernel `under`; the
    NPU runs `under` as one kernel), inside-cpu-fallback (the same inside an op the NPU
    lacks: `under` falls back to the CPU whole), foreach (the CPU's single-tensor optimizer op; the
    NPU runs the foreach kernel `under`), view (a view/alias: no kernel, metadata only),
    cpu-only (a CPU-specific kernel, inside `under`), composite (an op that decomposes
    above the backend on both devices: its parts are in the report; `under` is the op
    it was called from, "" at top level).
    """

    op: str
    reason: str
    under: str
    calls: int


@dataclass
class Trace:
    """Everything one traced run recorded."""

    framework: str
    mode: str  # real | meta
    model: str  # path or name of the model file
    calls: list[OpCall] = field(default_factory=list)
    steps: int = 1
    partial: bool = False
    error: str = ""  # why a partial trace stopped
    notes: list[str] = field(default_factory=list)  # e.g. "optimizer: foreach=True (NPU default)"
    cpu_only_ops: dict[str, int] = field(default_factory=dict)  # CPU kernels no NPU would run
    framework_version: str = ""
    # what a CPU profiler of the same step shows that the NPU does not run (RouteDiff)
    cpu_route: list[RouteDiff] = field(default_factory=list)

    def unique_ops(self) -> dict[tuple[str, tuple[str, ...]], list[OpCall]]:
        """Calls grouped by (op, dtype set), in first-seen order."""
        groups: dict[tuple[str, tuple[str, ...]], list[OpCall]] = {}
        for c in self.calls:
            groups.setdefault((c.op, c.dtypes), []).append(c)
        return groups


@dataclass
class AclnnCandidate:
    """An aclnn API that could back a missing op."""

    api: str
    signature: str
    evidence: str
    confidence: float
    detail: str = ""
    supported_on_soc: bool | None = None
    opgen_command: str = ""


@dataclass
class OpVerdict:
    """The classification of one unique op (x dtype set) for one target."""

    op: str
    category: str
    dtypes: tuple[str, ...]
    calls: int = 0  # calls in the traced steps (setup calls excluded)
    phases: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)  # top few
    sources: list[str] = field(default_factory=list)  # top few
    aliases: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # human-readable facts with provenance
    action: str = ""
    missing_dtypes: list[str] = field(default_factory=list)
    cast_to: str = ""
    candidates: list[AclnnCandidate] = field(default_factory=list)
    decomposes_into: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)  # differing params (signature-drift)
    known_failures: list[str] = field(default_factory=list)
    adapter: str = ""  # provider/version/function of the adapter found
    setup_calls: int = 0  # calls before the first step (phase "setup")

    @property
    def is_gap(self) -> bool:
        return self.category in GAP_CATEGORIES


@dataclass
class FallbackIsland:
    """A connected set of unsupported op calls that would run on the CPU together."""

    ops: list[str]
    calls: int
    transfers: int  # device<->host copies at its boundary
    bytes: int
    first_call: int = 0  # index of its first call (node c<index> in op_graph.graphml)
    module: str = ""  # module path of its first call


@dataclass
class FallbackGroup:
    """Islands of the last traced step that run the same op sequence (one `adam` island per
    parameter): what a reader acts on once, with its islands listed in `members`."""

    sequence: list[str]  # the op of every call of one island, in call order
    islands: int
    transfers: int  # all its islands' transfers
    bytes: int  # all its islands' bytes
    transfers_each: int | None  # when every island has the same count, else None
    members: list[int] = field(default_factory=list)  # 1-based numbers in FallbackCost.islands


@dataclass
class FallbackCost:
    islands: list[FallbackIsland] = field(default_factory=list)
    transfers: int = 0
    bytes: int = 0
    groups: list[FallbackGroup] = field(default_factory=list)  # most bytes first


@dataclass
class ScanReport:
    """The whole result of one scan; every report format renders from `to_json()`."""

    schema_version: int
    tool: str
    model: str
    framework: str
    framework_version: str
    mode: str
    target: str
    soc: str
    steps: int
    partial: bool
    error: str
    summary: str  # the one line people act on
    counts: dict[str, int]
    verdicts: list[OpVerdict]
    fallback: FallbackCost
    notes: list[str]
    opdb: dict[str, str]  # snapshot hash and sources used
    graph: dict = field(default_factory=dict)  # {"nodes": n, "edges": m, "graphml": "op_graph.graphml"}
    # paddle: the CUSTOM_DEVICE_BLACK_LIST suggestion (analyzer.blacklist.Blacklist); None for torch
    blacklist: object = None
    cpu_route: list[RouteDiff] = field(default_factory=list)  # "CPU trace vs NPU route"

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        if out.get("blacklist") is None:  # torch reports carry no blacklist section
            out.pop("blacklist", None)
        return out

    @staticmethod
    def count(verdicts) -> dict[str, int]:
        """Distinct ops per category (an op whose float32 runs and float64 does not
        counts under both): the unit of the summary line and the category table."""
        ops: dict[str, set[str]] = {c: set() for c in CATEGORIES}
        for v in verdicts:
            ops.setdefault(v.category, set()).add(v.op)
        return {c: len(names) for c, names in ops.items()}

    @staticmethod
    def summarize(model: str, target: str, soc: str, verdicts, fallback: FallbackCost,
                  partial: bool) -> str:
        """The one line people act on, counted in distinct ops like `count()`."""
        from pathlib import PurePath

        counts = ScanReport.count(verdicts)
        kernels = [v for v in verdicts if v.category != "not-a-kernel"]
        ops = {v.op for v in kernels}
        gap_ops = {v.op for v in kernels if v.category in GAP_CATEGORIES}
        unverified = {v.op for v in kernels if v.category == "unverified"} - gap_ops
        calls = sum(v.calls for v in kernels)
        gap_calls = sum(v.calls for v in kernels if v.category in GAP_CATEGORIES)
        head = f"{'PARTIAL: ' if partial else ''}{PurePath(model).name} on {target} ({soc}): "
        unv = f"; {len(unverified)} ops with dtype coverage unverified" if unverified else ""
        setup = sum(v.setup_calls for v in kernels)
        tail = ""
        if setup:  # ops count for coverage; their calls are not per-step work
            tail = (f"; {setup} setup calls before the first step "
                    f"({sum(v.setup_calls for v in kernels if v.op in gap_ops)} in ops with gaps)")
        if not gap_ops:
            return head + f"all {len(ops)} kernel ops ({calls} calls) have an NPU adapter{unv}{tail}"
        cats = ", ".join(f"{counts[c]} {c}" for c in CATEGORIES if c in GAP_CATEGORIES and counts.get(c))
        mb = fallback.bytes / 1e6
        return (head + f"{len(ops) - len(gap_ops) - len(unverified)}/{len(ops)} kernel ops supported{unv}; "
                f"{len(gap_ops)} ops with gaps ({cats}) in {gap_calls} of {calls} calls; "
                f"CPU fallback would cost {fallback.transfers} transfers ({mb:.2f} MB) per step"
                + tail)
