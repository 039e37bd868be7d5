"""SQLite storage: the schema, loading records into it, the snapshot cache and the overlay.

The shipped snapshot (JSONL) is compiled into `<cache>/opdb-<hash16>.sqlite` on first
use, keyed by the snapshot's content hash, so a changed snapshot never reads a stale
database. A user's syncs go into a separate overlay database (`<data>/overlay.sqlite`)
with the same schema; the snapshot is never modified.

Every table has flat columns for querying (`opdb sql`) and a `row` column holding the
record's full JSON (lossless, decoded back into opdb.model dataclasses).
"""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from opdb import snapshot
from opdb.errors import OpscanError
from opdb.fsutil import cache_dir, data_dir
from opdb.model import IngestResult, to_row

SCHEMA = """
CREATE TABLE IF NOT EXISTS aclnn_apis(
  name TEXT PRIMARY KEY, category TEXT, op_dir TEXT, nparams INTEGER,
  deprecated INTEGER, experimental INTEGER, internal INTEGER,
  products TEXT, signature TEXT, source TEXT, version TEXT, path TEXT, row TEXT);
CREATE TABLE IF NOT EXISTS aclnn_params(
  api TEXT, pos INTEGER, name TEXT, ctype TEXT, role TEXT, dtypes TEXT,
  PRIMARY KEY(api, pos));
CREATE TABLE IF NOT EXISTS framework_ops(
  framework TEXT, name TEXT, kind TEXT, schema TEXT, function TEXT,
  composite_implicit INTEGER, has_decomposition INTEGER,
  source TEXT, version TEXT, path TEXT, row TEXT, PRIMARY KEY(framework, name));
CREATE TABLE IF NOT EXISTS op_aliases(framework TEXT, alias TEXT, name TEXT);
CREATE TABLE IF NOT EXISTS adapters(
  framework TEXT, provider TEXT, version TEXT, op TEXT, target TEXT,
  dtypes TEXT, aclnn TEXT, legacy_ops TEXT, function TEXT,
  source TEXT, source_version TEXT, path TEXT, line INTEGER, date TEXT, row TEXT,
  PRIMARY KEY(framework, provider, version, op));
CREATE TABLE IF NOT EXISTS op_aclnn_map(
  framework TEXT, op TEXT, aclnn TEXT, evidence TEXT, confidence REAL, detail TEXT,
  source TEXT, version TEXT, path TEXT, row TEXT);
CREATE TABLE IF NOT EXISTS known_failures(
  framework TEXT, op TEXT, test TEXT, dtypes TEXT, source TEXT, version TEXT, row TEXT);
CREATE TABLE IF NOT EXISTS provenance(
  source TEXT, kind TEXT, version TEXT, path TEXT, sha256 TEXT, date TEXT,
  description TEXT, rows INTEGER, row TEXT);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE INDEX IF NOT EXISTS ix_adapters_op ON adapters(framework, op);
CREATE INDEX IF NOT EXISTS ix_map_op ON op_aclnn_map(framework, op);
CREATE INDEX IF NOT EXISTS ix_map_aclnn ON op_aclnn_map(aclnn);
CREATE INDEX IF NOT EXISTS ix_alias ON op_aliases(framework, alias);
CREATE INDEX IF NOT EXISTS ix_kf_op ON known_failures(framework, op);
"""
TABLE_NAMES = ("aclnn_apis", "aclnn_params", "framework_ops", "op_aliases", "adapters",
               "op_aclnn_map", "known_failures", "provenance")


def _j(value) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def insert_result(con: sqlite3.Connection, result: IngestResult) -> None:
    """Insert every record of `result` (replacing rows with the same key)."""
    cur = con.cursor()
    for a in result.apis:
        s = a.source
        cur.execute("INSERT OR REPLACE INTO aclnn_apis VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (a.name, a.category, a.op_dir, len(a.params), int(a.deprecated),
                     int(a.experimental), int(a.internal), _j(a.products),
                     a.workspace_signature(), s.source, s.version, s.path, _j(to_row(a))))
        cur.execute("DELETE FROM aclnn_params WHERE api=?", (a.name,))
        cur.executemany("INSERT INTO aclnn_params VALUES (?,?,?,?,?,?)",
                        [(a.name, i, p.name, p.ctype, p.role, ",".join(p.dtypes))
                         for i, p in enumerate(a.params)])
    for op in result.framework_ops:
        s = op.source
        cur.execute("INSERT OR REPLACE INTO framework_ops VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (op.framework, op.name, op.kind, op.schema, op.function,
                     int(op.composite_implicit), int(op.has_decomposition),
                     s.source, s.version, s.path, _j(to_row(op))))
        cur.execute("DELETE FROM op_aliases WHERE framework=? AND name=?", (op.framework, op.name))
        cur.executemany("INSERT INTO op_aliases VALUES (?,?,?)",
                        [(op.framework, alias, op.name) for alias in sorted(set(op.aliases))])
    for ad in result.adapters:
        s = ad.source
        cur.execute("INSERT OR REPLACE INTO adapters VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (ad.framework, ad.provider, ad.version, ad.op, ad.target,
                     None if ad.dtypes is None else ",".join(ad.dtypes),
                     ",".join(ad.aclnn), ",".join(ad.legacy_ops), ad.function,
                     s.source, s.version, s.path, s.line, s.date, _j(to_row(ad))))
    for m in result.mappings:
        s = m.source
        cur.execute("INSERT INTO op_aclnn_map VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (m.framework, m.op, m.aclnn, m.evidence, m.confidence, m.detail,
                     s.source, s.version, s.path, _j(to_row(m))))
    for k in result.known_failures:
        s = k.source
        cur.execute("INSERT INTO known_failures VALUES (?,?,?,?,?,?,?)",
                    (k.framework, k.op, k.test, ",".join(k.dtypes), s.source, s.version,
                     _j(to_row(k))))
    for p in result.provenance:
        cur.execute("INSERT INTO provenance VALUES (?,?,?,?,?,?,?,?,?)",
                    (p.source, p.kind, p.version, p.path, p.sha256, p.date, p.description,
                     p.rows, _j(to_row(p))))


