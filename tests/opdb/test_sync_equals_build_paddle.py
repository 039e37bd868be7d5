"""PaddleCustomDevice: the snapshot's kernels are what `opdb sync paddle-custom-device`
gives for the same commit. `opdb build` reads `opdb/sources/paddle/scan/<branch>.jsonl`,
written by `python -m opdb.sources.paddle.extract` with the parser the sync runs; here
both paths run on a git repository made from the fixture checkout and must agree row by
row, column by column. (On the real upstream trees the same agreement is checked by
`python -m opdb.sources.paddle.extract --repo GIT_DIR --check`; docs/opdb-releases.md.)"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from opdb import store, sync
from opdb.build import default_sources_dir
from opdb.ingest import paddle_custom_device as pcd
from opdb.model import to_row
from opdb.sources.paddle import extract

CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "paddle" / "checkout"
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2024-10-18T16:08:21+08:00",
       "GIT_COMMITTER_DATE": "2024-10-18T16:08:21+08:00", "PATH": "/usr/bin:/bin"}
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=ENV, capture_output=True)


@pytest.fixture()
def repo(tmp_path):
    repo = tmp_path / "pcd"
    shutil.copytree(CHECKOUT, repo)
    for cmd in (["init", "-q"], ["checkout", "-q", "-b", "release/9.9"], ["add", "."],
                ["commit", "-q", "-m", "fixture"]):
        _git(repo, *cmd)
    return repo


def test_extract_for_build_and_sync_give_the_same_rows(repo, tmp_path):
    text, record = extract.scan_branch(repo / ".git", "release/9.9")
    built = {"adapters": {}, "op_aclnn_map": {}}
    for line in text.splitlines():
        row = json.loads(line)
        built[row["table"]][json.dumps(row["row"], sort_keys=True)] = row["row"]
    assert record["kernels"] == len(built["adapters"]) > 0
    overlay = tmp_path / "overlay.sqlite"
    sync.run_sync("paddle-custom-device", {"src": repo}, overlay=overlay)
    ov = store.read_overlay(overlay)
    got_adapters = {a.op: to_row(a) for a in ov.adapters}
    want_adapters = {r["op"]: r for r in built["adapters"].values()}
    assert got_adapters.keys() == want_adapters.keys()
    # the extract is the parser's raw rows; roles are derived afterwards, by the same
    # opdb.derive.role_table in build and sync, so compare them separately
    derived = ("roles", "role")
    for op, row in want_adapters.items():
        for column, value in row.items():
            if column not in derived:
                assert got_adapters[op][column] == value, (op, column)
        assert len(got_adapters[op]["roles"]) == len(got_adapters[op]["aclnn"]), op
    strip = lambda r: json.dumps({k: v for k, v in r.items() if k not in derived}, sort_keys=True)  # noqa: E731
    assert sorted(strip(to_row(m)) for m in ov.mappings) == \
        sorted(strip(json.loads(m)) for m in built["op_aclnn_map"])
    assert all(m.role for m in ov.mappings if m.evidence == "adapter")
    assert {a.version for a in ov.adapters} == {"release-9.9"}


def test_resync_of_a_branch_that_lost_kernels_is_refused(repo, tmp_path):
    overlay = tmp_path / "overlay.sqlite"
    sync.run_sync("paddle-custom-device", {"src": repo}, overlay=overlay)
    kernels = sorted((repo / "backends" / "npu" / "kernels").rglob("*.cc"))
    first = {a.op: a for a in store.read_overlay(overlay).adapters}
    gone = {a.op for a in first.values() if a.source.path.endswith(kernels[0].name)}
    assert gone
    kernels[0].unlink()
    _git(repo, "commit", "-q", "-am", "drop a file")
    with pytest.raises(sync.SyncRefused, match=r"PaddleCustomDevice@release-9\.9 would lose \d+ ops"):
        sync.run_sync("paddle-custom-device", {"src": repo}, overlay=overlay)
    sync.run_sync("paddle-custom-device", {"src": repo}, overlay=overlay, force=True)
    assert not gone & {a.op for a in store.read_overlay(overlay).adapters}  # the branch moved


def test_committed_scans_cover_every_branch_and_match_their_provenance():
    sources = default_sources_dir() / "paddle"
    prov = json.loads((sources / "scan" / "provenance.json").read_text())["branches"]
    assert sorted(prov) == ["develop", "release-2.5", "release-2.6", "release-3.0-beta"]
    result = pcd.load_scanned(sources)
    for name, rec in prov.items():
        kernels = [a for a in result.adapters if a.version == name
                   and not a.notes[0].startswith("custom op") and a.source.version == rec["commit"]]
        assert len(kernels) == rec["kernels"], name
        assert all(a.source.date == rec["commit_date"] for a in kernels)
