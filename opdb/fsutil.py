"""Atomic file writes and the user's cache/data directories."""
from __future__ import annotations

import os
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp sibling and os.replace (opdb.fsio)."""
    from opdb.fsio import atomic_write_bytes as write

    write(path, data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def cache_dir() -> Path:
    """$OPSCAN_CACHE, else $XDG_CACHE_HOME/opscan, else ~/.cache/opscan."""
    base = os.environ.get("OPSCAN_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(xdg) / "opscan"


def data_dir() -> Path:
    """$OPSCAN_HOME, else $XDG_DATA_HOME/opscan, else ~/.local/share/opscan (the overlay lives here)."""
    base = os.environ.get("OPSCAN_HOME")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(xdg) / "opscan"
