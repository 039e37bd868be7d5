"""The snapshot's content hash is remembered under its files' stat (opdb.store.
snapshot_digest): a process that opens opdb does not re-read 23 MB, yet any change to
the snapshot is hashed again, and files written just now are never trusted by stat."""
from __future__ import annotations

import os
import time

import pytest

from opdb import snapshot, store


@pytest.fixture()
def snap(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    d = tmp_path / "snap"
    d.mkdir()
    (d / "adapters.jsonl").write_text('{"op": "a"}\n')
    (d / "manifest.json").write_text("{}\n")
    return d


def _age(d, seconds: float = 60.0) -> None:
    then = time.time() - seconds
    for p in d.iterdir():
        os.utime(p, (then, then))


def _hashes(monkeypatch) -> list:
    seen: list = []
    real = snapshot.snapshot_hash

    def counting(snapshot_dir=snapshot.SNAPSHOT_DIR):
        seen.append(snapshot_dir)
        return real(snapshot_dir)

    monkeypatch.setattr(snapshot, "snapshot_hash", counting)
    return seen


def test_digest_is_hashed_once_then_read_by_stat(snap, monkeypatch):
    _age(snap)
    hashed = _hashes(monkeypatch)
    first = store.snapshot_digest(snap)
    assert first == snapshot.snapshot_hash(snap) and len(hashed) == 2
    assert store.snapshot_digest(snap) == first and len(hashed) == 2  # from the record


def test_any_change_is_hashed_again(snap, monkeypatch):
    _age(snap)
    first = store.snapshot_digest(snap)
    (snap / "adapters.jsonl").write_text('{"op": "b"}\n')  # same size, new content
    _age(snap, 30.0)
    assert store.snapshot_digest(snap) == snapshot.snapshot_hash(snap) != first
    (snap / "known_failures.jsonl").write_text("")  # a table added
    _age(snap)
    assert store.snapshot_digest(snap) == snapshot.snapshot_hash(snap)


def test_files_written_just_now_are_not_trusted_by_stat(snap, monkeypatch):
    hashed = _hashes(monkeypatch)
    store.snapshot_digest(snap)
    store.snapshot_digest(snap)  # within the timestamp granularity: hashed again
    assert len(hashed) == 2


def test_an_unreadable_record_costs_only_the_hash(snap, tmp_path):
    _age(snap)
    record = tmp_path / "cache" / "opdb-snapshot-digest.json"
    record.parent.mkdir(parents=True)
    record.write_text("{not json")
    assert store.snapshot_digest(snap) == snapshot.snapshot_hash(snap)
    record.write_text('{"dir": 1, "stat": [], "sha256": "x"}')
    assert store.snapshot_digest(snap) == snapshot.snapshot_hash(snap)
