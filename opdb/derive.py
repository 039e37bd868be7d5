"""Derived op<->aclnn evidence: `curated`, `cross-framework` and `name` mappings.

Ingesters give `adapter` evidence (an adapter's code calls the API). This module adds:
- `curated`: reviewed entries of `opdb/sources/curated.yaml`;
- `cross-framework`: the other framework's adapter of an equivalent op calls the API
  (equivalence: curated pairs, or equal normalized names);
- `name`: the op's normalized name equals the API's (`aten::erfinv` ~ `aclnnErfinv`).
Confidences are fixed per rule so the result is deterministic.

`apply_roles()` first gives every adapter call its role (opdb.roles: primary,
composite, helper:<kind>); only primary adapter calls feed cross-framework evidence.
`build` and `sync` both run `derive_all()` over what the ingesters returned.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import yaml

from opdb.errors import ParseError
import dataclasses

from opdb.model import IngestResult, OpAclnnMapping, ProvenanceRecord, Source
from opdb.names import norm_aclnn, norm_op
from opdb.roles import PRIMARY, assign_roles

CURATED_PATH = Path(__file__).resolve().parent / "sources" / "curated.yaml"
NAME_CONFIDENCE = 0.5
NAME_INPLACE_CONFIDENCE = 0.35
CROSS_FACTOR = 0.7  # cross-framework confidence = adapter confidence x this


def load_curated(path: Path = CURATED_PATH) -> tuple[IngestResult, list[tuple[str, str, str]]]:
    """Curated mappings and the (paddle op, torch op, caveat) equivalence pairs; a caveat
    says how the two differ (reduction, layout, modes) and travels with every mapping
    derived from the pair, so no candidate with different semantics is offered silently."""
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ParseError(path, mark.line + 1 if mark else None, f"invalid YAML: {exc}") from None
    unknown = set(data) - {"equivalent_ops", "op_aclnn"}
    if unknown:
        raise ParseError(path, None, f"unexpected top-level keys {sorted(unknown)}",
                         hint="allowed: equivalent_ops, op_aclnn")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]
    result = IngestResult()
    for i, e in enumerate(data.get("op_aclnn") or []):
        missing = {"framework", "op", "aclnn", "confidence", "why"} - set(e)
        if missing:
            raise ParseError(path, None, f"op_aclnn entry {i} lacks {sorted(missing)}")
        result.mappings.append(OpAclnnMapping(
            framework=e["framework"], op=e["op"], aclnn=e["aclnn"], evidence="curated",
            confidence=float(e["confidence"]), detail=e["why"],
            source=Source("curated", version, "opdb/sources/curated.yaml")))
    pairs = []
    for i, e in enumerate(data.get("equivalent_ops") or []):
        if not {"paddle", "torch"} <= set(e) or set(e) - {"paddle", "torch", "caveat"}:
            raise ParseError(path, None, f"equivalent_ops entry {i} must have paddle and torch keys "
                             "(and optionally caveat)")
        pairs.append((e["paddle"], e["torch"], e.get("caveat", "")))
    result.provenance.append(ProvenanceRecord(
        source="curated", kind="curated", version=version, path="opdb/sources/curated.yaml",
        sha256=hashlib.sha256(text.encode()).hexdigest(), description="reviewed op<->aclnn table",
        rows=len(result.mappings)))
    return result, pairs


def role_table(result: IngestResult) -> dict[tuple[str, str], dict[str, str]]:
    """(framework, op) -> {aclnn API: role}, decided over every API the op's adapters name
    in any release of `result` (opdb.roles.assign_roles)."""
    apis: dict[tuple[str, str], set[str]] = defaultdict(set)
    for ad in result.adapters:
        apis[(ad.framework, ad.op)].update(ad.aclnn)
    for m in result.mappings:
        if m.evidence == "adapter":
            apis[(m.framework, m.op)].add(m.aclnn)
    return {key: assign_roles(key[1], names) for key, names in apis.items()}


def apply_role_table(result: IngestResult, roles: dict) -> IngestResult:
    """Each adapter's `roles` and each `adapter` mapping's `role` from `roles` (in place)."""
    result.adapters = [dataclasses.replace(ad, roles=tuple(roles[(ad.framework, ad.op)][a]
                                                           for a in ad.aclnn))
                       for ad in result.adapters]
    result.mappings = [dataclasses.replace(m, role=roles[(m.framework, m.op)][m.aclnn])
                       if m.evidence == "adapter" else m for m in result.mappings]
    return result


def apply_roles(result: IngestResult) -> IngestResult:
    """Assign a role to every adapter call of `result` (in place), decided over `result`."""
    return apply_role_table(result, role_table(result))


def derive_all(result: IngestResult, pairs: list[tuple[str, str]]) -> list[OpAclnnMapping]:
    """Roles on `result` (in place), then the derived mappings to add to it."""
    apply_roles(result)
    return derive_mappings(result, pairs)


def derive_mappings(result: IngestResult, pairs: list[tuple[str, str]]) -> list[OpAclnnMapping]:
    """`name` and `cross-framework` mappings from the ingested records."""
    api_names = sorted({a.name for a in result.apis})
    by_norm: dict[str, list[str]] = defaultdict(list)
    for name in api_names:
        by_norm[norm_aclnn(name)].append(name)

    ops: dict[str, set[str]] = {"torch": set(), "paddle": set()}
    for op in result.framework_ops:
        ops[op.framework].add(op.name)
    for ad in result.adapters:
        ops[ad.framework].add(ad.op)

    out: list[OpAclnnMapping] = []
    src = Source("opdb-derive", "name")
    for fw in ("torch", "paddle"):
        for op in sorted(ops[fw]):
            for api in by_norm.get(norm_op(op), ()):
                inplace = "Inplace" in api
                op_inplace = op.split("::")[-1].split(".")[0].endswith("_")
                conf = NAME_CONFIDENCE if inplace == op_inplace else NAME_INPLACE_CONFIDENCE
                out.append(OpAclnnMapping(fw, op, api, "name", conf, src,
                                          f"normalized names match ({norm_op(op)})"))

    # Adapter evidence per (framework, op): best confidence per API.
    adapter_ev: dict[tuple[str, str], dict[str, OpAclnnMapping]] = defaultdict(dict)
    for m in result.mappings:
        if m.evidence == "adapter" and m.role == PRIMARY:
            cur = adapter_ev[(m.framework, m.op)].get(m.aclnn)
            if cur is None or m.confidence > cur.confidence:
                adapter_ev[(m.framework, m.op)][m.aclnn] = m

    equiv: set[tuple[str, str, str]] = set()
    for p, t, *rest in pairs:
        caveat = rest[0] if rest and rest[0] else ""
        equiv.add((p, t, "curated pair" + (f"; CAVEAT: {caveat}" if caveat else "")))
    torch_by_norm: dict[str, set[str]] = defaultdict(set)
    for op in ops["torch"]:
        torch_by_norm[norm_op(op)].add(op)
    for p in ops["paddle"]:
        for t in torch_by_norm.get(norm_op(p), ()):
            equiv.add((p, t, "normalized names match"))
    for p, t, why in sorted(equiv):
        for src_fw, src_op, dst_fw, dst_op in (("torch", t, "paddle", p), ("paddle", p, "torch", t)):
            for api, m in sorted(adapter_ev.get((src_fw, src_op), {}).items()):
                out.append(OpAclnnMapping(
                    dst_fw, dst_op, api, "cross-framework", round(m.confidence * CROSS_FACTOR, 3),
                    Source("opdb-derive", "cross-framework", m.source.path, m.source.line),
                    f"{src_fw} adapter of {src_op} calls {api} ({why})"))
    return out
