"""opdb under bad input (issue 8): one line and a non-zero exit, nothing half-written or lost.

Each test names the "Why" bullet of issue 8 it reproduces; all failed before the fix."""
from __future__ import annotations

import os
import sqlite3
import time

import pytest

from opdb import cli, snapshot, store
from opdb.errors import OpscanError
from opdb.model import AclnnApi, IngestResult, Param, Source
from tests.opdb.test_store_query import db, sample  # noqa: F401  (fixture)


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(err: str) -> None:
    assert err.count("\n") == 1 and err.startswith("opdb: error: "), err
    assert "Traceback" not in err


def _api(name, version="8.3.RC1"):
    return AclnnApi(name, (Param("self", "const aclTensor*"),),
                    Source("cann-install", version, f"include/aclnnop/{name}.h", 1))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One SQLite build of the shipped snapshot for the module (building it takes seconds)."""
    cache = tmp_path_factory.mktemp("cache")
    old = os.environ.get("OPSCAN_CACHE")
    os.environ["OPSCAN_CACHE"] = str(cache)
    try:
        store.snapshot_db_path()
    finally:
        os.environ.pop("OPSCAN_CACHE") if old is None else os.environ.__setitem__("OPSCAN_CACHE", old)
    return cache


@pytest.fixture()
def env(tmp_path, monkeypatch, shared_cache):
    import shutil
    shutil.copytree(shared_cache, tmp_path / "cache")
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPSCAN_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- opdb sql: ATTACH / VACUUM INTO left a 0-byte file; an empty query exited 0
@pytest.mark.parametrize("query", ["ATTACH DATABASE 'x.db' AS x", "VACUUM INTO 'x.db'",
                                   "PRAGMA writable_schema = 1", "DELETE FROM adapters"])
def test_sql_cannot_write_files(env, capsys, query):
    code, _, err = _run(capsys, "sql", query)
    assert code == 1
    _one_line_error(err)
    assert not (env / "x.db").exists()


@pytest.mark.parametrize("query", ["", "   ", ";"])
def test_sql_empty_query_is_an_error(env, capsys, query):
    code, _, err = _run(capsys, "sql", query)
    assert code == 1 and "empty SQL query" in err


def test_sql_still_reads(env, capsys):
    code, out, _ = _run(capsys, "sql", "WITH x(n) AS (SELECT 1) SELECT n FROM x")
    assert code == 0 and out.splitlines()[-1] == "1"


# -- unknown option values ended in tracebacks (--soc) or misbehaved (--limit 0/-5)
@pytest.mark.parametrize("argv", [["show", "adam", "--soc", "ascend999"],
                                  ["search", "adam", "--limit", "0"],
                                  ["search", "adam", "--limit", "-5"]])
def test_bad_option_values_are_usage_errors(env, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"argument {argv[2]}" in err


def test_unknown_soc_from_the_library_is_one_line(db):  # noqa: F811
    from opdb.show import describe
    with pytest.raises(OpscanError, match="unknown SoC 'x' for --soc"):
        describe(db, "aclnnAdd", soc="x")


# -- a 3,000-character name took ~22 s in show/search (quadratic fuzzy matching)
def test_long_names_are_cheap(env):
    from opdb.query import OpDB

    shipped = OpDB.open()  # the real snapshot: ~8,000 names to compare against
    name = "x" * 3000
    t0 = time.perf_counter()
    assert shipped.search(name) == [] and shipped.resolve_aclnn(name) == []
    assert shipped.close_aclnn_names(name) == []
    assert time.perf_counter() - t0 < 2.0  # generous: 7-14 s before, milliseconds now


# -- corrupt or empty cache/overlay SQLite broke every command
def test_corrupt_cache_is_rebuilt(env, capsys):
    assert _run(capsys, "stats")[0] == 0
    caches = list((env / "cache").glob("opdb-*.sqlite"))
    assert caches
    for c in caches:
        c.write_bytes(os.urandom(4096))
    code, out, err = _run(capsys, "stats")
    assert code == 0 and "aclnn APIs" in out and err == ""


def test_truncated_cache_is_rebuilt(env, capsys):
    assert _run(capsys, "stats")[0] == 0
    for c in (env / "cache").glob("opdb-*.sqlite"):
        c.write_bytes(b"")
    assert _run(capsys, "stats")[0] == 0


@pytest.mark.parametrize("content", [b"garbage", os.urandom(8192)], ids=["text", "random"])
def test_corrupt_overlay_names_file_and_reset(env, capsys, content):
    (env / "home").mkdir()
    ov = env / "home" / "overlay.sqlite"
    ov.write_bytes(content)
    for argv in (["stats"], ["show", "adam"], ["sql", "SELECT 1"]):
        code, _, err = _run(capsys, *argv)
        assert code == 1
        _one_line_error(err)
        assert str(ov) in err and f"rm {ov}" in err


def test_empty_overlay_file_is_no_overlay(env, capsys):
    (env / "home").mkdir()
    (env / "home" / "overlay.sqlite").write_bytes(b"")
    assert _run(capsys, "stats")[0] == 0


# -- garbage input to opdb sync: accepted with 0 rows and exit 0, wiping an earlier sync
def test_empty_sync_is_an_error_and_keeps_earlier_rows(tmp_path):
    ov = tmp_path / "overlay.sqlite"
    store.write_overlay(IngestResult(apis=[_api("aclnnFoo")]), {("cann-install", "8.3.RC1")}, ov)
    with pytest.raises(store.EmptySync, match="0 rows; nothing was written"):
        store.write_overlay(IngestResult(), {("cann-install", "8.3.RC1")}, ov)
    con = sqlite3.connect(ov)
    assert con.execute("SELECT name FROM aclnn_apis").fetchall() == [("aclnnFoo",)]


def test_failed_sync_rolls_back_and_keeps_earlier_rows(tmp_path, monkeypatch):
    ov = tmp_path / "overlay.sqlite"
    store.write_overlay(IngestResult(apis=[_api("aclnnFoo")]), {("cann-install", "8.3.RC1")}, ov)

    def boom(con, result):
        raise KeyboardInterrupt  # Ctrl-C in the middle of the insert

    monkeypatch.setattr(store, "insert_result", boom)
    with pytest.raises(KeyboardInterrupt):
        store.write_overlay(IngestResult(apis=[_api("aclnnBar")]), {("cann-install", "8.3.RC1")}, ov)
    con = sqlite3.connect(ov)
    assert con.execute("SELECT name FROM aclnn_apis").fetchall() == [("aclnnFoo",)]


def test_sync_of_garbage_headers_is_an_error(env, capsys):
    inc = env / "cann" / "include" / "aclnnop"
    inc.mkdir(parents=True)
    (inc / "aclnn_x.h").write_bytes(os.urandom(3000))
    (inc / "aclnn_y.h").write_text("int x;\n")
    code, _, err = _run(capsys, "sync", "cann", "--home", str(env / "cann"))
    assert code == 1
    _one_line_error(err)
    assert "0 rows" in err and not (env / "home" / "overlay.sqlite").exists()


# -- opdb build overwrote an existing --out without --force, and left 1 of 7 files on interrupt
def test_build_refuses_an_existing_out_without_force(tmp_path):
    out = tmp_path / "snap"
    snapshot.write_snapshot(sample(), out)
    with pytest.raises(OpscanError, match="already exists.*--force"):
        snapshot.check_out_dir(out)
    assert snapshot.check_out_dir(out, force=True) == out
    assert snapshot.check_out_dir(None) == snapshot.SNAPSHOT_DIR
    (tmp_path / "file").write_text("x")
    with pytest.raises(OpscanError, match="-o/--output .*is a file"):
        snapshot.check_out_dir(tmp_path / "file")


def test_build_cli_refuses_before_ingesting(env, capsys, monkeypatch):
    out = env / "snap"
    snapshot.write_snapshot(sample(), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    import opdb.build
    monkeypatch.setattr(opdb.build, "ingest_all", lambda *a, **k: pytest.fail("ingested"))
    code, _, err = _run(capsys, "build", "--out", str(out))
    assert code == 1 and "--force" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_interrupted_snapshot_write_leaves_the_old_snapshot(tmp_path, monkeypatch):
    out = tmp_path / "snap"
    snapshot.write_snapshot(sample(), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    from opdb import fsio
    real = fsio._tmp_open
    calls = []

    def interrupted(dest, data):
        calls.append(dest)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(dest, data)

    monkeypatch.setattr(fsio, "_tmp_open", interrupted)
    r = sample()
    r.apis = r.apis[:1]
    with pytest.raises(KeyboardInterrupt):
        snapshot.write_snapshot(r, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no .tmp left either


def test_paddle_live_plugin_that_fails_to_load_is_one_line(monkeypatch):
    import sys
    import types

    from opdb.ingest import paddle_live
    broken = types.ModuleType("paddle")
    broken.device = types.SimpleNamespace(
        get_all_custom_device_type=lambda: (_ for _ in ()).throw(RuntimeError("libascendcl.so: cannot open")))
    monkeypatch.setitem(sys.modules, "paddle", broken)
    with pytest.raises(OpscanError, match="could not list its custom devices.*libascendcl") as exc:
        paddle_live.read_live_registry()
    assert "CUSTOM_DEVICE_ROOT" in str(exc.value)
