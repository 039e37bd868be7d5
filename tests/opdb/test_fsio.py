"""opdb.fsio: the output discipline every command shares (issue 8)."""
from __future__ import annotations

import json
import os
import stat

import pytest

from opdb import fsio
from opdb.errors import OutputExists


@pytest.fixture()
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_write_files_refuses_existing_without_force_and_writes_nothing(tmp_path):
    (tmp_path / "b.txt").write_text("old")
    with pytest.raises(OutputExists, match="b.txt already exists"):
        fsio.write_files(tmp_path, {"a.txt": b"new", "b.txt": b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]
    fsio.write_files(tmp_path, {"a.txt": b"new", "b.txt": b"new"}, force=True)
    assert (tmp_path / "b.txt").read_bytes() == b"new"


def test_write_files_uses_the_umask(tmp_path, umask_022):
    fsio.write_files(tmp_path / "d", {"a.txt": b"x"})
    assert stat.S_IMODE((tmp_path / "d" / "a.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o755


def test_write_files_failure_leaves_old_files_and_no_temps(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("old")
    real = fsio._tmp_open

    def fail_second(dest, data):
        if dest.name == "b.txt":
            raise OSError(28, "No space left on device")
        return real(dest, data)

    monkeypatch.setattr(fsio, "_tmp_open", fail_second)
    with pytest.raises(OSError):
        fsio.write_files(tmp_path, {"a.txt": b"new", "b.txt": b"new"}, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old"


def test_paths_cannot_escape(tmp_path):
    with pytest.raises(fsio.OutputError):
        fsio.write_files(tmp_path / "o", {"../x": b""})
    with pytest.raises(fsio.OutputError):
        fsio.write_tree({"/etc/x": ""}, tmp_path / "t")
    assert not (tmp_path / "x").exists()


def test_check_out_dir(tmp_path):
    assert fsio.check_out_dir("rel/dir").is_absolute()
    (tmp_path / "f").write_text("")
    with pytest.raises(fsio.OutputError, match="is a file"):
        fsio.check_out_dir(tmp_path / "f")
    with pytest.raises(fsio.OutputError, match="has a file in the way"):
        fsio.check_out_dir(tmp_path / "f" / "sub")
    with pytest.raises(fsio.OutputError, match="too long"):
        fsio.check_out_dir(tmp_path / ("n" * 300))
    with pytest.raises(fsio.OutputError, match="not writable"):
        fsio.check_out_dir("/proc/opscan-test")


def test_tree_marker_force_and_user_files(tmp_path, umask_022):
    out = tmp_path / "t"
    fsio.write_tree({"a/x.cc": "1", "README.md": "r"}, out, tool="opgen", scratch=("build",))
    marker = json.loads((out / fsio.TREE_MARKER).read_text())
    assert marker == {"tool": "opgen", "files": ["README.md", "a/x.cc"], "scratch": ["build"]}
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    with pytest.raises(OutputExists, match="pass --force"):
        fsio.write_tree({"a/x.cc": "2"}, out)
    (out / "notes.md").write_text("mine")
    (out / "build").mkdir()
    (out / "build" / "obj.o").write_text("stale")
    fsio.write_tree({"a/x.cc": "2"}, out, force=True, scratch=("build",))
    assert (out / "a" / "x.cc").read_text() == "2"
    assert not (out / "README.md").exists()          # ours, not generated again
    assert (out / "notes.md").read_text() == "mine"  # the user's, kept
    assert not (out / "build").exists()              # scratch, dropped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # no temp or old dirs left


def test_tree_force_refuses_a_clash_with_a_user_file(tmp_path):
    out = tmp_path / "t"
    fsio.write_tree({"a.cc": "1"}, out)
    (out / "b.cc").write_text("mine")
    with pytest.raises(OutputExists, match="b.cc was not written by opgen"):
        fsio.write_tree({"a.cc": "2", "b.cc": "gen"}, out, force=True)
    assert (out / "b.cc").read_text() == "mine" and (out / "a.cc").read_text() == "1"


def test_tree_force_never_replaces_a_directory_it_did_not_write(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(OutputExists, match="was not written by opgen"):
        fsio.write_tree({"a.cc": "1"}, tmp_path, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_tree_into_an_empty_existing_dir(tmp_path):
    (tmp_path / "e").mkdir()
    fsio.write_tree({"a.cc": "1"}, tmp_path / "e")
    assert (tmp_path / "e" / "a.cc").read_text() == "1"


def test_failed_swap_restores_the_old_tree_and_user_files(tmp_path, monkeypatch):
    out = tmp_path / "t"
    fsio.write_tree({"a.cc": "1"}, out)
    (out / "mine.txt").write_text("mine")
    real = os.replace
    failed = []

    def fail_on_swap(a, b):  # the new tree cannot be moved into place (once)
        if os.fspath(b) == os.fspath(out) and ".tmp" in os.fspath(a) and not failed:
            failed.append(a)
            raise OSError(13, "Permission denied")
        return real(a, b)

    monkeypatch.setattr(fsio.os, "replace", fail_on_swap)
    with pytest.raises(OSError):
        fsio.write_tree({"a.cc": "2"}, out, force=True)
    monkeypatch.undo()
    assert (out / "a.cc").read_text() == "1" and (out / "mine.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_write_files_syncs_every_file_at_once(tmp_path, monkeypatch):
    """The set's fsyncs overlap (fsio.sync_all): each waits here until all three have
    started, which one-after-another fsyncs never reach (the barrier times out)."""
    import threading

    barrier = threading.Barrier(3, timeout=10)
    real = os.fsync
    synced = []

    def fsync(fd):
        barrier.wait()
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    fsio.write_files(tmp_path, {"a": b"1", "b": b"2", "c": b"3"})
    assert len(synced) == 3
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a": b"1", "b": b"2", "c": b"3"}


def test_write_files_failed_sync_writes_nothing(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"old")
    real = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output"):
        fsio.write_files(tmp_path, {"a": b"new", "b": b"new", "c": b"new"}, force=True)
    assert len(calls) == 3  # every fsync returned before the error was raised
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a": b"old"}


def test_sync_all_bounds_its_threads(tmp_path, monkeypatch):
    """More files than SYNC_THREADS: every one synced, never more in flight at once."""
    import threading

    real = os.fsync
    lock = threading.Lock()
    state = {"now": 0, "most": 0, "done": 0}

    def fsync(fd):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        real(fd)
        with lock:
            state["now"] -= 1
            state["done"] += 1

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(fsio, "SYNC_THREADS", 3)
    fsio.write_files(tmp_path, {f"f{i}": b"x" for i in range(10)})
    assert state["done"] == 10 and state["most"] <= 3
    assert len(list(tmp_path.iterdir())) == 10


def test_write_files_syncs_ready_bytes_while_the_rest_renders(tmp_path, monkeypatch):
    """Bytes given as such are written and their fsync started before any function renders
    its file (the report's GraphML flushes while md/html/xlsx render): the renderer below
    waits for that fsync to begin, which a write-everything-then-sync order never does."""
    import threading

    began = threading.Event()
    real = os.fsync

    def fsync(fd):
        began.set()
        real(fd)

    def render():
        assert began.wait(10), "no fsync began before the next file was rendered"
        return b"late"

    monkeypatch.setattr(os, "fsync", fsync)
    paths = fsio.write_files(tmp_path, {"late": render, "ready": b"ready"})
    assert [p.name for p in paths] == ["late", "ready"]  # the given order, not the write order
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"late": b"late", "ready": b"ready"}


def test_write_files_failed_render_writes_nothing(tmp_path, monkeypatch):
    """A renderer that raises: the old files stay, no temp is left, and the error is the
    renderer's even when a started fsync failed too."""
    (tmp_path / "a").write_bytes(b"old")
    real = os.fsync
    synced = []

    def fsync(fd):
        synced.append(fd)
        real(fd)
        raise OSError(5, "Input/output error")

    def broken():
        raise ValueError("cannot render")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(ValueError, match="cannot render"):
        fsio.write_files(tmp_path, {"a": b"new", "b": broken}, force=True)
    assert len(synced) == 1  # the ready file's fsync returned before the error surfaced
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a": b"old"}
