"""The zoo's result cache: one JSON file per (model source hash, scan options, opdb state,
opscan version), so an interrupted or repeated zoo run rescans only what changed.

Files live under `$OPSCAN_CACHE/zoo/` (default `~/.cache/opscan/zoo/`) or `--cache DIR`,
and are written atomically: a killed run leaves finished results and no partial file.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from opdb.fsio import atomic_write_bytes
from opdb.fsutil import cache_dir

CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    return cache_dir() / "zoo"


def opdb_state() -> str:
    """The snapshot hash plus the overlay's bytes (a sync changes answers)."""
    from opdb import snapshot
    from opdb.store import overlay_path

    h = hashlib.sha256(snapshot.snapshot_hash().encode())
    ov = overlay_path()
    if ov.is_file():
        h.update(ov.read_bytes())
    return h.hexdigest()


def task_key(source_hash: str, options: dict, opdb_hash: str, tool: str) -> str:
    blob = json.dumps({"format": CACHE_FORMAT, "source": source_hash, "options": options,
                       "opdb": opdb_hash, "tool": tool}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResultCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        p = self.path(key)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable or torn: rescan and overwrite
        return data if isinstance(data, dict) and "status" in data else None

    def put(self, key: str, result: dict) -> None:
        atomic_write_bytes(self.path(key), json.dumps(result, sort_keys=True).encode("utf-8"))
