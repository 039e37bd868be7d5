"""Stream log files of any size in constant memory and yield the recognised lines.

A file is read in fixed-size binary chunks (gzip'd files, recognised by their magic bytes,
through `Gunzip`, which keeps what a cut stream yields); each shape's trigger substrings are searched with `bytes.find` over the
whole chunk, and only the lines around a trigger are decoded (UTF-8, errors replaced, NULs
dropped) and matched. Line numbers come from counting b"\\n" between hits. A line longer
than `MAX_LINE` is cut (its tail is still counted), so binary garbage without newlines never
grows the buffer; a truncated gzip stream ends the file with a note instead of an error.
"""
from __future__ import annotations

import codecs
import dataclasses
import gzip
import os
import re
import shutil
import subprocess
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from analyzer.logscan.shapes import (JOIN_LINES, Hit, Shape, candidate_triggers, headed,
                                     match_all, match_wrapped)
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


class Gunzip:
    """A gzip file's content (every member, in order) as a read-only binary stream that,
    unlike gzip.GzipFile, hands out everything a damaged stream decompresses to before
    raising: EOFError for a file cut inside a member, zlib.error for bytes that are not
    deflate data (trailing garbage). GzipFile dropped the bytes of the read that hit the
    damage: a cut log smaller than one read (8 MiB) came out empty. At most OUT bytes are
    decompressed per step, so memory stays bounded whatever the compression ratio."""

    RAW = 1 << 20
    OUT = 1 << 22

    def __init__(self, f):
        self._f = f
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._in = b""  # compressed bytes read and not yet decompressed
        self._parts: list[bytes] = []  # decompressed bytes not yet handed out
        self._have = 0  # their total length
        self._inside = False  # a member has begun and not ended
        self._end: BaseException | None = None  # why the stream stopped (None: not yet)

    def _step(self) -> None:
        if not self._in:
            self._in = self._f.read(self.RAW)
            if not self._in:
                self._end = (EOFError("compressed file ended before the end-of-stream marker "
                                      "was reached") if self._inside else StopIteration())
                return
        if self._z.eof:  # the previous member ended: the next one starts here
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._inside = True
        try:
            part = self._z.decompress(self._in, self.OUT)
        except zlib.error as e:
            self._end = e
            return
        self._parts.append(part)
        self._have += len(part)
        self._in = self._z.unused_data if self._z.eof else self._z.unconsumed_tail
        self._inside = not self._z.eof

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or self._have < size) and self._end is None:
            self._step()
        if not self._have and self._end is not None and not isinstance(self._end, StopIteration):
            raise self._end
        out = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        rest = out[size:] if 0 <= size < len(out) else b""
        out = out[:len(out) - len(rest)]
        self._parts, self._have = ([rest], len(rest)) if rest else ([], 0)
        return out

    def close(self) -> None:
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_log(path: Path):
    """A binary stream of the file's content (gunzipped when it is gzip; a UTF-16 file, as
    PowerShell's `Tee-Object` and `>` write, recoded to UTF-8 from its byte-order mark)."""
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
        return Gunzip(f), True
    if head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return codecs.EncodedFile(f, "utf-8", "utf-16", errors="replace"), False
    return f, False


SNIFF = 64 << 10
# bytes no text log holds (NUL is left out: a crashed writer pads files with NULs)
_CONTROL = bytes(set(range(1, 32)) - {9, 10, 11, 12, 13, 27}) + b"\x7f"


def read_head(path) -> bytes:
    """The first 64 KiB of a log's text, refusing a file that cannot be a log at all:
    empty, or a gzip stream that yields nothing. A stream cut short with some text left
    is read (scan_file notes it)."""
    stream, gz = open_log(Path(path))
    head = b""
    try:
        with stream:
            while len(head) < SNIFF:  # (Gunzip hands out what a cut stream yields first)
                part = stream.read(SNIFF - len(head))
                if not part:
                    break
                head += part
    except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
        if not head:
            raise OpscanError(f"{path}: not a readable gzip file ({e})" if gz else f"{path}: unreadable ({e})",
                              hint="pass the log file itself (plain text or .gz)") from None
    if not head:
        raise OpscanError(f"{path}: the file is empty",
                          hint="pass the log the run wrote (e.g. GLOG_v=3 output or its stderr)")
    return head


