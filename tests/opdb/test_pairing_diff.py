"""Default target pairing with the installed framework, `opdb diff`, and `opdb stats`
listing every shipped release (issue 14)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from opdb import cli, pairing
from opdb.diff import diff_releases
from opdb.query import OpDB

PROV = Path(__file__).resolve().parents[2] / "opdb" / "sources" / "torch_npu" / "provenance.json"
RELEASES = ("2.1.0.post17", "2.3.1.post6", "2.4.0.post4", "2.5.1.post1", "2.6.0.post5",
            "2.7.1.post11", "2.8.0.post5", "2.9.1", "2.10.0.post7", "2.11.0.post3",
            "2.12.0.post3", "2.13.0", "2.14.0")


@pytest.fixture(scope="module")
def db():
    return OpDB.open(overlay=False)


def test_every_release_line_is_shipped_and_requires_its_own_torch(db):
    assert sorted(t.version for t in db.targets("torch")) == sorted(RELEASES)
    prov = json.loads(PROV.read_text())["releases"]
    for version in RELEASES:
        req = prov[version]["requires_torch"]
        assert pairing.minor(req.lstrip("=")) == pairing.minor(version), (version, req)


def test_default_torch_target_pairs_with_the_installed_torch_not_the_newest(db):
    p = pairing.pair(db, "torch", installed="2.13.0")
    assert str(p.target) == "torch_npu==2.13.0" and p.paired and p.lines() == []
    assert str(db.targets("torch")[0]) == "torch_npu==2.14.0"
    assert str(pairing.pair(db, "torch", installed="2.9.1").target) == "torch_npu==2.9.1"
    assert str(pairing.pair(db, "torch", installed="2.6.0").target) == "torch_npu==2.6.0.post5"


def test_installed_torch_without_a_release_uses_the_nearest_with_a_note(db):
    p = pairing.pair(db, "torch", installed="2.2.1")
    assert str(p.target) == "torch_npu==2.1.0.post17"  # tie: the older one
    assert p.note.startswith("target torch_npu==2.1.0.post17 is built for torch 2.1, "
                             "installed torch is 2.2.1 (no torch_npu release for it in opdb; nearest)")


def test_explicit_target_for_another_torch_says_so_in_one_line(db):
    p = pairing.pair(db, "torch", "torch_npu==2.14.0", installed="2.13.0")
    assert str(p.target) == "torch_npu==2.14.0" and not p.paired
    assert len(p.lines()) == 1
    assert p.note.startswith("target torch_npu==2.14.0 is built for torch 2.14, installed torch "
                             "is 2.13.0 (explicit --target): schemas are compared against the "
                             "installed torch; ")
    old = pairing.pair(db, "torch", "torch_npu==2.1.0.post17", installed="2.13.0")
    assert old.only_in_target and all(db.framework_op("torch", op) is None
                                      for op in old.only_in_target)
    assert f"{len(old.only_in_target)} aten ops exist only in torch 2.1" in old.note


def test_paddle_pairs_by_branch_else_nearest_with_note_and_freshness_dates(db):
    p = pairing.pair(db, "paddle", installed="2.6.2")
    assert str(p.target) == "PaddleCustomDevice@release-2.6" and p.paired
    p = pairing.pair(db, "paddle", installed="3.3.1")
    assert str(p.target) == "PaddleCustomDevice@develop" and not p.paired
    assert "no PaddleCustomDevice branch for Paddle 3.3" in p.note
    assert ("PaddleCustomDevice@develop data is from 2024-10-18, older than the installed "
            "paddle 3.3.1 (released 2026-03-24)") in p.freshness


def test_diff_between_releases(db):
    d = diff_releases(db, "torch_npu==2.13.0", "torch_npu==2.14.0")
    assert d.added == [] and d.removed == []
    changed = {(c.op, c.field) for c in d.changed}
    assert ("aten::quantize_per_tensor", "aclnn") in changed
    assert not any(f == "schema" for _, f in changed)  # unknown schema is not a change
    d = diff_releases(db, "torch_npu==2.1.0.post17", "torch_npu==2.13.0")
    assert "aten::_fused_adam_" in d.added
    p = diff_releases(db, "PaddleCustomDevice@release-2.6", "PaddleCustomDevice@develop")
    assert p.added and {c.field for c in p.changed} >= {"aclnn", "dtypes"}
    assert p.summary().startswith("PaddleCustomDevice@release-2.6 -> PaddleCustomDevice@develop: "
                                  f"{len(p.added)} ops added, {len(p.removed)} removed")


def test_diff_cli_json_and_errors(capsys):
    assert cli.main(["diff", "torch_npu==2.13.0", "torch_npu==2.14.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["from"] == "torch_npu==2.13.0" and out["counts"]["added"] == 0
    assert cli.main(["diff", "torch_npu==2.13.0", "PaddleCustomDevice@develop"]) == 1
    assert "belong to different frameworks" in capsys.readouterr().err
    assert cli.main(["diff", "torch_npu==2.13.0", "torch_npu==9.9"]) == 1
    assert "unknown torch target" in capsys.readouterr().err


def test_stats_lists_every_release_and_branch(capsys):
    assert cli.main(["stats"]) == 0
    out = capsys.readouterr().out
    for version in RELEASES:
        assert f"torch_npu=={version}: " in out
    for branch in ("develop", "release-3.0-beta", "release-2.6"):
        assert f"PaddleCustomDevice@{branch}: " in out


def test_data_freshness_is_computed_once_for_show_reports_and_blacklist(db):
    # review debt: analyzer.blacklist.version_pairing and opdb.pairing computed the data date
    # and the installed release's date separately; both now read opdb.pairing.data_freshness
    from analyzer.blacklist import version_pairing

    t = db.parse_target("paddle", "PaddleCustomDevice@develop")
    fresh = pairing.data_freshness(db, t, "3.3.1")
    assert (fresh.commit[:12], fresh.data_date, fresh.released) == \
        ("77090b642bfe", "2024-10-18", "2026-03-24")
    assert fresh.days == 522 and fresh.stale
    p = pairing.pair(db, "paddle", t, installed="3.3.1")
    assert p.data_date == fresh.data_date and fresh.released in p.freshness
    assert version_pairing(db, t, "3.3.1").startswith(
        "PaddleCustomDevice@develop data is commit 77090b642bfe of 2024-10-18, 522 days older "
        "than the installed Paddle 3.3.1 (released 2026-03-24)")
    unknown = pairing.data_freshness(db, t, "9.9.9")
    assert unknown.released == "" and unknown.days is None and not unknown.stale
