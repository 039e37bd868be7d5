"""`opdb show NAME`: everything opdb knows about one op or aclnn API, as a record.

`describe()` reads the op's `OpFacts` (opdb.facts, the record `opscan classify` reads
too) into an `OpDescription`; `render_text()` prints it as human-readable sections;
the CLI's `--json` prints `to_json()` instead.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from opdb.errors import NotFound, UnknownName  # noqa: F401
from opdb.facts import OpFacts, op_facts
from opdb.model import AclnnApi, Adapter, FrameworkOp, Param, to_row
from opdb.query import OpDB
from opdb.soc import resolve_soc, supports


@dataclass
class OpDescription:
    """What `opdb show` prints: an aclnn API's callers, or an op's `OpFacts`."""

    name: str
    framework: str | None
    soc: str
    api: AclnnApi | None = None
    callers: list[str] = field(default_factory=list)  # for an API: adapters calling it, with role
    facts: OpFacts | None = None
    data_notes: list[str] = field(default_factory=list)  # pairing / freshness lines

    @property
    def op(self) -> FrameworkOp | None:
        return self.facts.op if self.facts else None

    @property
    def adapters(self) -> list[Adapter]:
        return list(self.facts.adapters + self.facts.stubs) if self.facts else []

    @property
    def candidates(self):
        return list(self.facts.candidates) if self.facts else []

    @property
    def drift(self):
        return list(self.facts.drift) if self.facts else []

    @property
    def known_failures(self) -> list[str]:
        return [f"{k.test}: {', '.join(k.dtypes)} ({k.source.where()})"
                for k in (self.facts.known_failures if self.facts else ())]

    @property
    def first_release(self) -> str:
        return self.facts.first_release if self.facts else ""

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


def describe(db: OpDB, name: str, framework: str | None = None, soc: str | None = None,
             target: str | None = None) -> OpDescription:
    """Collect what opdb knows about `name` (an op of either framework or an aclnn API)."""
    soc_id = resolve_soc(soc).id
    desc = OpDescription(name=name, framework=framework, soc=soc_id)
    api = db.aclnn_api(name) if framework is None or name.startswith("aclnn") else None
    if api is not None:
        desc.api = api
        desc.callers = sorted({f"{m.framework} {m.op} ({m.evidence}, role {m.role}, {m.source.source})"
                               for m in db.mappings(aclnn=api.name) if m.evidence == "adapter"})
        return desc
    frameworks = [framework] if framework else (["torch"] if "::" in name else ["torch", "paddle"])
    for fw in frameworks:
        facts = op_facts(db, fw, name, target if fw == framework else None, soc_id)
        if not facts.known:
            continue
        desc.framework, desc.name, desc.facts = fw, facts.name, facts
        if db.targets(fw):
            desc.data_notes = db.pairing(fw).lines()
        return desc
    raise unknown_op(db, name, framework)


def unknown_op(db: OpDB, name: str, framework: str | None) -> UnknownName:
    """The error for a name no catalog knows, with the closest matches."""
    hits = [h.name for h in db.search(name, limit=5)]
    return UnknownName(f"{_short(name)!r} is neither an aclnn API nor a known "
                    f"{framework or 'torch/paddle'} op",
                    hint=f"did you mean: {', '.join(hits)}" if hits else "try `opdb search`")


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
    f = desc.facts
    if f.dispatch is not None:
        out.append(f"  {f.dispatch.describe()}")
        if f.dispatch.foreign_library:
            lib = f.dispatch.foreign_library
            out.append(f"  {lib}-library kernel (declared for {', '.join(f.dispatch.declared) or 'no backend'}); "
                       f"parent: {f.dispatch.parent or 'unknown'}")
    if f.becomes:
        out.append(f"  becomes: {', '.join(f.becomes)}")
    out.append("")
    out.append(f"Adapters in {f.target} ({len(desc.adapters)}):" if desc.adapters
               else f"Adapters in {f.target}: none")
    roles = {(c.adapter, c.api): c.role for c in f.calls}
    for ad in desc.adapters:
        dt = ", ".join(ad.dtypes) if ad.dtypes is not None else "per primary aclnn API dtypes"
        out.append(f"  {ad.target}: {ad.function or ad.op}  dtypes: {dt}")
        if ad.aclnn:
            key = f"{ad.target} {ad.function or ad.op}".strip()
            out.append("    aclnn: " + ", ".join(f"{x} ({roles.get((key, x), '?')})" for x in ad.aclnn))
        if ad.legacy_ops:
            out.append(f"    legacy CANN ops: {', '.join(ad.legacy_ops)}")
        for n in ad.notes:
            out.append(f"    note: {n}")
        out.append(f"    source: {ad.source.where()}")
    if f.stubs:
        out.append("  registered but throwing (not supported): "
                   + ", ".join(f"{a.target} {a.function} ({a.source.where()})" for a in f.stubs))
    if f.dtypes is not None:
        out.append(f"  dtypes: {', '.join(f.dtypes.dtypes)} ({f.dtypes.how})" if f.dtypes.dtypes is not None
                   else f"  {f.dtypes.reason}")
    if f.adapted_elsewhere:
        out.append(f"  also adapted in: {', '.join(f.adapted_elsewhere)}")
    if desc.first_release:
        out.append(f"  first release in opdb adapting it: {desc.first_release}")
    if f.related_ops:
        out.append("  related ops: " + ", ".join(f"{o} ({why})" for o, why in f.related_ops))
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
    if desc.data_notes:
        out.append("")
        out += desc.data_notes
    out.append("")
    out.append(f"aclnn candidates ({len(desc.candidates)}):" if desc.candidates else "aclnn candidates: none")
    for c in desc.candidates:
        out.append(f"  {c.api.name}  confidence {c.confidence:.2f}")
        out += _api_block(c.api, desc.soc)
        out.append(f"    evidence: {c.evidence} {c.confidence:.2f}: {c.detail}")
    return "\n".join(out) + "\n"


def _short(name: str, limit: int = 80) -> str:
    """A name as shown in a one-line error: long pasted text is cut, not echoed whole."""
    return name if len(name) <= limit else f"{name[:limit]}... ({len(name)} characters)"