def looks_binary(head: bytes) -> bool:
    """More than a third of `head` is control bytes or invalid UTF-8 (NULs aside)."""
    bad = sum(head.count(bytes([c])) for c in _CONTROL)
    bad += head.decode("utf-8", errors="replace").count("\ufffd")
    return bad * 3 > len(head)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").replace("\x00", "").strip()


TRAILER_GAP = 3  # lines between an error and the trailer line naming its op


def scan_file(path: str | os.PathLike, shapes: tuple[Shape, ...],
              stats: FileStats | None = None, chunk_size: int = CHUNK,
              prefilter: str = "auto") -> Iterator[LineHit]:
    """Yield every recognised line of one file, in file order (see `_scan_lines`), with two
    kinds of line folded into the event at most `TRAILER_GAP` lines above them: a trailer
    (`Shape.trailer`) naming the same op and kind is that event told twice, and a detail
    (`Shape.detail`) of the same kind gives its dtype when it has none."""
    stats = stats if stats is not None else FileStats(str(path))
    by_name = {s.name: s for s in shapes}
    pending = None  # the last event, held until the lines that may fold into it are read
    for h in _scan_lines(path, shapes, stats, chunk_size, prefilter):
        s = by_name[h.hit.shape]
        near = pending is not None and h.line - pending.line <= TRAILER_GAP
        if s.detail:
            if near and pending.hit.kind == h.hit.kind and not pending.hit.dtype:
                pending = dataclasses.replace(
                    pending, hit=dataclasses.replace(pending.hit, dt=h.hit.dt))
            continue
        if s.trailer and near and (pending.hit.op, pending.hit.kind) == (h.hit.op, h.hit.kind):
            continue
        if pending is not None:
            stats.hits += 1
            yield pending
        pending = h
    if pending is not None:
        stats.hits += 1
        yield pending


def _scan_lines(path: str | os.PathLike, shapes: tuple[Shape, ...], stats: FileStats,
                chunk_size: int = CHUNK, prefilter: str = "auto") -> Iterator[LineHit]:
    """Yield every recognised line of one file, in file order.

    prefilter: "grep" finds the candidate lines of a plain file with one `grep -a -n -F`
    pass over all trigger strings (one multi-pattern scan instead of one `bytes.find` pass
    per trigger); "python" reads the file here; "auto" uses grep for plain files when
    it is installed, python otherwise (gzip, no grep)."""
    p = Path(path)
    triggers = candidate_triggers(shapes)
    stream, stats.gzip = open_log(p)
    if prefilter not in ("auto", "grep", "python"):
        raise ValueError(f"prefilter {prefilter!r}")
    recoded = isinstance(stream, codecs.StreamRecoder)  # grep reads the file's own bytes
    if recoded:
        stats.note = "UTF-16 text: read recoded to UTF-8"
    grep = shutil.which("grep") if prefilter != "python" and not stats.gzip and not recoded else None
    if prefilter == "grep" and grep is None:
        raise OpscanError("grep is not installed (or the file is gzip'd)",
                          hint="use the python prefilter")
    if grep and triggers:
        stream.close()
        yield from _scan_grep(grep, p, shapes, triggers, stats)
        return
    wraps = any(s.heads for s in shapes)  # a wrapped line can be joined
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
            stop = end  # lines from here on are left for the next round (a wrapped line)
            skip = -1  # continuation lines of a wrapped line already read
            for s in sorted(starts):
                if s < skip:
                    continue
                e = buf.find(b"\n", s, end)
                e = e if e != -1 else end
                raw = buf[s:e][:MAX_LINE]
                hits = match_all(raw, shapes)
                used_end = -1
                if not hits and wraps and headed(raw, shapes):
                    conts, c_end = _following(buf, e, end)
                    if len(conts) < JOIN_LINES and not final and end - s < JOIN_CARRY:
                        stop = s  # its continuation lines are not all here yet
                        break
                    hit, n, joined = match_wrapped(raw, conts, shapes)
                    if hit is not None:
                        hits, used_end, raw = [hit], c_end[n - 1], joined
                lineno += buf.count(b"\n", prev, s)
                prev = s
                for hit in hits:
                    yield LineHit(hit, str(p), lineno + 1, _decode(raw)[:400])
                skip = used_end
            lineno += buf.count(b"\n", prev, stop)
            if final:
                if end > 0 and not buf.endswith(b"\n"):
                    lineno += 1  # a last line without newline
                carry = b""
                break
            carry = buf[stop:end] + buf[end:][-MAX_LINE:]
    stats.lines = lineno


