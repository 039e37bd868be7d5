"""A scan names its target pairing and the overlay sources it read (issue 14): with torch
2.13 installed and torch_npu 2.14.0 synced into the overlay, no --target still scans
against torch_npu 2.13.0; --target torch_npu==2.14.0 says so in one output line and in
every report format."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from analyzer.cli import main
from opdb import sync
from tests.opdb.test_sync_equals_build import make_wheel

MODEL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models" / "tiny_mlp.py"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def synced_home(tmp_path_factory):
    """An OPSCAN_HOME with torch_npu 2.14.0 synced into its overlay, synced once for the
    module (a scan only reads the overlay; overlay_with_2140 checks it is unchanged)."""
    tmp = tmp_path_factory.mktemp("pairing")
    home = tmp / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPSCAN_HOME", str(home))
        sync.run_sync("torch-npu", {"wheel": make_wheel(tmp, "2.14.0", "2.14.0")})
    overlay = home / "overlay.sqlite"
    return home, _sha256(overlay)


@pytest.fixture()
def overlay_with_2140(synced_home, tmp_path, monkeypatch):
    home, digest = synced_home
    monkeypatch.setenv("OPSCAN_HOME", str(home))
    yield tmp_path
    assert _sha256(home / "overlay.sqlite") == digest, "a scan wrote to the overlay"


def test_default_target_is_the_installed_torchs_release_even_with_newer_in_overlay(
        overlay_with_2140, capsys):
    out = overlay_with_2140 / "out"
    assert main([str(MODEL), "--framework", "torch", "-o", str(out), "--format", "json"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["target"] == "torch_npu==2.13.0"
    assert "note: target" not in capsys.readouterr().out
    overlay = {k: v for k, v in report["opdb"].items() if k.startswith("overlay ")}
    # the wheel and the op-plugin aclnn map the sync derived its rows with
    assert sorted(overlay) == ["overlay op-plugin@517f2e7d0f202f38b76310706cb977ca2388ad21",
                               "overlay torch_npu-wheel@2.14.0"]
    assert overlay["overlay torch_npu-wheel@2.14.0"].startswith("adapter-list; sha256 ")
    assert report["opdb"]["snapshot_sha256"]


def test_explicit_target_for_another_torch_is_one_line_and_in_the_report(overlay_with_2140, capsys):
    out = overlay_with_2140 / "out"
    assert main([str(MODEL), "--framework", "torch", "--target", "torch_npu==2.14.0",
                 "-o", str(out), "--format", "json,md"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if "is built for torch" in x]
    assert len(lines) == 1
    assert lines[0].startswith("  note: target torch_npu==2.14.0 is built for torch 2.14, "
                               "installed torch is 2.13.0 (explicit --target)")
    report = json.loads((out / "report.json").read_text())
    assert report["target"] == "torch_npu==2.14.0"
    assert report["notes"][0] == lines[0].removeprefix("  note: ")
    assert report["opdb"]["target note 1"] == report["notes"][0]
    assert report["notes"][0] in (out / "report.md").read_text()
