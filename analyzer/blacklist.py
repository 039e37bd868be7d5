"""CUSTOM_DEVICE_BLACK_LIST suggestions for a Paddle model on a PaddleCustomDevice target:
which kernels to force onto the CPU, why (with evidence and severity), under which
execution mode each name matches, which entries would crash instead of falling back, and
what the list costs per step. The one source of every blacklist line: `opscan blacklist`
prints it and the Paddle report's blacklist section renders the same `Blacklist`.

How the runtime reads the variable (PaddlePaddle/Paddle, read for this module):
  - `phi::backends::custom_device::is_in_custom_black_list` reads it once and splits it on
    ',' without trimming, so `"a, b"` holds `a` and ` b`, never `b`.
  - dygraph (the eager API, `KernelFactory::SelectKernelOrThrowError`) checks
    `TransToFluidOpName(kernel_name)`: the fluid op name (`matmul_v2`, `top_k_v2`), and only
    while `FLAGS_enable_api_kernel_fallback` is true (the default); with it false the list
    is never consulted and the NPU kernel runs.
  - the static executor and PIR (`NeedFallBackCpu` in pd_op_to_kernel_pass.cc) check the
    phi kernel name (`matmul`, `topk`). Forward and grad kernels are separate names.
  - a listed kernel falls back only when a CPU kernel exists for the same dtype; otherwise
    dygraph raises "The kernel with key ... of kernel `...` is not registered and fail to
    fallback to CPU one." and PIR "Can not fallback ... from custom_device to CPU, no CPU
    kernel found for kernel key = ...". Such entries are refused here, with the reason.

What signature drift does at run time (severity):
  - a parameter added, removed or moved (`amsgrad`, `moment2_max`): every argument after it
    is bound to the wrong parameter in every mode: `certain`.
  - an attribute whose C++ type changed (pool2d's strides `std::vector<int>` ->
    `std::vector<int64_t>`): under static/PIR the kernel context holds the attribute with
    Paddle's type and the plugin's `KernelContext::AttrAt<T>` (paddle::get on the variant)
    throws "InvalidArgumentError: Attribute cast error in Op Kernel Context."; in dygraph the
    eager API calls the plugin's kernel function pointer with Paddle's C++ signature, so the
    value is reinterpreted without any check (see `_retype_dygraph`).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from analyzer.model import GAP_CATEGORIES, OpVerdict

SEVERITIES = ("certain", "likely", "possible", "suspect")
DYGRAPH, STATIC = "dygraph", "static/PIR"
ATTR_CAST_ERROR = "InvalidArgumentError: Attribute cast error in Op Kernel Context."
ATTR_CAST_WHERE = "paddle/phi/core/kernel_context.cc KernelContext::AttrAt"
NO_CPU_DYGRAPH = ("The kernel with key {key} of kernel `{kernel}` is not registered and "
                  "fail to fallback to CPU one.")
NO_CPU_STATIC = ("Can not fallback {kernel} from custom_device to CPU, no CPU kernel found "
                 "for kernel key = {key}.")
FLAG_NOTE = ("keep FLAGS_enable_api_kernel_fallback=true (the default): with it false the "
             "dygraph kernel factory never reads CUSTOM_DEVICE_BLACK_LIST and the NPU kernel "
             "runs anyway")
SYNC_HINT = "opdb sync paddle-custom-device --src <PaddleCustomDevice checkout>"
_DRIFT = re.compile(r"^(added|removed|retyped): (\S+) \((.*?)\)(?: -> (\S+) \((.*)\))?"
                    r"(?: at (\d+))?$")


@dataclass
class EntryName:
    """One name written into the variable and the execution modes it serves."""

    name: str
    modes: list[str]


@dataclass
class BlacklistEntry:
    """One kernel to run on the CPU (or refused: `refusal` says why it would crash)."""

    kernel: str
    names: list[EntryName]
    reason: str  # signature-drift | known-issue | suspect
    severity: str  # one of SEVERITIES
    detail: str  # what differs / what is known, one line
    effects: list[str] = field(default_factory=list)  # per mode, with the error text quoted
    evidence: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)  # kernel-key dtypes the model runs
    cpu_dtypes: list[str] = field(default_factory=list)  # CPU kernel dtypes in the installed Paddle
    calls: int = 0
    transfers: int = 0  # extra device<->host transfers per step this entry alone causes
    bytes: int = 0
    refusal: str = ""


@dataclass
class AutomaticFallback:
    """A gap the runtime falls back on by itself: no entry needed."""

    kernel: str
    category: str
    detail: str


@dataclass
class CurrentEntry:
    """One token of the user's current CUSTOM_DEVICE_BLACK_LIST and what it does here."""

    token: str
    status: str  # needed | not-needed | never-matches | not-run | empty
    detail: str