JOIN_CARRY = (JOIN_LINES + 1) * MAX_LINE  # at most this much is held back for a wrapped line


def _following(buf: bytes, e: int, end: int) -> tuple[list[bytes], list[int]]:
    """Up to `JOIN_LINES` complete lines after the line ending at `e` (each cut to
    MAX_LINE), and where each ends."""
    conts, ends = [], []
    while len(conts) < JOIN_LINES and e < end:
        s = e + 1
        if s >= end:
            break
        n = buf.find(b"\n", s, end)
        n = n if n != -1 else end
        conts.append(buf[s:n][:MAX_LINE])
        ends.append(n)
        e = n
    return conts, ends


def _count_lines(path: Path) -> int:
    """Lines of a plain file (a last line without newline counts): `wc -l` when installed
    (one memchr pass in C), else 1 MiB blocks counted here."""
    wc = shutil.which("wc")
    if wc:
        with open(path, "rb") as src:
            r = subprocess.run([wc, "-l"], stdin=src, capture_output=True,
                               env={**os.environ, "LC_ALL": "C"})
        if r.returncode == 0 and r.stdout.strip().isdigit():
            n = int(r.stdout.strip())
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell():
                    f.seek(-1, os.SEEK_END)
                    n += f.read(1) != b"\n"
            return n
    n, last = 0, b"\n"
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(1 << 20)
        mv = memoryview(buf)
        while True:
            k = f.readinto(mv)
            if not k:
                break
            n += buf.count(b"\n", 0, k)
            last = bytes(buf[k - 1:k])
    return n + (last != b"\n")


_GREP_PREFIX = re.compile(rb"(\d+)([:-])")


def _grep_lines(out) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, text without its newline, whether it matched) from `grep -n -A N`
    output: `N:text` for matching lines, `N-text` for context lines, `--` between groups;
    each read with at most MAX_LINE bytes kept."""
    while True:
        raw = out.readline(MAX_LINE)
        if not raw:
            return
        if not raw.endswith(b"\n") and len(raw) == MAX_LINE:
            while True:  # drop the rest of an over-long line
                more = out.readline(MAX_LINE)
                if not more or more.endswith(b"\n"):
                    break
        m = _GREP_PREFIX.match(raw)
        if m is None:
            continue  # the `--` group separator
        yield int(m.group(1)), raw[m.end():].rstrip(b"\n"), m.group(2) == b":"


def _scan_grep(grep: str, p: Path, shapes, triggers, stats: FileStats) -> Iterator[LineHit]:
    """Candidate lines from `grep -a -n -F [-A JOIN_LINES] -e T1 -e T2 ...` (binary read as
    text, bytes compared as bytes under LC_ALL=C), matched here; when a shape has heads, the
    context lines after a candidate are the continuation lines a wrapped line is joined with
    (`match_wrapped`)."""
    cmd = [grep, "-a", "-n", "-F"]
    wraps = any(s.heads for s in shapes)
    if wraps:  # context lines: the continuations of a wrapped line
        cmd += ["-A", str(JOIN_LINES)]
    for t in triggers:
        cmd += ["-e", t.decode("ascii")]
    cmd += ["--", str(p)]
    env = {**os.environ, "LC_ALL": "C"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        items = _grep_lines(proc.stdout)
        ahead: deque = deque()
        skip_to = 0  # continuation lines of a wrapped line already read
        while True:
            it = ahead.popleft() if ahead else next(items, None)
            if it is None:
                break
            num, body, matched = it
            if not matched or num <= skip_to:
                continue
            hits, text = match_all(body, shapes), body
            if not hits and wraps and headed(body, shapes):
                while len(ahead) < JOIN_LINES:
                    x = next(items, None)
                    if x is None:
                        break
                    ahead.append(x)
                conts = []
                for k, (n2, b2, _) in enumerate(ahead):
                    if n2 != num + 1 + k:
                        break
                    conts.append(b2)
                hit, n, joined = match_wrapped(body, conts, shapes)
                if hit is not None:
                    hits, skip_to, text = [hit], num + n, joined
            for hit in hits:
                yield LineHit(hit, str(p), num, _decode(text)[:400])
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        proc.stderr.close()
        rc = proc.wait()
    if rc not in (0, 1):
        raise OpscanError(f"{p}: grep failed ({err or rc})", hint="pass a readable log file")
    stats.bytes = p.stat().st_size
    stats.lines = _count_lines(p)
