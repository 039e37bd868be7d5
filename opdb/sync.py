"""`opdb sync ...`: ingest a real install or checkout into the user's overlay database.

A sync runs the same derivation as `opdb build` (`opdb.pipeline`): a torch_npu wheel's
adapters get op-plugin's aclnn APIs, legacy ops and C++ functions for the wheel's torch
version, then the derived name / cross-framework mappings computed over everything opdb
already knows. So a synced release has the same columns a shipped one has. An op-plugin
checkout replaces the committed op-plugin extraction in that same step, for the committed
torch_npu releases it builds (`--release`), labelled with the checkout's commit.

The shipped snapshot is never modified; re-syncing the same source and version
replaces its earlier rows. A sync that would leave a release knowing less than opdb
already knows about it (ops, aclnn APIs, legacy ops or C++ functions gone) is refused
with the reason, unless `force` is given.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opdb import store
from opdb.errors import OpscanError
from opdb.model import IngestResult


class SyncRefused(OpscanError):
    """A sync would lose facts the database already has for the same release."""


def _ingest(what: str, opts: dict, warnings: list[str]) -> IngestResult:
    if what == "cann":
        from opdb.ingest.aclnn_headers import scan_cann_home
        return scan_cann_home(Path(opts["home"]), warnings)
    if what == "torch-npu":
        from opdb.ingest import torch_npu_wheel
        if opts.get("wheel"):
            return torch_npu_wheel.load_wheel(Path(opts["wheel"]))
        return torch_npu_wheel.load_installed(Path(opts["installed"]))
    if what == "op-plugin":  # the releases' adapters; the checkout comes in at `derive`
        return checkout_releases(opts["checkout"], opts.get("release"))
    if what == "paddle-custom-device":
        from opdb.ingest.paddle_custom_device import scan_checkout
        return scan_checkout(Path(opts["src"]))
    if what == "paddle-live":
        from opdb.ingest.paddle_live import read_live_registry
        return read_live_registry()
    raise OpscanError(f"unknown sync source {what!r}")


def checkout_releases(tree, releases=None) -> IngestResult:
    """The committed torch_npu release adapter lists an op-plugin checkout is synced into:
    `releases` (each must be committed and its torch version in the checkout's
    `all_version`), default every committed release whose torch version it lists."""
    from opdb.ingest import op_plugin, torch_npu_wheel

    base = torch_npu_wheel.default_sources_dir()
    committed = sorted(p.name for p in base.iterdir()
                       if (p / Path(torch_npu_wheel.CODEGEN_YAML).name).is_file())
    if releases:
        wanted = list(dict.fromkeys(releases))
        for r in wanted:
            if r not in committed:
                raise OpscanError(f"no committed torch_npu release {r} to sync the op-plugin "
                                  f"checkout into", hint=f"choose one of {', '.join(committed)}")
            if op_plugin.torch_version_tag(r) not in tree.all_versions:
                raise OpscanError(f"torch_npu {r} is built for torch "
                                  f"{op_plugin.torch_version_tag(r)}, which this checkout's "
                                  f"all_version does not list",
                                  hint=f"all_version: {', '.join(tree.all_versions)}")
    else:
        wanted = [r for r in committed if op_plugin.torch_version_tag(r) in tree.all_versions]
        if not wanted:
            raise OpscanError("the op-plugin checkout builds for none of the committed torch_npu "
                              f"releases (all_version: {', '.join(tree.all_versions)})",
                              hint="check out an op-plugin branch that lists your torch version")
    return torch_npu_wheel.load_committed_releases(wanted)


def known_facts(overlay: Path | None = None, snapshot_dir: Path | None = None) -> IngestResult:
    """Everything opdb knows now: the shipped snapshot's records plus the overlay's."""
    from opdb import snapshot

    known = snapshot.read_snapshot(snapshot_dir or snapshot.SNAPSHOT_DIR)
    path = overlay or store.overlay_path()
    if path.exists():
        known.extend(store.read_overlay(path))
    return known


def derive(what: str, raw: IngestResult, known: IngestResult, checkout=None) -> IngestResult:
    """The rows a sync of `what` writes: `raw` run through the build's pipeline.
    `op-plugin`: `raw` holds the releases' wheel adapters, `checkout` the op-plugin tree
    whose records replace the committed extraction's."""
    from opdb import pipeline

    if what not in ("torch-npu", "op-plugin"):  # roles decided over what opdb knows plus this sync, as in build
        from opdb.derive import apply_role_table, role_table

        whole = IngestResult()
        whole.extend(known)
        whole.extend(raw)
        return apply_role_table(raw, role_table(whole))
    releases = {(a.provider, a.version) for a in raw.adapters}
    part = pipeline.build_torch_npu(raw, checkout=checkout)
    context = IngestResult(**{f: list(getattr(known, f)) for f in (
        "apis", "framework_ops", "mappings", "known_failures", "provenance")})
    context.adapters = [a for a in known.adapters if (a.provider, a.version) not in releases]
    part.extend(pipeline.derive_for(part, context))
    return part


