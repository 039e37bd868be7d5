"""The shipped snapshot: `opdb build` reproduces it byte for byte, and its counts match
the sources' READMEs (read from the READMEs themselves, not typed in here)."""
from __future__ import annotations

import re

import pytest

from opdb import snapshot
from opdb.build import build, default_sources_dir
from opdb.query import OpDB

SOURCES = default_sources_dir()
needs_sources = pytest.mark.skipif(not (SOURCES / "cann").is_dir(),
                                   reason=f"opdb sources not found at {SOURCES} (set OPSCAN_SOURCES)")


@needs_sources
@pytest.mark.slow
def test_build_reproduces_committed_snapshot(tmp_path):
    build(SOURCES, tmp_path)
    committed = sorted(p.name for p in snapshot.SNAPSHOT_DIR.iterdir() if p.is_file())
    assert sorted(p.name for p in tmp_path.iterdir()) == committed
    for name in committed:
        assert (tmp_path / name).read_bytes() == (snapshot.SNAPSHOT_DIR / name).read_bytes(), name


def _readme_number(path, pattern):
    m = re.search(pattern, path.read_text(encoding="utf-8"))
    assert m, f"{pattern!r} not in {path}"
    return int(m.group(1))


@needs_sources
def test_headline_counts_match_the_sources_readmes(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path))
    db = OpDB.open(overlay=False)
    head = "\n".join(db.headline())
    apis = _readme_number(SOURCES / "cann" / "README.md", r"\*\*APIs: (\d+)\*\*")
    develop = _readme_number(SOURCES / "paddle" / "README.md", r"kernel records \(all distinct names\) \| \*\*(\d+)\*\*")
    assert f"aclnn APIs: {apis}" in head
    assert f"PaddleCustomDevice@develop: {develop} kernels" in head
    n_2130 = int(re.search(r"torch_npu==2\.13\.0: (\d+) adapted ops \((\d+) aten", head).group(2))
    assert n_2130 > 1000
    assert [str(t) for t in db.targets("torch")][0] == "torch_npu==2.14.0"  # newest first
    assert str(db.default_target("paddle")) == "PaddleCustomDevice@develop"


def test_snapshot_manifest_matches_files():
    import hashlib
    import json

    manifest = json.loads((snapshot.SNAPSHOT_DIR / "manifest.json").read_text())
    for table, info in manifest["tables"].items():
        data = (snapshot.SNAPSHOT_DIR / f"{table}.jsonl").read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"], table
        assert data.count(b"\n") == info["rows"], table