def create(path: Path, result: IngestResult, meta: dict[str, str]) -> None:
    """Build a database file atomically from `result`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if tmp.exists():
        tmp.unlink()
    con = sqlite3.connect(tmp)
    try:
        con.executescript(SCHEMA)
        insert_result(con, result)
        con.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", sorted(meta.items()))
        con.commit()
    finally:
        con.close()
    os.replace(tmp, path)


def _cache_ok(path: Path, digest: str) -> bool:
    """True when `path` is a readable SQLite build of the snapshot with hash `digest`."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key='snapshot_sha256'").fetchone()
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False
    return row is not None and row[0] == digest and set(TABLE_NAMES) <= tables


# Snapshot files modified this close to when their digest is recorded are hashed again
# next time: a file rewritten within the file system's timestamp granularity (a few ms)
# keeps its mtime, as git's index handles "racily clean" entries.
RACY_SECONDS = 2.0


def _snapshot_stat(snapshot_dir: Path) -> list:
    """(name, size, mtime_ns, inode) of every file the snapshot hash reads."""
    files = sorted(snapshot_dir.glob("*.jsonl")) + [snapshot_dir / "manifest.json"]
    return [[p.name, st.st_size, st.st_mtime_ns, st.st_ino] for p in files
            for st in (p.stat(),)]


def snapshot_digest(snapshot_dir: Path = snapshot.SNAPSHOT_DIR) -> str:
    """`snapshot.snapshot_hash`, remembered in the cache directory next to the compiled
    database under the files' sizes, modification times and inodes: hashing the ~23 MB
    snapshot cost ~0.025 s of every process that opens opdb. Any change to a file (or a
    file added or removed) hashes it again; so does anything unreadable about the record."""
    import time

    record = cache_dir() / "opdb-snapshot-digest.json"
    try:
        stat = _snapshot_stat(snapshot_dir)
        known = json.loads(record.read_text(encoding="utf-8"))
        if known.get("dir") == str(snapshot_dir.resolve()) and known.get("stat") == stat:
            return str(known["sha256"])
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        pass
    digest = snapshot.snapshot_hash(snapshot_dir)
    try:
        stat = _snapshot_stat(snapshot_dir)
        if max(s[2] for s in stat) < (time.time() - RACY_SECONDS) * 1e9:
            from opdb.fsutil import atomic_write_text

            record.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(record, json.dumps({"dir": str(snapshot_dir.resolve()),
                                                  "stat": stat, "sha256": digest}))
    except OSError:
        pass  # a cache that cannot be written costs the hash next time, nothing else
    return digest


def snapshot_db_path(snapshot_dir: Path = snapshot.SNAPSHOT_DIR) -> Path:
    """The cached SQLite build of the snapshot, (re)built when missing or corrupt (the
    cache holds nothing that cannot be rebuilt from the snapshot)."""
    digest = snapshot_digest(snapshot_dir)
    path = cache_dir() / f"opdb-{digest[:16]}.sqlite"
    if not path.exists() or not _cache_ok(path, digest):
        if path.is_dir():
            raise OpscanError(f"{path} is a directory, not the opdb cache file",
                              hint="remove it, or point OPSCAN_CACHE elsewhere")
        create(path, snapshot.read_snapshot(snapshot_dir),
               {"snapshot_sha256": digest, "origin": "snapshot"})
    return path


def overlay_path() -> Path:
    return data_dir() / "overlay.sqlite"


class EmptySync(OpscanError):
    """A sync read its input but found nothing to record."""


def overlay_error(path: Path, exc: Exception) -> OpscanError:
    """The one-line error for an unreadable overlay: names the file and how to reset it."""
    return OpscanError(f"overlay database {path} is unreadable ({exc})",
                       hint=f"reset it with `rm {path}` and re-run your `opdb sync` commands")


def fact_rows(result: IngestResult) -> int:
    """Rows a sync would add, provenance aside (provenance alone records nothing)."""
    return (len(result.apis) + len(result.framework_ops) + len(result.adapters)
            + len(result.mappings) + len(result.known_failures))