@dataclass
class Loss:
    """Facts a release had before a sync and would not have after it."""

    release: str
    ops: list[str] = field(default_factory=list)
    aclnn: list[tuple[str, str]] = field(default_factory=list)
    legacy_ops: list[tuple[str, str]] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.ops or self.aclnn or self.legacy_ops or self.functions)

    def reason(self) -> str:
        parts = []
        for what, items in (("ops", self.ops), ("op->aclnn links", self.aclnn),
                            ("op->legacy op links", self.legacy_ops),
                            ("C++ function names", self.functions)):
            if items:
                first = items[0] if isinstance(items[0], str) else " -> ".join(items[0])
                parts.append(f"{len(items)} {what} (e.g. {first})")
        return f"{self.release} would lose " + ", ".join(parts)


def losses(new: IngestResult, known: IngestResult) -> list[Loss]:
    """Per release in `new`, the facts `known` has about that release that `new` lacks."""
    from opdb.model import format_target

    out = []
    for provider, version in sorted({(a.provider, a.version) for a in new.adapters}):
        before = {a.op: a for a in known.adapters if (a.provider, a.version) == (provider, version)}
        if not before:
            continue
        after = {a.op: a for a in new.adapters if (a.provider, a.version) == (provider, version)}
        loss = Loss(format_target(provider, version))
        loss.ops = sorted(set(before) - set(after))
        for op in sorted(set(before) & set(after)):
            b, a = before[op], after[op]
            loss.aclnn += [(op, x) for x in sorted(set(b.aclnn) - set(a.aclnn))]
            loss.legacy_ops += [(op, x) for x in sorted(set(b.legacy_ops) - set(a.legacy_ops))]
            if b.function and not a.function:
                loss.functions.append(op)
        if loss:
            out.append(loss)
    return out


def _replace_keys(what: str, result: IngestResult) -> set[tuple[str, str]]:
    """(source, version) pairs whose earlier overlay rows this sync replaces: the synced
    source's own, never those of shared inputs (op-plugin's map, derived rows) that
    other synced releases' rows also carry."""
    shared = {"op-plugin", "opdb-derive", "curated"} if what == "torch-npu" else \
        {"opdb-derive", "curated"} if what == "op-plugin" else set()
    keys = {(r.source.source, r.source.version) for r in result.records()
            if hasattr(r, "source") and not isinstance(r.source, str)}
    keys |= {(p.source, p.version) for p in result.provenance}
    return {k for k in keys if k[0] not in shared}


def run_sync(what: str, opts: dict, overlay: Path | None = None, force: bool = False,
             warn=lambda line: None) -> tuple[Path, dict[str, int]]:
    """Ingest `what`, derive it as the build does, refuse fact losses, write it to the
    overlay; returns (overlay path, row counts). `warn` gets one line per skipped odd
    declaration and per release whose adapters got no aclnn API at all."""
    warnings: list[str] = []
    checkout = None
    if what == "op-plugin":
        from opdb.ingest.op_plugin import read_checkout
        checkout = read_checkout(Path(opts["src"]), warnings=warnings)
        opts = {**opts, "checkout": checkout}
    raw = _ingest(what, opts, warnings)
    for line in warnings:
        warn(line)
    known = known_facts(overlay)
    result = derive(what, raw, known, checkout)
    lost = losses(result, known)
    if lost and not force:
        raise SyncRefused("refusing to sync: " + "; ".join(x.reason() for x in lost),
                          hint="check the wheel/checkout is the release you meant; "
                               "pass --force to replace those rows anyway")
    for provider, version in sorted({(a.provider, a.version) for a in result.adapters
                                     if a.provider == "torch_npu"}):
        if not any(a.aclnn for a in result.adapters if a.version == version):
            warn(f"torch_npu {version}: no adapter got an aclnn API (op-plugin's map has no "
                 f"entries for its torch version); dtype gaps cannot be judged for it")
    source = opts.get("home") or opts.get("wheel") or opts.get("installed") or opts.get("src")
    path = store.write_overlay(result, _replace_keys(what, result), overlay,
                               what=f"opdb sync {what}" + (f" {source}" if source else ""))
    counts = {"aclnn APIs": len(result.apis), "framework ops": len(result.framework_ops),
              "adapters": len(result.adapters),
              "adapters with aclnn": sum(1 for a in result.adapters if a.aclnn),
              "adapters with legacy ops": sum(1 for a in result.adapters if a.legacy_ops),
              "adapters with C++ function": sum(1 for a in result.adapters if a.function),
              "mappings": len(result.mappings)}
    return path, counts
