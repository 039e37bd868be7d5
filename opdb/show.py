"""`opdb show NAME`: everything opdb knows about one op or aclnn API, as a record.

`describe()` gathers the facts into an `OpDescription`; `render_text()` prints it as
human-readable sections; the CLI's `--json` prints `to_json()` instead.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from opdb.errors import NotFound
from opdb.model import AclnnApi, Adapter, FrameworkOp, Param, to_row
from opdb.query import OpDB
from opdb.soc import resolve_soc, supports


@dataclass
class Candidate:
    api: AclnnApi
    evidence: list[str]
    confidence: float
    soc_support: bool | None


@dataclass
class DriftReport:
    """PaddleCustomDevice kernel signature vs the installed Paddle's kernel signature.

    differing: names of params added, removed or retyped; shifted: params only renamed
    (harmless: kernels bind arguments by position and kind)."""

    adapter: str
    adapter_function: str
    adapter_params: tuple[Param, ...]
    framework_function: str
    framework_params: tuple[Param, ...]
    differing: list[str]
    shifted: int = 0
    details: list[str] = field(default_factory=list)


@dataclass
class OpDescription:
    name: str
    framework: str | None
    soc: str
    op: FrameworkOp | None = None
    api: AclnnApi | None = None
    adapters: list[Adapter] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    drift: list[DriftReport] = field(default_factory=list)
    known_failures: list[str] = field(default_factory=list)
    callers: list[str] = field(default_factory=list)  # for an API: adapters calling it
    first_release: str = ""

    def to_json(self) -> dict:
        def enc(v):
            if dataclasses.is_dataclass(v) and hasattr(v, "key"):
                return to_row(v)
            if dataclasses.is_dataclass(v):
                return {f.name: enc(getattr(v, f.name)) for f in dataclasses.fields(v)}
            if isinstance(v, (list, tuple)):
                return [enc(x) for x in v]
            return v
        return enc(self)


def signature_drift(adapter: Adapter, op: FrameworkOp) -> tuple[list[str], int, list[str]]:
    """(params added/removed/retyped, params only renamed, detail lines) between the
    adapter's kernel signature and the installed framework's (see opdb.drift)."""
    from opdb.drift import compare

    d = compare(adapter.signature, op.params)
    return d.names, d.renamed, d.details


def describe(db: OpDB, name: str, framework: str | None = None, soc: str | None = None) -> OpDescription:
    """Collect what opdb knows about `name` (an op of either framework or an aclnn API)."""
    soc_id = resolve_soc(soc).id
    desc = OpDescription(name=name, framework=framework, soc=soc_id)
    api = db.aclnn_api(name) if framework is None or name.startswith("aclnn") else None
    if api is not None:
        desc.api = api
        desc.callers = sorted({f"{m.framework} {m.op} ({m.evidence}, {m.source.source})"
                               for m in db.mappings(aclnn=api.name) if m.evidence == "adapter"})
        return desc

    frameworks = [framework] if framework else (["torch"] if "::" in name else ["torch", "paddle"])
    for fw in frameworks:
        op = db.framework_op(fw, name)
        op_name = op.name if op else (name if fw == "paddle" or "::" in name else f"aten::{name}")
        adapters = db.adapters(fw, op_name)
        if op is None and not adapters:
            continue
        desc.framework, desc.op, desc.adapters = fw, op, adapters
        desc.name = op_name
        first = db.first_release(fw, op_name)
        desc.first_release = str(first) if first else ""
        best: dict[str, Candidate] = {}
        for m in db.mappings(fw, op_name):
            a = db.aclnn_api(m.aclnn)
            if a is None:
                continue
            c = best.setdefault(m.aclnn, Candidate(a, [], m.confidence, supports(a.products, soc_id)))
            c.confidence = max(c.confidence, m.confidence)
            c.evidence.append(f"{m.evidence} {m.confidence:.2f}: {m.detail or m.source.where()}")
        desc.candidates = sorted(best.values(), key=lambda c: (-c.confidence, c.api.name))
        if fw == "paddle" and op is not None and op.params:
            for ad in adapters:
                if ad.signature:
                    names, shifted, lines = signature_drift(ad, op)
                    desc.drift.append(DriftReport(
                        adapter=ad.target, adapter_function=ad.function,
                        adapter_params=ad.signature, framework_function=op.function,
                        framework_params=op.params, differing=names, shifted=shifted,
                        details=lines))
        desc.known_failures = [f"{k.test}: {', '.join(k.dtypes)} ({k.source.where()})"
                               for k in db.known_failures(fw, _opinfo_name(op_name))]
        return desc
    hits = [h.name for h in db.search(name, limit=5)]
    raise NotFound(f"{_short(name)!r} is neither an aclnn API nor a known "
                   f"{framework or 'torch/paddle'} op",
                   hint=f"did you mean: {', '.join(hits)}" if hits else "try `opdb search`")


def _opinfo_name(op: str) -> str:
    """op-plugin's test skip list keys ops by OpInfo name (`add`, not `aten::add.Tensor`)."""
    return op.split("::")[-1].split(".")[0]


