"""`opdb build`: regenerate the shipped snapshot from the sources.

Inputs: the extracted public sources (`opdb-sources/`: CANN catalog, op-plugin facts,
PaddleCustomDevice extracts, Paddle op YAML), the torch_npu wheel files committed under
`opdb/sources/torch_npu/`, the curated table, and the installed torch 2.13.0 and
paddlepaddle 3.3.1 (their op catalogs). Output: `opdb/snapshot/*.jsonl` + manifest,
byte-identical for the same inputs (a test rebuilds and compares).
"""
from __future__ import annotations

import os
from pathlib import Path

from opdb import snapshot
from opdb.derive import derive_all, load_curated
from opdb.errors import OpscanError
from opdb.model import IngestResult

REPO_ROOT = Path(__file__).resolve().parent.parent


def default_sources_dir() -> Path:
    """$OPSCAN_SOURCES, else the extracts committed in the repository (`opdb/sources/`)."""
    env = os.environ.get("OPSCAN_SOURCES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "sources"


def ingest_all(sources: Path, log=lambda msg: None) -> IngestResult:
    """Run every ingester over `sources`; returns the merged result (with derived mappings)."""
    if not (sources / "cann" / "aclnn_apis.jsonl").exists():
        raise OpscanError(f"{sources} does not hold the opdb sources (no cann/aclnn_apis.jsonl)",
                          hint="pass --sources DIR or set OPSCAN_SOURCES")
    from opdb.ingest import (cann_catalog, op_plugin, paddle_catalog, paddle_custom_device,
                             torch_catalog, torch_npu_wheel)

    result = IngestResult()

    def step(name: str, part: IngestResult) -> None:
        n = sum(1 for _ in part.records())
        log(f"  {name}: {n} records")
        result.extend(part)

    step("cann catalog", cann_catalog.load_catalog(sources / "cann" / "aclnn_apis.jsonl"))
    from opdb.pipeline import build_torch_npu

    wheels = torch_npu_wheel.load_committed_releases()
    versions = sorted({a.version for a in wheels.adapters})
    step(f"torch_npu {', '.join(versions)} + op-plugin aclnn map", build_torch_npu(wheels, sources))
    step("op-plugin known failures", IngestResult(known_failures=op_plugin.load_unsupported_info(
        sources / "torch" / "op_plugin" / "unsupported_ops_info_base.yaml")))
    step("torch catalog", torch_catalog.load_torch_catalog())
    step("PaddleCustomDevice", paddle_custom_device.load_scanned(sources / "paddle"))
    step("paddle catalog", paddle_catalog.load_paddle_catalog(sources / "paddle" / "yaml"))
    curated, pairs = load_curated()
    step("curated", curated)
    derived = IngestResult(mappings=derive_all(result, pairs))
    step("derived mappings", derived)
    return result


def build(sources: Path | None = None, out_dir: Path = snapshot.SNAPSHOT_DIR,
          log=lambda msg: None) -> dict:
    """Regenerate the snapshot into `out_dir`; returns its manifest."""
    sources = sources or default_sources_dir()
    result = ingest_all(sources, log)
    return snapshot.write_snapshot(result, out_dir)
