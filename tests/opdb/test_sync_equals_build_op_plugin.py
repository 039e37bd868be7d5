"""op-plugin: `opdb sync op-plugin` of a checkout gives the rows `opdb build` gives for the
same facts.

The fixture `tests/fixtures/torch/op_plugin_sync_checkout/` is a small tree in op-plugin's
layout written for these tests (function yaml, opapi kernels, legacy aclops kernels, an
op_plugin/utils helper); `op_plugin_sync_checkout.aclnn_map.jsonl` holds, written by hand,
the records the shared extraction (`opdb/sources/torch/op_plugin_aclnn_map.jsonl`, the
build's input) gives for that tree. Build side: the committed torch_npu 2.13.0 adapter list
through `opdb.pipeline` with that jsonl. Sync side: the checkout, made a git repository,
synced into an empty overlay. Every adapter row of the release must be equal column by
column (aclnn with roles, legacy ops, C++ function, notes; only the note naming the input
file differs), and so must every mapping. (On the real tree at the extraction's commit:
`python -m opdb.agreement --only op-plugin`, docs/opdb-releases.md.)
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from opdb import pipeline, snapshot, store, sync
from opdb.errors import OpscanError
from opdb.ingest import op_plugin, torch_npu_wheel
from opdb.model import IngestResult, to_row

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
CHECKOUT = FIX / "op_plugin_sync_checkout"
RECORDS = FIX / "op_plugin_sync_checkout.aclnn_map.jsonl"
RELEASE = "2.13.0"
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2026-08-21T14:44:20+08:00",
       "GIT_COMMITTER_DATE": "2026-08-21T14:44:20+08:00", "PATH": "/usr/bin:/bin"}
OPS = {"aten::add.Tensor", "aten::add.Scalar", "aten::_log_softmax", "aten::abs", "aten::abs_"}


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=ENV,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.fail("git is needed (scripts/setup.sh installs it)")
    repo = tmp_path_factory.mktemp("op_plugin") / "op-plugin"
    shutil.copytree(CHECKOUT, repo)
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "fixture"]):
        _git(repo, *cmd)
    return repo, _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def both(repo, tmp_path_factory):
    root, commit = repo
    tmp = tmp_path_factory.mktemp("sync")
    overlay = tmp / "overlay.sqlite"
    # the fixture knows 5 ops; the shipped 2.13.0 rows know ~1,250 op->aclnn links: refused
    with pytest.raises(sync.SyncRefused,
                       match=r"^refusing to sync: torch_npu==2\.13\.0 would lose \d+ op->aclnn links"):
        sync.run_sync("op-plugin", {"src": root, "release": [RELEASE]}, overlay=overlay)
    assert not overlay.exists()
    _, counts = sync.run_sync("op-plugin", {"src": root, "release": [RELEASE]},
                              overlay=overlay, force=True)
    synced = store.read_overlay(overlay)

    sources = tmp / "sources"
    (sources / "torch").mkdir(parents=True)
    shutil.copy(RECORDS, pipeline.aclnn_map_path(sources))
    known = snapshot.read_snapshot()
    built = pipeline.build_torch_npu(torch_npu_wheel.load_committed_releases([RELEASE]), sources)
    context = IngestResult(**{f: list(getattr(known, f)) for f in (
        "apis", "framework_ops", "mappings", "known_failures", "provenance")})
    context.adapters = [a for a in known.adapters
                        if (a.provider, a.version) != ("torch_npu", RELEASE)]
    built.extend(pipeline.derive_for(built, context))
    return synced, built, commit, counts


def _row(adapter) -> dict:
    row = to_row(adapter)
    row["notes"] = [n for n in row["notes"] if not n.startswith("op-plugin@")]
    return row


def test_synced_adapter_rows_equal_the_built_ones_column_by_column(both):
    synced, built, _, counts = both
    got = {a.key(): _row(a) for a in synced.adapters}
    want = {a.key(): _row(a) for a in built.adapters}
    assert got.keys() == want.keys() and len(got) == counts["adapters"] > 1000
    for key, row in want.items():
        for column, value in row.items():
            assert got[key][column] == value, (key, column)
    ops = {a.op: a for a in synced.adapters}
    assert ops["aten::add.Tensor"].aclnn == ("aclnnAdd",)
    assert ops["aten::add.Tensor"].roles == ("primary",)
    # legacy acl_op kernels: overloaded helpers told apart by argument count, a helper under
    # op_plugin/utils, `acl_op::abs_out(...)` calls in the same file
    assert ops["aten::add.Tensor"].legacy_ops == ("AxpyV2",)
    assert ops["aten::add.Scalar"].legacy_ops == ("Add",)
    assert ops["aten::_log_softmax"].legacy_ops == ("LogSoftmaxV2",)
    assert ops["aten::abs_"].legacy_ops == ("Abs",) and ops["aten::abs_"].function == ""
    assert ops["aten::_log_softmax"].function == "_log_softmax"
    assert {a.version for a in synced.adapters} == {RELEASE}  # the release, not `local`


def test_synced_mappings_equal_the_built_ones(both):
    synced, built, commit, _ = both

    def rows(result):
        out = []
        for m in result.mappings:
            row = to_row(m)
            if m.source.source == op_plugin.SOURCE_ID:
                row["source"] = {k: v for k, v in row["source"].items() if k != "version"}
            out.append(repr(sorted(row.items())))
        return sorted(out)

    assert rows(synced) == rows(built)
    mine = [m for m in synced.mappings if m.source.source == op_plugin.SOURCE_ID]
    assert {m.op for m in mine} == OPS - {"aten::abs", "aten::abs_"}
    assert {m.source.version for m in mine} == {commit}  # the checkout's commit, not `local`
    assert {p.version for p in synced.provenance if p.source == op_plugin.SOURCE_ID} == {commit}


def test_checkout_records_are_what_the_extraction_records():
    tree = op_plugin.read_checkout(CHECKOUT, commit="f" * 40)
    got = {r["op"]: r for _, r in op_plugin.checkout_records(tree)}
    want = {r["op"]: r for _, r in op_plugin.read_aclnn_map(RECORDS)}
    assert got.keys() == want.keys() == OPS
    for op, rec in want.items():
        for field, value in rec.items():
            assert got[op][field] == value, (op, field)


def test_a_release_the_checkout_does_not_build_is_refused(repo, tmp_path):
    root, _ = repo
    with pytest.raises(OpscanError, match=r"torch_npu 2\.6\.0\.post5 is built for torch v2\.6, "
                                        r"which this checkout's all_version does not list"):
        sync.run_sync("op-plugin", {"src": root, "release": ["2.6.0.post5"]},
                      overlay=tmp_path / "o.sqlite")
    assert not (tmp_path / "o.sqlite").exists()
