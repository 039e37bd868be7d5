"""Stream log files of any size in constant memory and yield the recognised lines.

A file is read in fixed-size binary chunks (gzip'd files, recognised by their magic bytes,
through `gzip.open`); each shape's trigger substrings are searched with `bytes.find` over the
whole chunk, and only the lines around a trigger are decoded (UTF-8, errors replaced, NULs
dropped) and matched. Line numbers come from counting b"\\n" between hits. A line longer
than `MAX_LINE` is cut (its tail is still counted), so binary garbage without newlines never
grows the buffer; a truncated gzip stream ends the file with a note instead of an error.
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.logscan.shapes import Hit, Shape, match_line
from opdb.errors import OpscanError

CHUNK = 8 << 20
MAX_LINE = 64 << 10
GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class FileStats:
    path: str
    gzip: bool = False
    bytes: int = 0  # uncompressed bytes read
    lines: int = 0
    hits: int = 0
    note: str = ""  # e.g. a truncated gzip stream


@dataclass
class LineHit:
    hit: Hit
    path: str
    line: int  # 1-based
    text: str  # the decoded line, stripped, cut to 400 characters


def open_log(path: Path):
    """A binary stream of the file's content (gunzipped when it is gzip)."""
    try:
        f = open(path, "rb")
    except IsADirectoryError:
        raise OpscanError(f"{path}: is a directory", hint="pass log files") from None
    except OSError as e:
        raise OpscanError(f"{path}: cannot read ({e.strerror})",
                          hint="pass a readable log file") from None
    head = f.read(2)
    f.seek(0)
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=f, mode="rb"), True
    return f, False


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").replace("\x00", "").strip()


def scan_file(path: str | os.PathLike, shapes: tuple[Shape, ...],
              stats: FileStats | None = None, chunk_size: int = CHUNK) -> Iterator[LineHit]:
    """Yield every recognised line of one file, in file order."""
    p = Path(path)
    stats = stats if stats is not None else FileStats(str(p))
    triggers = tuple({t for s in shapes for t in s.triggers})
    stream, stats.gzip = open_log(p)
    carry = b""  # the unfinished last line of the previous chunk (at most MAX_LINE bytes)
    lineno = 0  # lines completed before the current buffer
    with stream:
        while True:
            try:
                data = stream.read(chunk_size)
            except (EOFError, zlib.error, gzip.BadGzipFile) as e:
                stats.note = f"compressed stream ends early ({e}); read up to there"
                data = b""
            if not data and not carry:
                break
            stats.bytes += len(data)
            buf = carry + data if carry else data
            final = not data
            end = len(buf) if final else buf.rfind(b"\n") + 1  # complete lines only
            if end == 0 and not final:
                # no newline in buffer: keep a bounded tail, the line is cut
                carry = buf[-MAX_LINE:]
                continue
            starts: set[int] = set()
            for t in triggers:
                i = buf.find(t, 0, end)
                while i != -1:
                    starts.add(buf.rfind(b"\n", 0, i) + 1)
                    nl = buf.find(b"\n", i, end)
                    if nl == -1:
                        break
                    i = buf.find(t, nl, end)
            prev = 0
            for s in sorted(starts):
                lineno += buf.count(b"\n", prev, s)
                prev = s
                e = buf.find(b"\n", s, end)
                raw = buf[s:(e if e != -1 else end)][:MAX_LINE]
                text = _decode(raw)
                hit = match_line(text, shapes)
                if hit is not None:
                    stats.hits += 1
                    yield LineHit(hit, str(p), lineno + 1, text[:400])
            lineno += buf.count(b"\n", prev, end)
            if final:
                if end > 0 and not buf.endswith(b"\n"):
                    lineno += 1  # a last line without newline
                carry = b""
                break
            carry = buf[end:][-MAX_LINE:]
    stats.lines = lineno