def write_overlay(result: IngestResult, replace_sources: set[tuple[str, str]],
                  path: Path | None = None, what: str = "the input") -> Path:
    """Add `result` to the user's overlay, first deleting rows of the same
    (source, version) pairs so a re-sync replaces rather than duplicates.

    A result without facts is refused (EmptySync) before the overlay is opened, and the
    delete and insert run in one transaction: a failed or empty sync never removes rows an
    earlier sync wrote."""
    path = path or overlay_path()
    if fact_rows(result) == 0:
        raise EmptySync(f"{what} gave 0 rows; nothing was written (earlier synced rows are kept)",
                        hint="point the sync at a real install or checkout")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        _write_overlay(result, replace_sources, path)
    except sqlite3.DatabaseError as exc:
        raise overlay_error(path, exc) from None
    return path


def _columns() -> dict[str, list[str]]:
    """Each table's column names as SCHEMA creates them."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(SCHEMA)
        return {t: [r[1] for r in mem.execute(f"PRAGMA table_info({t})")] for t in TABLE_NAMES}
    finally:
        mem.close()


def _layout_problem(con: sqlite3.Connection, schema: str = "main") -> str:
    """Why the tables of `schema` are not SCHEMA's ("" when they are, or are absent): an
    overlay another opscan wrote, or any SQLite file with tables of these names."""
    for table, want in _columns().items():
        got = [r[1] for r in con.execute(f"PRAGMA {schema}.table_info({table})")]
        if got and got != want:
            return f"table {table} has other columns than this opscan's ({', '.join(got[:4])}...)"
    return ""


def _write_overlay(result: IngestResult, replace_sources: set[tuple[str, str]], path: Path) -> None:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")  # the tables too: a refused sync leaves the file as it was
        for statement in SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        problem = _layout_problem(con)
        if problem:
            raise sqlite3.DatabaseError(problem)
        for source, version in sorted(replace_sources):
            for table, vcol in (("aclnn_apis", "version"), ("framework_ops", "version"),
                                ("adapters", "source_version"), ("op_aclnn_map", "version"),
                                ("known_failures", "version"), ("provenance", "version")):
                con.execute(f"DELETE FROM {table} WHERE source=? AND {vcol}=?", (source, version))
        for m in result.mappings:  # shared-source mappings: the newest row of a key wins
            s = m.source
            con.execute("DELETE FROM op_aclnn_map WHERE framework=? AND op=? AND aclnn=? AND "
                        "evidence=? AND source=? AND version=?",
                        (m.framework, m.op, m.aclnn, m.evidence, s.source, s.version))
        for provider, version in sorted({(a.provider, a.version) for a in result.adapters}):
            # a re-synced release (a branch at a newer commit) replaces all its adapters
            con.execute("DELETE FROM adapters WHERE provider=? AND version=?", (provider, version))
        for pr in result.provenance:
            con.execute("DELETE FROM provenance WHERE source=? AND version=? AND path=?",
                        (pr.source, pr.version, pr.path))
        insert_result(con, result)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('origin', 'overlay')")
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    finally:
        con.close()


def read_overlay(path: Path) -> IngestResult:
    """The records of an overlay database, decoded from each row's JSON."""
    from opdb.model import TABLES, from_row

    result = IngestResult()
    attrs = {"aclnn_apis": "apis", "framework_ops": "framework_ops", "adapters": "adapters",
             "op_aclnn_map": "mappings", "known_failures": "known_failures",
             "provenance": "provenance"}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for table, attr in attrs.items():
            try:
                rows = con.execute(f"SELECT row FROM {table}").fetchall()
            except sqlite3.OperationalError:
                continue
            getattr(result, attr).extend(from_row(TABLES[table], json.loads(r[0])) for r in rows)
    finally:
        con.close()
    return result


def connect(snapshot_db: Path, overlay: Path | None) -> sqlite3.Connection:
    """A read-only connection where each table name is a view over snapshot and
    overlay rows, with an `origin` column ('snapshot' or 'overlay')."""
    con = sqlite3.connect(f"file:{snapshot_db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    has_overlay = overlay is not None and overlay.exists()
    if has_overlay:
        try:
            con.execute("ATTACH DATABASE ? AS ov", (f"file:{overlay}?mode=ro",))
            have = {r[0] for r in con.execute("SELECT name FROM ov.sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise overlay_error(overlay, exc) from None
        if not have:  # an empty database file (0 bytes): no overlay rows yet
            con.execute("DETACH DATABASE ov")
            has_overlay = False
        elif not set(TABLE_NAMES) <= have:
            raise overlay_error(overlay, "missing tables: " + ", ".join(sorted(set(TABLE_NAMES) - have)))
        elif _layout_problem(con, "ov"):  # another layout would break the views below
            raise overlay_error(overlay, _layout_problem(con, "ov"))
    for table in TABLE_NAMES:
        sql = f"SELECT *, 'snapshot' AS origin FROM main.{table}"
        if has_overlay:
            sql += f" UNION ALL SELECT *, 'overlay' AS origin FROM ov.{table}"
        con.execute(f"CREATE TEMP VIEW {table} AS {sql}")
    con.execute("PRAGMA query_only = ON")
    return con
