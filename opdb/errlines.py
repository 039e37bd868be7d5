"""Any exception that reaches a command's boundary, as the one line a user reads.

`one_line(exc)` returns (line, exit status) for OpscanError (its own line and status),
OSError (path and reason, with a fix), decode errors, malformed SQLite/JSON/YAML/zip,
RecursionError and, last, anything else as an internal error: still one line, with how to
get the traceback (`OPSCAN_DEBUG=1`). Callers print `prog: error: line` and exit.
"""
from __future__ import annotations

import json
import sqlite3
import zipfile

from opdb.errors import OpscanError
from opdb.fsio import describe_oserror, oserror_hint

INTERNAL_EXIT = 70  # EX_SOFTWARE


def _first_line(text: str, limit: int = 300) -> str:
    line = (str(text).strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[:limit] + "..."


def _with_hint(message: str, hint: str) -> str:
    return f"{message} ({hint})" if hint else message


def one_line(exc: BaseException) -> tuple[str, int]:
    """The one line (no newline, no `prog: error:` prefix) and exit status for `exc`."""
    if isinstance(exc, OpscanError):
        return exc.cli_line(), exc.exit_code
    if isinstance(exc, UnicodeDecodeError):
        where = getattr(exc, "filename", None) or "input"
        return _with_hint(f"{where}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                          f"offset {exc.start})", "pass a UTF-8 text file"), 1
    if isinstance(exc, OSError):
        return _with_hint(describe_oserror(exc), oserror_hint(exc)), 1
    if isinstance(exc, sqlite3.DatabaseError):
        return _with_hint(f"SQLite database error: {_first_line(exc)}",
                          "the file is corrupt or not an SQLite database"), 1
    if isinstance(exc, json.JSONDecodeError):
        return _with_hint(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                          "fix or regenerate the file"), 1
    if isinstance(exc, zipfile.BadZipFile):
        return _with_hint(f"not a valid zip/wheel file: {_first_line(exc)}",
                          "download the file again"), 1
    try:
        import yaml
        if isinstance(exc, yaml.YAMLError):
            return _with_hint(f"malformed YAML: {_first_line(exc)}", "fix the YAML file"), 1
    except ImportError:  # pragma: no cover - PyYAML is a core dependency
        pass
    if isinstance(exc, RecursionError):
        return _with_hint("maximum recursion depth exceeded",
                          "a recursive call never ends; OPSCAN_DEBUG=1 shows the traceback"), 1
    if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
        return _with_hint(f"{_first_line(exc)}", "opscan reads only unencrypted zip/wheel files"), 1
    if isinstance(exc, MemoryError):
        return "out of memory (try --mode meta, or a machine with more RAM)", 1
    kind = type(exc).__name__
    detail = _first_line(exc)
    return _with_hint(f"internal error: {kind}" + (f": {detail}" if detail else ""),
                      "please report it; OPSCAN_DEBUG=1 shows the traceback"), INTERNAL_EXIT
