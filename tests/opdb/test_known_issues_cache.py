"""opdb.known_issues: the shipped table parsed once per content, read back from the cache
directory without PyYAML (issue 16: a Paddle scan's blacklist reads it)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from opdb import known_issues

ROOT = Path(__file__).resolve().parents[2]


def _load_in_child(cache: Path) -> str:
    code = ("import sys; from opdb.known_issues import load_known_issues; t = load_known_issues(); "
            "print(len(t.issues), 'yaml' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPSCAN_CACHE=str(cache))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split()


def test_a_second_process_reads_the_table_without_yaml(tmp_path):
    first = _load_in_child(tmp_path)
    second = _load_in_child(tmp_path)
    assert first[1] == "True" and second == [first[0], "False"]


def test_the_cached_table_equals_the_parsed_one(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path))
    text = known_issues.SOURCE.read_text(encoding="utf-8")
    parsed = known_issues.parse_known_issues(text, "opdb/sources/known_issues.yaml")
    assert known_issues.cached_table(text, "opdb/sources/known_issues.yaml") == parsed  # writes
    assert len(list(tmp_path.glob("known-issues-*.json"))) == 1
    assert known_issues.cached_table(text, "opdb/sources/known_issues.yaml") == parsed  # reads


def test_an_edited_table_or_a_broken_entry_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path))
    text = known_issues.SOURCE.read_text(encoding="utf-8")
    known_issues.cached_table(text, "k.yaml")
    edited = text.replace("framework_releases:", "framework_releases:\n  paddle9:\n    '9.9': '2099-01-01'", 1)
    assert edited != text
    table = known_issues.cached_table(edited, "k.yaml")
    assert table.release_date("paddle9", "9.9") == "2099-01-01"
    assert len(list(tmp_path.glob("known-issues-*.json"))) == 2
    for entry in tmp_path.glob("known-issues-*.json"):
        entry.write_text("{not json")
    assert known_issues.cached_table(text, "k.yaml") == known_issues.parse_known_issues(text, "k.yaml")
