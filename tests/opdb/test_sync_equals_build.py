"""`opdb sync torch-npu` runs the build's derivation: a synced release equals a shipped one.

The wheel is rebuilt from the committed extract of torch_npu 2.13.0 (the same bytes the
PyPI wheel holds, sha256 in opdb/sources/torch_npu/provenance.json) plus its version.py
and METADATA lines, so the test needs no network.
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from opdb import snapshot, store, sync
from opdb.ingest.torch_npu_wheel import CODEGEN_YAML
from opdb.model import to_row

SOURCES = Path(__file__).resolve().parents[2] / "opdb" / "sources" / "torch_npu"


def make_wheel(tmp: Path, yaml_release: str, version: str) -> Path:
    prov = json.loads((SOURCES / "provenance.json").read_text())["releases"][yaml_release]
    whl = tmp / f"torch_npu-{version}-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr(CODEGEN_YAML, (SOURCES / yaml_release / Path(CODEGEN_YAML).name).read_bytes())
        zf.writestr("torch_npu/version.py",
                    f"__version__ = '{version}'\ngit_version = '{prov['git_version']}'\n")
        zf.writestr(f"torch_npu-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: torch_npu\nVersion: {version}\n"
                    f"Requires-Dist: torch{prov['requires_torch']}\n")
    return whl


@pytest.fixture(scope="module")
def synced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sync")
    overlay = tmp / "overlay.sqlite"
    _, counts = sync.run_sync("torch-npu", {"wheel": make_wheel(tmp, "2.13.0", "2.13.0")},
                              overlay=overlay)
    return store.read_overlay(overlay), counts, snapshot.read_snapshot()


def test_synced_release_has_the_shipped_adapter_rows_column_by_column(synced):
    ov, counts, snap = synced
    shipped = {a.key(): to_row(a) for a in snap.adapters
               if a.provider == "torch_npu" and a.version == "2.13.0"}
    got = {a.key(): to_row(a) for a in ov.adapters}
    assert got.keys() == shipped.keys()
    for key, row in shipped.items():
        for column, value in row.items():
            assert got[key][column] == value, (key, column)
    # the counts the issue quotes for the shipped 2.13.0 rows
    assert counts["adapters"] == 1500
    assert counts["adapters with aclnn"] == sum(1 for r in shipped.values() if r["aclnn"])
    assert counts["adapters with legacy ops"] == sum(1 for r in shipped.values() if r["legacy_ops"])
    assert counts["adapters with C++ function"] == sum(1 for r in shipped.values() if r["function"])
    assert counts["adapters with aclnn"] > 1000


def test_synced_release_has_the_shipped_mappings(synced):
    ov, _, snap = synced
    ops = {a.op for a in ov.adapters}
    # derived evidence (name, cross-framework): the same rows
    derived = {m.key(): to_row(m) for m in ov.mappings if m.evidence in ("name", "cross-framework")}
    shipped = {}
    for m in snap.mappings:
        if m.framework == "torch" and m.op in ops and m.evidence in ("name", "cross-framework"):
            shipped.setdefault(m.key(), to_row(m))
    assert derived == shipped
    # adapter evidence: every snapshot link that 2.13.0 contributes, and nothing else
    adapter = {m.key() for m in ov.mappings if m.evidence == "adapter"}
    shipped_adapter = {m.key() for m in snap.mappings if m.evidence == "adapter"
                       and m.framework == "torch" and re.search(r"torch_npu .*\b2\.13\.0\b", m.detail)}
    assert adapter == shipped_adapter
    assert len(adapter) > 1500


def test_synced_provenance_names_the_torch_the_wheel_requires(synced):
    ov, _, _ = synced
    wheel = [p for p in ov.provenance if p.source == "torch_npu-wheel"]
    assert [p.version for p in wheel] == ["2.13.0"]
    assert "requires torch==2.13.0.*" in wheel[0].description


def test_sync_that_would_lose_facts_is_refused_with_the_reason(tmp_path):
    overlay = tmp_path / "overlay.sqlite"
    # the 2.1 adapter list labelled 2.13.0: hundreds of 2.13.0 ops would vanish
    whl = make_wheel(tmp_path, "2.1.0.post17", "2.13.0")
    with pytest.raises(sync.SyncRefused) as err:
        sync.run_sync("torch-npu", {"wheel": whl}, overlay=overlay)
    msg = str(err.value)
    assert msg.startswith("refusing to sync: torch_npu==2.13.0 would lose ")
    assert re.search(r"\d+ ops \(e\.g\. aten::", msg) and "--force" in msg
    assert not overlay.exists()
    sync.run_sync("torch-npu", {"wheel": whl}, overlay=overlay, force=True)
    assert {a.version for a in store.read_overlay(overlay).adapters} == {"2.13.0"}


def test_resync_of_another_release_keeps_the_first_ones_mappings(tmp_path):
    overlay = tmp_path / "overlay.sqlite"
    sync.run_sync("torch-npu", {"wheel": make_wheel(tmp_path, "2.13.0", "2.16.0")}, overlay=overlay)
    first = {m.key() for m in store.read_overlay(overlay).mappings}
    sync.run_sync("torch-npu", {"wheel": make_wheel(tmp_path, "2.13.0", "2.16.1")}, overlay=overlay)
    ov = store.read_overlay(overlay)
    assert {a.version for a in ov.adapters} == {"2.16.0", "2.16.1"}
    keys = [m.key() for m in ov.mappings]
    assert len(keys) == len(set(keys))  # no duplicated rows
    prov = [p.key() for p in ov.provenance]
    assert len(prov) == len(set(prov))
    assert set(keys) >= first