@dataclass
class Blacklist:
    """The suggestion for one model and target; `export` is the line to paste."""

    target: str
    framework_version: str
    export: str
    summary: str
    entries: list[BlacklistEntry] = field(default_factory=list)
    refused: list[BlacklistEntry] = field(default_factory=list)
    automatic: list[AutomaticFallback] = field(default_factory=list)
    current: list[CurrentEntry] = field(default_factory=list)
    pairing: str = ""
    transfers: int = 0  # per step, the whole list
    bytes: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        out: list[str] = []
        for e in self.entries:
            for n in e.names:
                if n.name not in out:
                    out.append(n.name)
        return out

    def to_json(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        """The terminal form: the export line, then each entry with reason and severity."""
        lines = [self.summary]
        if self.export:
            lines += ["", self.export]
            width = max(len(n.name) for e in self.entries for n in e.names)
            for e in self.entries:
                for n in e.names:
                    lines.append(f"#  {n.name:<{width}}  {e.severity:<8} {e.reason}, "
                                 f"{' + '.join(n.modes)}: {e.detail}")
                lines.append(f"#  {'':<{width}}  cost: +{e.transfers} transfers, "
                             f"{_mb(e.bytes)} per step; runs {e.calls} call(s) "
                             f"({', '.join(e.dtypes) or 'no dtype traced'})")
                for eff in e.effects:
                    lines.append(f"#  {'':<{width}}  without it: {eff}")
        for e in self.refused:
            lines.append(f"refused {e.kernel} ({e.reason}, {e.severity}): {e.refusal}")
        for a in self.automatic:
            lines.append(f"no entry needed: {a.kernel} ({a.category}): {a.detail}")
        for c in self.current:
            lines.append(f"current {c.token!r}: {c.status}: {c.detail}")
        if self.pairing:
            lines.append("versions: " + self.pairing)
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


# ---------------------------------------------------------------- runtime names

def entry_names(kernel: str) -> list[EntryName]:
    """The names that make the runtime skip `kernel`: the fluid op name for dygraph
    (TransToFluidOpName) and the phi kernel name for static/PIR; one name when equal."""
    from analyzer.trace.paddle.names import fluid_names

    fluid = [f for f in fluid_names(kernel) if f != kernel]
    if not fluid:
        return [EntryName(kernel, [DYGRAPH, STATIC])]
    return [EntryName(f, [DYGRAPH]) for f in fluid] + [EntryName(kernel, [STATIC])]


def parse_runtime_list(value: str) -> list[str]:
    """CUSTOM_DEVICE_BLACK_LIST as Paddle reads it: split on ',' with nothing trimmed
    (an empty value is no entry; `a,,b` holds an empty token)."""
    if value == "":
        return []
    return value.split(",")


# ---------------------------------------------------------------- installed CPU kernels

_KEY = re.compile(r"^\((\w+),\s*[^,]*(?:\([^)]*\))?[^,]*,\s*(\w+)\)$")


def _registry() -> dict[str, tuple[str, ...]] | None:
    from analyzer.trace.paddle.names import kernel_registry

    return kernel_registry()


def cpu_kernel_dtypes(kernel: str, registry: dict | None = None) -> set[str] | None:
    """Dtypes of the installed Paddle's CPU kernels named `kernel` (None: Paddle missing)."""
    from opdb.dtypes import normalize_dtype

    reg = _registry() if registry is None else registry
    if reg is None:
        return None
    out = set()
    for key in reg.get(kernel, ()):
        m = _KEY.match(key.strip())
        if m and m.group(1) == "CPU":
            out.add(normalize_dtype(m.group(2)))
    return out


def is_kernel(name: str, registry: dict | None = None) -> bool | None:
    """True when `name` is a phi kernel of the installed Paddle on any backend (a name the
    runtime can match), False for anything else (a composite API such as `linear`); None
    when Paddle is not importable."""
    reg = _registry() if registry is None else registry
    return None if reg is None else name in reg


# ---------------------------------------------------------------- drift severity

@dataclass(frozen=True)
class Change:
    verb: str  # added | removed | retyped
    name: str
    ctype: str
    new_name: str = ""
    new_ctype: str = ""
    at: int | None = None


def parse_drift(line: str) -> Change | None:
    """One `OpVerdict.drift` line (opdb.drift's detail text) as a record."""
    m = _DRIFT.match(line.strip())
    if not m:
        return None
    verb, name, ctype, new_name, new_ctype, at = m.groups()
    return Change(verb, name, ctype, new_name or "", new_ctype or "",
                  int(at) if at is not None else None)


def _is_attr_retype(c: Change) -> bool:
    from opdb.drift import arg_kind

    return (c.verb == "retyped" and arg_kind(c.ctype).startswith("attr:")
            and arg_kind(c.new_ctype).startswith("attr:"))


def _bare(ctype: str) -> str:
    from opdb.drift import arg_kind

    return arg_kind(ctype).split(":", 1)[1]


def _retype_dygraph(c: Change) -> tuple[str, str]:
    """(severity, dygraph effect) of an attribute read through the kernel function pointer
    with another C++ type (the eager API passes Paddle's type, the plugin reads its own)."""
    old, new = _bare(c.ctype), _bare(c.new_ctype)
    ints = {"int", "int64"}
    if old.startswith("vector<") and new.startswith("vector<") and \
            {old[7:-1], new[7:-1]} == ints:
        if new == "vector<int64>":
            how = "reads Paddle's std::vector<int64_t> as std::vector<int>: twice as many " \
                  "elements, [2, 2] arrives as [2, 0, 2, 0]"
        else:
            how = "reads Paddle's std::vector<int> as std::vector<int64_t>: half as many " \
                  "elements, two values fused into one"
        return "certain", f"dygraph: the plugin {how}; wrong shapes or an error from the " \
                          "plugin's own checks, with no Paddle message"
    if {old, new} == {"float", "double"}:
        return "certain", ("dygraph: the value travels in a floating-point register of the "
                           f"other width ({new} passed, {old} read): a different number, silently")
    if {old, new} == ints:
        if old == "int":
            return "likely", ("dygraph: the plugin reads the low 32 bits of Paddle's int64_t: "
                              "right for values in the int32 range, wrong beyond")
        return "certain", ("dygraph: the plugin reads an int64_t where Paddle passed an int: "
                           "the upper 32 bits are undefined")
    return "certain", (f"dygraph: {new} passed where the plugin reads {old}: different object "
                       "layouts, undefined behaviour (typically a crash)")


def drift_verdict(v: OpVerdict, framework_version: str) -> tuple[str, str, list[str]]:
    """(severity, one-line detail, per-mode effects) of a signature-drift verdict."""
    changes = [c for c in (parse_drift(d) for d in v.drift) if c is not None]
    positional = [c for c in changes if not _is_attr_retype(c)]
    retyped = [c for c in changes if _is_attr_retype(c)]
    fw = f"Paddle {framework_version}".strip()
    parts = []
    for c in changes:
        if c.verb == "retyped":
            parts.append(f"{c.new_name} {c.ctype} (plugin) vs {c.new_ctype} ({fw})")
        else:
            parts.append(f"{c.verb} {c.name} ({c.ctype})" + (f" at {c.at}" if c.at is not None else ""))
    detail = "; ".join(parts) or "; ".join(v.drift) or "signature differs"
    if positional or not changes:
        first = min((c.at for c in positional if c.at is not None), default=None)
        after = f" from position {first} on" if first is not None else ""
        effect = (f"every mode: arguments{after} are bound to the wrong parameters (dygraph "
                  f"calls the plugin's kernel function with {fw}'s parameter list; static/PIR "
                  "builds the kernel context in Paddle's order): wrong results or a crash")
        return "certain", detail, [effect]
    severity, effects = "likely", []
    for c in retyped:
        sev, dyg = _retype_dygraph(c)
        if sev == "certain":
            severity = "certain"
        effects.append(f"{c.new_name}: {dyg}")
    effects.append(f"static/PIR: \"{ATTR_CAST_ERROR}\" at the first call (the kernel context "
                   f"holds {fw}'s type; {ATTR_CAST_WHERE} throws on the plugin's type)")
    return severity, detail, effects


# ---------------------------------------------------------------- the suggestion

@dataclass
class _Candidate:
    kernel: str
    reason: str
    severity: str
    detail: str
    effects: list[str]
    evidence: list[str]


def _key_dtypes(trace) -> dict[str, set[str]]:
    from analyzer.classify import kernel_key_dtype

    out: dict[str, set[str]] = {}
    for c in trace.calls:
        d = kernel_key_dtype(c)
        out.setdefault(c.op, set())
        if d:
            out[c.op].add(d)
    return out


def version_pairing(db, target, framework_version: str) -> str:
    """One sentence: how old the target's plugin data is against the installed Paddle
    (dates and days from opdb.pairing.data_freshness, the one place that computes them)."""
    from opdb.pairing import data_freshness

    fresh = data_freshness(db, target, framework_version, "paddle")
    if not fresh.data_date:
        return (f"{target}: no snapshot date recorded; refresh with `{SYNC_HINT}`")
    head = f"{target} data is commit {fresh.commit[:12] or '?'} of {fresh.data_date}"
    if not fresh.released:
        return (f"{head}; the release date of the installed Paddle {framework_version or '?'} "
                f"is not in opdb/sources/paddle/paddlepaddle_releases.json; refresh the plugin "
                f"data with `{SYNC_HINT}`")
    days = fresh.days
    if days > 0:
        rel = (f"{days} days older than the installed Paddle {framework_version} (released "
               f"{fresh.released}): kernels Paddle changed since then show up as drift, and a newer "
               "PaddleCustomDevice may already match them")
    elif days < 0:
        rel = (f"{-days} days newer than the installed Paddle {framework_version} (released "
               f"{fresh.released}): the plugin may expect parameters this Paddle does not pass")
    else:
        rel = f"from the release day of Paddle {framework_version}"
    return f"{head}, {rel}; refresh with `{SYNC_HINT}`"


def _cost(graph, base: set, extra: set, steps: int, base_cost=None) -> tuple[int, int]:
    """What running `extra` on the host adds to the fallbacks of `base` (per step);
    `base_cost`: `base`'s own FallbackCost when already computed (it is the same for
    every entry of a list)."""
    from analyzer.fallback import compute_fallback

    if graph is None or not extra:
        return 0, 0
    a = base_cost if base_cost is not None else compute_fallback(graph, base, steps=steps)
    b = compute_fallback(graph, base | extra, steps=steps)
    return max(0, b.transfers - a.transfers), max(0, b.bytes - a.bytes)


def suggest_blacklist(ctx, verdicts: list[OpVerdict], trace, graph=None, *,
                      suspects: tuple[str, ...] = (), current: str | None = None,
                      framework_version: str = "", registry: dict | None = None,
                      table=None) -> Blacklist:
    """The CUSTOM_DEVICE_BLACK_LIST suggestion for one traced Paddle model.

    ctx: analyzer.classify.ClassifyContext (db and target); verdicts: classify_trace's;
    trace: the Trace (kernel-key dtypes and call counts); graph: its call graph (for cost;
    None = no cost); suspects: kernels the user names for precision (phi, fluid or API
    names); current: the user's present CUSTOM_DEVICE_BLACK_LIST value; registry: the
    installed Paddle's kernel registry (default: read it live); table: known issues.
    """
    from analyzer.trace.paddle.names import kernel_for
    from opdb.known_issues import load_known_issues

    table = table or load_known_issues()
    framework_version = framework_version or getattr(trace, "framework_version", "") or ""
    db, target = ctx.db, ctx.target
    key_dtypes = _key_dtypes(trace)
    calls: dict[str, int] = {}
    for c in trace.calls:
        calls[c.op] = calls.get(c.op, 0) + 1
    by_op: dict[str, list[OpVerdict]] = {}
    for v in verdicts:
        by_op.setdefault(v.op, []).append(v)

    cands: dict[str, _Candidate] = {}
    automatic: list[AutomaticFallback] = []

    def add(kernel: str, cand: _Candidate) -> None:
        cur = cands.get(kernel)
        if cur is None:
            cands[kernel] = cand
            return
        cur.evidence += [e for e in cand.evidence if e not in cur.evidence]
        if SEVERITIES.index(cand.severity) < SEVERITIES.index(cur.severity):
            cur.severity = cand.severity
        if cand.reason not in cur.reason.split(" + "):
            cur.reason += " + " + cand.reason
        cur.detail += f"; {cand.reason}: {cand.detail}"
        cur.effects += [e for e in cand.effects if e not in cur.effects]

    for op, vs in sorted(by_op.items()):
        cats = {v.category for v in vs}
        if "signature-drift" in cats:
            v = next(v for v in vs if v.category == "signature-drift")
            sev, detail, effects = drift_verdict(v, framework_version)
            ev = [e for e in v.evidence if e.startswith("adapter ")]
            fop = db.framework_op("paddle", op)
            if fop is not None:
                ev.append(f"installed Paddle {framework_version} {fop.function or op} "
                          f"({fop.source.where()})")
            add(op, _Candidate(op, "signature-drift", sev, detail, effects, ev))
        elif "dtype-gap" in cats:
            v = next(v for v in vs if v.category == "dtype-gap")
            automatic.append(AutomaticFallback(
                op, "dtype-gap", f"no NPU kernel registered for {', '.join(v.missing_dtypes)}: "
                f"Paddle falls back to the CPU by itself (FLAGS_enable_api_kernel_fallback)"))
        elif cats & set(GAP_CATEGORIES):
            cat = sorted(cats & set(GAP_CATEGORIES))[0]
            automatic.append(AutomaticFallback(
                op, cat, f"no NPU kernel in {target}: Paddle falls back to the CPU by itself"))
        adapters = db.adapters("paddle", op, target)
        date = adapters[0].source.date if adapters else ""
        if adapters:
            for issue in table.matching("paddle", target.provider, op, date, framework_version):
                add(op, _Candidate(op, "known-issue", issue.severity,
                                   f"{issue.id}, workaround: {issue.workaround}",
                                   [f"known issue {issue.id}: {issue.symptom}"],
                                   [f"{issue.where()}: {issue.source}",
                                    f"{target} snapshot dated {date[:10] or 'unknown'}, "
                                    f"Paddle {framework_version} in {issue.framework_versions}"]))

    for s in suspects:
        k = kernel_for(s)
        ran = [op for op in key_dtypes if op == k or op.startswith(k + "_grad")
               or op.startswith(k + "_double_grad")]
        for op in ran or [k]:
            add(op, _Candidate(op, "suspect", "suspect",
                               f"named with --suspect {s}" + ("" if ran else
                                                             " (not run by this model)"),
                               [], [f"--suspect {s}"]))

    # refuse entries the installed Paddle cannot run on the CPU
    entries, refused = [], []
    for kernel, c in sorted(cands.items(),
                            key=lambda kv: (SEVERITIES.index(kv[1].severity), kv[0])):
        dts = sorted(key_dtypes.get(kernel, set()))
        cpu = cpu_kernel_dtypes(kernel, registry)
        e = BlacklistEntry(kernel=kernel, names=entry_names(kernel), reason=c.reason,
                           severity=c.severity, detail=c.detail, effects=c.effects,
                           evidence=c.evidence, dtypes=dts,
                           cpu_dtypes=sorted(cpu) if cpu is not None else [],
                           calls=calls.get(kernel, 0))
        if cpu is None:
            e.evidence.append("CPU kernels not checked: Paddle is not importable here")
            entries.append(e)
            continue
        missing = [d for d in dts if d not in cpu]
        if not cpu or missing:
            bad = missing or dts or ["any dtype"]
            key = f"(npu, Undefined(AnyLayout), {bad[0]})"
            e.refusal = (f"Paddle {framework_version} has no CPU `{kernel}` kernel for "
                         f"{', '.join(bad)} (CPU: {', '.join(sorted(cpu)) or 'none'}): listing it "
                         f"would stop the run with \"{NO_CPU_DYGRAPH.format(key=key, kernel=kernel)}\""
                         f" (dygraph) or \"{NO_CPU_STATIC.format(key=key, kernel=kernel)}\" "
                         "(static/PIR); fix the kernel or cast these calls instead")
            refused.append(e)
            continue
        entries.append(e)

    # cost from the op graph: what the list adds over the fallbacks that happen anyway
    listed = {e.kernel for e in entries}
    base = {(v.op, tuple(sorted(v.dtypes))) for v in verdicts
            if v.category in GAP_CATEGORIES and v.category != "signature-drift"
            and v.op not in listed}
    steps = max(1, int(getattr(trace, "steps", 1) or 1))
    base_cost = None
    if graph is not None and entries:
        from analyzer.fallback import compute_fallback

        base_cost = compute_fallback(graph, base, steps=steps)
    for e in entries:
        e.transfers, e.bytes = _cost(graph, base, {e.kernel}, steps, base_cost)
    total_t, total_b = _cost(graph, base, listed, steps, base_cost)

    bl = Blacklist(target=str(target), framework_version=framework_version, export="",
                   summary="", entries=entries, refused=refused, automatic=automatic,
                   pairing=version_pairing(db, target, framework_version),
                   transfers=total_t, bytes=total_b)
    names = bl.names
    bl.export = f'export CUSTOM_DEVICE_BLACK_LIST="{",".join(names)}"' if names else ""
    if current is not None:
        bl.current = judge_current(current, bl, key_dtypes, registry)
    if names:
        bl.summary = (f"CUSTOM_DEVICE_BLACK_LIST for {target}: {len(entries)} kernel(s), "
                      f"{len(names)} name(s), +{total_t} device<->host transfers and "
                      f"{_mb(total_b)} per step")
        bl.notes.append(FLAG_NOTE)
        if len(entries) > 1:
            bl.notes.append("per-entry costs are each entry alone; together they may share "
                            "transfers, so the total can be less than the sum")
    else:
        bl.summary = f"CUSTOM_DEVICE_BLACK_LIST for {target}: no entry needed"
    if refused:
        bl.summary += f"; {len(refused)} refused (no CPU kernel: {', '.join(e.kernel for e in refused)})"
    return bl


def judge_current(value: str, bl: Blacklist, key_dtypes: dict, registry: dict | None) -> list[CurrentEntry]:
    """What each token of the user's present CUSTOM_DEVICE_BLACK_LIST does for this model."""
    from analyzer.trace.paddle.names import fluid_names, kernel_for

    suggested = {n.name: (e, n) for e in bl.entries for n in e.names}
    ran_names: dict[str, tuple[str, str]] = {}  # runtime name -> (kernel, modes)
    for k in key_dtypes:
        for n in entry_names(k):
            ran_names.setdefault(n.name, (k, " + ".join(n.modes)))
    reg = _registry() if registry is None else registry
    out = []
    for tok in parse_runtime_list(value):
        if tok == "":
            out.append(CurrentEntry(tok, "empty", "an empty token (doubled or trailing ','): harmless"))
            continue
        if tok != tok.strip():
            out.append(CurrentEntry(tok, "never-matches",
                                    f"Paddle does not trim spaces: {tok!r} never matches "
                                    f"{tok.strip()!r}; write the list without spaces"))
            continue
        if tok in suggested:
            e, n = suggested[tok]
            out.append(CurrentEntry(tok, "needed", f"{e.reason} ({e.severity}) for {e.kernel}, "
                                                   f"serves {' + '.join(n.modes)}"))
            continue
        if tok in ran_names:
            kernel, mode = ran_names[tok]
            auto = next((a for a in bl.automatic if a.kernel == kernel), None)
            if auto is not None:
                out.append(CurrentEntry(tok, "not-needed", f"{kernel}: {auto.detail}"))
                continue
            out.append(CurrentEntry(tok, "not-needed",
                                    f"{kernel} runs on {bl.target} without a known problem for "
                                    f"this model: drop it to keep it on the NPU (it serves {mode})"))
            continue
        known = reg is None or tok in reg or any(tok in fluid_names(k) for k in (reg or {}))
        if not known:
            k = kernel_for(tok)
            alt = f" (the kernel is `{k}`)" if k != tok and (reg is None or k in reg) else ""
            out.append(CurrentEntry(tok, "never-matches",
                                    f"not a phi kernel or fluid op name of Paddle "
                                    f"{bl.framework_version}{alt}: no mode matches it"))
            continue
        out.append(CurrentEntry(tok, "not-run", "this model does not run it: no effect here"))
    return out
