"""opdb.git_read: reading a bare git mirror; a failing git command is one line naming the
command and the directory, and an extractor given a wrong --repo exits non-zero with
one line and writes nothing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opdb.git_read import GitError, git_bytes, git_text

ROOT = Path(__file__).resolve().parents[2]


def _repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    run = lambda *a: subprocess.run(["git", "-C", str(work), *a], check=True,  # noqa: E731
                                    capture_output=True)
    run("init", "-q")
    (work / "f.txt").write_bytes("caf\u00e9\n".encode())
    run("add", "f.txt")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return work / ".git"


def test_reads_a_file_at_a_commit(tmp_path):
    gitdir = _repo(tmp_path)
    assert git_bytes(gitdir, "show", "HEAD:f.txt") == "caf\u00e9\n".encode()
    assert git_text(gitdir, "show", "HEAD:f.txt") == "caf\u00e9\n"


def test_a_failing_command_is_one_line(tmp_path):
    gitdir = _repo(tmp_path)
    with pytest.raises(GitError) as e:
        git_text(gitdir, "show", "HEAD:missing.txt")
    msg = str(e.value)
    assert "\n" not in msg and "git show HEAD:missing.txt failed in" in msg
    with pytest.raises(GitError):
        git_bytes(tmp_path, "rev-parse", "HEAD")  # not a repository


def test_extractor_refuses_a_wrong_repo_in_one_line(tmp_path):
    out = ROOT / "opdb/sources/torch/op_plugin_call_limits.jsonl"
    before = out.read_bytes()
    r = subprocess.run([sys.executable, str(ROOT / "opdb/sources/torch/extract_call_limits.py"),
                        "--repo", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "extract_call_limits:" in r.stderr
    assert "--repo takes a bare git clone" in r.stderr
    assert out.read_bytes() == before
