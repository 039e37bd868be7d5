"""The derivation pipeline `opdb build` and `opdb sync` share.

One place decides how a provider release's raw adapter list becomes the rows opdb
serves, so a synced release knows exactly what a shipped one knows:

    adapters (torch_npu wheel yaml)
      -> aclnn map, legacy ops, C++ functions (op-plugin facts per torch version)
      -> name and cross-framework mappings (`opdb.derive`, over the whole database)

Per-dtype support and signature drift are computed at query time from these same
columns (`adapters.aclnn` -> the APIs' dtype lists; `adapters.signature` -> drift), so
every row written through this module feeds them alike.

`build_torch_npu(wheels)` is the step for any set of releases; `opdb build` passes the
committed releases, `opdb sync torch-npu` one wheel. `derive_for(part, context)` adds
the derived mappings of `part`'s ops given everything else opdb knows (`context`).
"""
from __future__ import annotations

from pathlib import Path

from opdb.model import IngestResult


def sources_dir() -> Path:
    from opdb.build import default_sources_dir

    return default_sources_dir()


def aclnn_map_path(sources: Path | None = None) -> Path:
    return (sources or sources_dir()) / "torch" / "op_plugin_aclnn_map.jsonl"


def build_torch_npu(wheels: IngestResult, sources: Path | None = None,
                    checkout=None) -> IngestResult:
    """torch_npu release adapters with op-plugin's aclnn APIs, legacy ops and C++
    functions for each release's torch version; plus their adapter mappings and
    provenance (the wheels' and the aclnn map's). `checkout`: an op-plugin
    `CheckoutTree` read by `opdb sync op-plugin`, whose records replace the committed
    extraction's (the same attachment either way)."""
    from opdb.ingest import op_plugin

    versions = sorted({a.version for a in wheels.adapters})
    if checkout is not None:
        enriched = op_plugin.load_checkout_map(checkout, versions, wheels)
    else:
        enriched = op_plugin.load_aclnn_map(aclnn_map_path(sources), versions, wheel=wheels)
    enriched.provenance = wheels.provenance + enriched.provenance
    enriched.framework_ops = wheels.framework_ops + enriched.framework_ops
    return enriched


def derive_for(part: IngestResult, context: IngestResult) -> IngestResult:
    """The derived (`name`, `cross-framework`) mappings of the ops `part` adapts, computed
    over `context` + `part` exactly as `opdb build` computes them over everything; gives
    `part`'s adapter calls their roles (in place) on the way."""
    from opdb.derive import apply_role_table, derive_mappings, load_curated, role_table

    _, pairs = load_curated()
    whole = IngestResult()
    whole.extend(context)
    whole.extend(part)
    roles = role_table(whole)  # roles decided over every release, as the build does
    apply_role_table(part, roles)
    apply_role_table(whole, roles)
    ops = {(a.framework, a.op) for a in part.adapters}
    first: dict[tuple, object] = {}
    for m in derive_mappings(whole, pairs):  # the first row of a key wins, as in the snapshot
        if (m.framework, m.op) in ops:
            first.setdefault(m.key(), m)
    return IngestResult(mappings=list(first.values()))
