"""The shipped snapshot: reviewable, deterministic JSONL tables under `opdb/snapshot/`.

One file per table (`aclnn_apis.jsonl`, `framework_ops.jsonl`, `adapters.jsonl`,
`op_aclnn_map.jsonl`, `known_failures.jsonl`, `provenance.jsonl`), one record per
line in `opdb.model.to_row` form, sorted by the record's key, plus `manifest.json`
(schema version, row counts, sha256 per table). Same records in, same bytes out.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from opdb import fsio
from opdb.errors import OpscanError, ParseError
from opdb.model import TABLES, IngestResult, from_row, to_row

SCHEMA_VERSION = 1
SNAPSHOT_DIR = Path(__file__).resolve().parent / "snapshot"
_RESULT_FIELDS = {
    "aclnn_apis": "apis",
    "framework_ops": "framework_ops",
    "adapters": "adapters",
    "op_aclnn_map": "mappings",
    "known_failures": "known_failures",
    "provenance": "provenance",
}


def dumps_record(record) -> str:
    return json.dumps(to_row(record), ensure_ascii=False, sort_keys=False)


def table_text(records) -> str:
    """The exact text of one table file: records sorted by key, deduplicated."""
    lines = {}
    for r in records:
        lines.setdefault(r.key(), dumps_record(r))
    return "".join(lines[k] + "\n" for k in sorted(lines, key=_sort_key))


def _sort_key(key: tuple) -> tuple:
    return tuple("" if v is None else str(v) for v in key)


def file_names() -> list[str]:
    return [f"{t}.jsonl" for t in _RESULT_FIELDS] + ["manifest.json"]


def check_out_dir(out_dir: Path | None, force: bool = False) -> Path:
    """The absolute snapshot directory `opdb build` may write: the shipped one is rebuilt in
    place; another directory that already holds snapshot files needs `force`."""
    if out_dir is None:
        return SNAPSHOT_DIR
    out = fsio.check_out_dir(out_dir, "-o/--output")
    # every refusal write_snapshot's write_files would make, before the build's minutes
    return fsio.check_files(out, file_names(), force or out == SNAPSHOT_DIR, "-o/--output")


def write_snapshot(result: IngestResult, out_dir: Path = SNAPSHOT_DIR) -> dict:
    """Write every table and the manifest as one set (opdb.fsio.write_files: an interrupt
    leaves the old snapshot or the new one, never a mix); returns the manifest."""
    manifest = {"schema_version": SCHEMA_VERSION, "tables": {}}
    files: dict[str, bytes] = {}
    for table, attr in _RESULT_FIELDS.items():
        text = table_text(getattr(result, attr))
        files[f"{table}.jsonl"] = text.encode("utf-8")
        manifest["tables"][table] = {
            "rows": text.count("\n"),
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
    files["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8")
    fsio.write_files(out_dir, files, force=True, option="-o/--output")
    return manifest


def read_table(path: Path, table: str):
    """Yield records of one table file, with file:line on any malformed row."""
    cls = TABLES[table]
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield from_row(cls, json.loads(line))
            except (ValueError, TypeError) as exc:
                raise ParseError(path, lineno, f"bad {table} row: {exc}",
                                 hint="regenerate the snapshot with `opdb build`") from None


def read_snapshot(snapshot_dir: Path = SNAPSHOT_DIR) -> IngestResult:
    result = IngestResult()
    for table, attr in _RESULT_FIELDS.items():
        path = snapshot_dir / f"{table}.jsonl"
        if path.exists():
            getattr(result, attr).extend(read_table(path, table))
    return result


def snapshot_hash(snapshot_dir: Path = SNAPSHOT_DIR) -> str:
    """Content hash of the snapshot (names and bytes of every table file)."""
    if not (snapshot_dir / "manifest.json").exists():
        raise OpscanError(f"no opdb snapshot in {snapshot_dir}",
                          hint="run `opdb build` to create it")
    try:  # a torn or foreign manifest would otherwise open as an empty database
        manifest = json.loads((snapshot_dir / "manifest.json").read_text(encoding="utf-8"))
        tables = manifest.get("tables", {})
        missing = [t for t in tables if not (snapshot_dir / f"{t}.jsonl").is_file()]
    except (ValueError, AttributeError, TypeError) as e:
        raise OpscanError(f"{snapshot_dir / 'manifest.json'}: not an opdb snapshot manifest "
                          f"({type(e).__name__}: {str(e)[:80]})",
                          hint=f"rebuild it with `opdb build -o {snapshot_dir} --force`") from None
    version = manifest.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:  # rows of another layout would be read as this one's
        raise OpscanError(f"{snapshot_dir / 'manifest.json'}: snapshot schema_version {version!r}; "
                          f"this opscan reads {SCHEMA_VERSION}",
                          hint=f"rebuild it with `opdb build -o {snapshot_dir} --force`, or use the "
                               f"opscan that wrote it")
    if missing:
        raise OpscanError(f"{snapshot_dir}: the snapshot lacks {missing[0]}.jsonl",
                          hint=f"rebuild it with `opdb build -o {snapshot_dir} --force`")
    h = hashlib.sha256()
    for path in sorted(snapshot_dir.glob("*.jsonl")) + [snapshot_dir / "manifest.json"]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()
