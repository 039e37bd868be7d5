"""`opdb sync ...`: ingest a real install or checkout into the user's overlay database.

The shipped snapshot is never modified; re-syncing the same source and version
replaces its earlier rows.
"""
from __future__ import annotations

from pathlib import Path

from opdb import store
from opdb.errors import OpscanError
from opdb.model import IngestResult


def _ingest(what: str, opts: dict) -> IngestResult:
    if what == "cann":
        from opdb.ingest.aclnn_headers import scan_cann_home
        return scan_cann_home(Path(opts["home"]))
    if what == "torch-npu":
        from opdb.ingest import torch_npu_wheel
        if opts.get("wheel"):
            return torch_npu_wheel.load_wheel(Path(opts["wheel"]))
        return torch_npu_wheel.load_installed(Path(opts["installed"]))
    if what == "op-plugin":
        from opdb.ingest.op_plugin import scan_checkout
        return scan_checkout(Path(opts["src"]))
    if what == "paddle-custom-device":
        from opdb.ingest.paddle_custom_device import scan_checkout
        return scan_checkout(Path(opts["src"]))
    if what == "paddle-live":
        from opdb.ingest.paddle_live import read_live_registry
        return read_live_registry()
    raise OpscanError(f"unknown sync source {what!r}")


def run_sync(what: str, opts: dict, overlay: Path | None = None) -> tuple[Path, dict[str, int]]:
    """Ingest `what` and write it to the overlay; returns (overlay path, row counts)."""
    result = _ingest(what, opts)
    replace = {(r.source.source, r.source.version) for r in result.records() if hasattr(r, "source")
               and not isinstance(r.source, str)}
    replace |= {(p.source, p.version) for p in result.provenance}
    source = opts.get("home") or opts.get("wheel") or opts.get("installed") or opts.get("src")
    path = store.write_overlay(result, replace, overlay,
                               what=f"opdb sync {what}" + (f" {source}" if source else ""))
    counts = {"aclnn APIs": len(result.apis), "framework ops": len(result.framework_ops),
              "adapters": len(result.adapters), "mappings": len(result.mappings)}
    return path, counts