# ---------------------------------------------------------------- text rendering

def _params(params: tuple[Param, ...], marked: set[str] = frozenset()) -> list[str]:
    lines = []
    for p in params:
        mark = "  <-- differs" if p.name in marked else ""
        dt = f"  [{', '.join(p.dtypes)}]" if p.dtypes else ""
        role = f" ({p.role})" if p.role != "input" else ""
        lines.append(f"    {p.ctype} {p.name}{role}{dt}{mark}")
    return lines


def _api_block(api: AclnnApi, soc: str) -> list[str]:
    sup = supports(api.products, soc)
    sup_txt = {True: "yes", False: "no", None: "unknown (no products section)"}[sup]
    flags = [f for f in ("deprecated", "experimental", "internal") if getattr(api, f)]
    out = [f"  {api.workspace_signature()}",
           f"    supported on {soc}: {sup_txt}" + (f"; {', '.join(flags)}" if flags else ""),
           f"    source: {api.source.source} {api.source.where()}"]
    out += _params(api.params)
    return out


def render_text(desc: OpDescription) -> str:
    out: list[str] = []
    if desc.api is not None:
        a = desc.api
        out.append(f"aclnn API {a.name}  (category {a.category or '-'}, op dir {a.op_dir or '-'})")
        out += _api_block(a, desc.soc)
        out.append(f"  products: {'; '.join(a.products) if a.products is not None else 'unknown'}")
        for n in a.notes:
            out.append(f"  note: {n}")
        out.append(f"  called by adapters: {', '.join(desc.callers) if desc.callers else 'none in opdb'}")
        return "\n".join(out) + "\n"

    op = desc.op
    out.append(f"{desc.framework} op {desc.name}")
    if op is not None:
        if op.schema:
            out.append(f"  schema: {op.schema}")
        facts = [f"kind {op.kind}"]
        if op.composite_implicit:
            facts.append("CompositeImplicitAutograd")
        if op.has_decomposition:
            facts.append("has decomposition")
        if op.aliases:
            facts.append("aliases " + ", ".join(op.aliases))
        out.append("  " + "; ".join(facts) + f"  (source {op.source.where()})")
    else:
        out.append("  not in the installed framework's catalog")
    out.append("")
    out.append(f"Adapters ({len(desc.adapters)}):" if desc.adapters else "Adapters: none")
    for ad in desc.adapters:
        dt = ", ".join(ad.dtypes) if ad.dtypes is not None else "per aclnn API dtypes"
        out.append(f"  {ad.target}: {ad.function or ad.op}  dtypes: {dt}")
        if ad.aclnn:
            out.append(f"    aclnn: {', '.join(ad.aclnn)}")
        if ad.legacy_ops:
            out.append(f"    legacy CANN ops: {', '.join(ad.legacy_ops)}")
        for n in ad.notes:
            out.append(f"    note: {n}")
        out.append(f"    source: {ad.source.where()}")
    if desc.first_release:
        out.append(f"  first release in opdb adapting it: {desc.first_release}")
    shown: dict[tuple, str] = {}
    for d in desc.drift:
        out.append("")
        verdict = (f"differing: {', '.join(d.differing)}" if d.differing else
                   "compatible (kernels bind arguments by position and kind)")
        if d.shifted:
            verdict += f"; {d.shifted} params only renamed"
        out.append(f"Signature drift: {d.adapter} {d.adapter_function} vs installed Paddle "
                   f"{d.framework_function or desc.name} -- {verdict}")
        same = shown.get((d.adapter_params, tuple(d.details)))
        if same:
            out.append(f"  (same signature as {same})")
            continue
        shown[(d.adapter_params, tuple(d.details))] = d.adapter
        out.append(f"  {d.adapter} {d.adapter_function}({len(d.adapter_params)} params):")
        out += _params(d.adapter_params, set(d.differing))
        out.append(f"  installed Paddle {d.framework_function}({len(d.framework_params)} params):")
        out += _params(d.framework_params, set(d.differing))
        out += [f"  {line}" for line in d.details]
    if desc.known_failures:
        out.append("")
        out.append("Known per-dtype failures (op-plugin test skip list):")
        out += [f"  {k}" for k in desc.known_failures]
    out.append("")
    out.append(f"aclnn candidates ({len(desc.candidates)}):" if desc.candidates else "aclnn candidates: none")
    for c in desc.candidates:
        out.append(f"  {c.api.name}  confidence {c.confidence:.2f}")
        out += _api_block(c.api, desc.soc)
        for e in c.evidence[:4]:
            out.append(f"    evidence: {e}")
    return "\n".join(out) + "\n"


def _short(name: str, limit: int = 80) -> str:
    """A name as shown in a one-line error: long pasted text is cut, not echoed whole."""
    return name if len(name) <= limit else f"{name[:limit]}... ({len(name)} characters)"
