"""Output discipline shared by every command that writes (opscan, opgen, opdb).

- `check_out_dir` resolves an output directory to an absolute path and checks it before any
  user code runs (a model that calls `os.chdir` cannot move the outputs; a file in the way
  or an unwritable parent is refused up front).
- `write_files` writes a set of files into one directory: every file goes to a temporary
  sibling first, then all are moved into place with SIGINT/SIGTERM held back, so an
  interrupt leaves the old files or the complete new set, and no `.tmp` file behind.
  Existing files are replaced only with `force`; nothing else in the directory is touched.
- `write_tree` writes a generated directory tree the same way (built next to the
  destination, renamed into place) and leaves a marker file listing what it wrote.
  `force` replaces only a tree that carries the marker, and keeps files the user added.
- Files and directories get the user's umask (0666/0777 minus umask), never 0600/0700.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable

from opdb.errors import OpscanError, OutputExists

TREE_MARKER = ".opscan-generated.json"
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class OutputError(OpscanError):
    """An output path cannot be written (a file in the way, no permission, name too long)."""


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    return 0o666 & ~umask()


def dir_mode() -> int:
    return 0o777 & ~umask()


@contextlib.contextmanager
def deferred_signals():
    """Hold SIGINT and SIGTERM until the block ends (main thread only; elsewhere a no-op).

    A signal that arrives inside is delivered when the block exits, after the files are
    in place: SIGTERM then ends the process, SIGINT raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def describe_oserror(exc: OSError, path=None) -> str:
    """One line for an OSError: the path and what went wrong, without errno noise."""
    where = path or exc.filename or ""
    reason = {
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.ENOENT: "no such file or directory",
        errno.ENOTDIR: "a path component is a file, not a directory",
        errno.EISDIR: "is a directory",
        errno.ENAMETOOLONG: "file name too long",
        errno.ENOSPC: "no space left on device",
        errno.EROFS: "read-only file system",
        errno.EEXIST: "already exists",
        errno.ELOOP: "too many levels of symbolic links",
    }.get(exc.errno, exc.strerror or str(exc))
    return f"{where}: {reason}" if where else reason


def _env_dir_hint(path) -> str:
    """When `path` is $OPSCAN_HOME or $OPSCAN_CACHE, a folder in it or a parent of it: the
    hint names the variable (the user set it, or its default is in the way)."""
    from opdb.fsutil import cache_dir, data_dir

    p = Path(os.path.abspath(os.fspath(path)))
    for var, d, what in (("OPSCAN_HOME", data_dir(), "the overlay of your syncs"),
                         ("OPSCAN_CACHE", cache_dir(), "opscan's caches")):
        d = Path(os.path.abspath(d))
        if p == d or d in p.parents or p in d.parents:
            where = f"{var}={d}" if os.environ.get(var) else f"{d} (the default {var})"
            return f"{where} must be a directory you can write ({what}): point {var} at one"
    return ""


def oserror_hint(exc: OSError) -> str:
    if exc.filename and not isinstance(exc.filename, int):
        env = _env_dir_hint(exc.filename)
        if env:
            return env
    return {
        errno.EACCES: "choose a path you can write to, or fix its permissions",
        errno.EPERM: "choose a path you can write to, or fix its permissions",
        errno.ENOENT: "check the path (a dangling symlink?)",
        errno.ENOTDIR: "a file sits where a directory is needed: choose another path",
        errno.EISDIR: "pass a file, not a directory",
        errno.ENAMETOOLONG: "use a shorter name",
        errno.ENOSPC: "free some disk space",
        errno.EROFS: "choose a writable location",
    }.get(exc.errno, "")


def check_out_dir(path, option: str = "-o/--output") -> Path:
    """`path` as an absolute path, checked to be creatable or usable as a directory.

    Call before any user code runs. Raises OutputError naming `option` when a file sits at
    the path or at one of its parents, when the nearest existing parent is not writable, or
    when a name is too long."""
    raw = os.fspath(path)
    if not raw:
        raise OutputError(f"{option} is empty", hint=f"pass a directory to {option}")
    out = Path(os.path.abspath(raw))
    for part in out.parts:
        if len(part.encode("utf-8", "surrogateescape")) > 255:
            raise OutputError(f"{option} {raw}: file name too long", hint="use a shorter name")
    probe = out
    while True:
        if probe.exists() or probe.is_symlink():
            if not probe.is_dir():
                what = "is a file" if probe == out else f"has a file in the way ({probe})"
                raise OutputError(f"{option} {raw}: {what}, not a directory",
                                  hint=f"pass a directory to {option}")
            if not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
                raise OutputError(f"{option} {raw}: {probe} is not writable",
                                  hint=f"choose a directory you can write to with {option}")
            return out
        if probe.parent == probe:
            return out
        probe = probe.parent


def _can_create_in(directory: Path) -> bool:
    """Whether a file can really be created in `directory` (root ignores permission bits,
    not read-only or virtual file systems): create and remove a probe file."""
    try:
        fd, name = tempfile.mkstemp(prefix=".opscan-probe.", dir=directory)
    except OSError:
        return False
    os.close(fd)
    _unlink(Path(name))
    return True


def _tmp_open(dest: Path, data: bytes) -> tuple[Path, int]:
    """A temp sibling of `dest` holding `data` (written, not yet synced) with the umask's
    mode, and its still open descriptor (for `sync_all`)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name[:200]}.", suffix=".tmp", dir=dest.parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.chmod(tmp, file_mode())
    except BaseException:
        os.close(fd)
        _unlink(Path(tmp))
        raise
    return Path(tmp), fd


SYNC_THREADS = 16  # at most this many fsyncs in flight (a snapshot or a zoo writes more files)


class Syncs:
    """fsyncs started as files are written: `add(fd)` hands the descriptor to a helper
    thread at once (a new one while fewer than SYNC_THREADS run, else the next free one),
    so the disk waits overlap each other and whatever the caller does next (fsync
    releases the GIL; a report's later files are rendered meanwhile). `wait()` returns
    when every fsync has returned, then raises the first error in `add` order. Instead
    of one flush after another (seven report files: ~30 ms of wall time one by one on
    this machine, ~8-20 ms together)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException | None] = []

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            i, fd = item
            try:
                os.fsync(fd)
            except BaseException as exc:  # noqa: BLE001 - re-raised by wait(), in order
                self._errors[i] = exc

    def add(self, fd: int) -> None:
        self._errors.append(None)
        self._queue.put((len(self._errors) - 1, fd))
        if len(self._threads) < min(len(self._errors), SYNC_THREADS):
            t = threading.Thread(target=self._work, daemon=True)
            t.start()
            self._threads.append(t)

    def wait(self, raise_errors: bool = True) -> None:
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join()
        self._threads = []
        for exc in self._errors if raise_errors else ():
            if exc is not None:
                raise exc


def sync_all(fds: list[int]) -> None:
    """fsync every descriptor, all at once (`Syncs`); the first error, in `fds` order, is
    raised after every fsync has returned."""
    syncs = Syncs()
    for fd in fds:
        syncs.add(fd)
    syncs.wait()


def _unlink(p: Path) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


def _mkdirs(d: Path) -> None:
    """mkdir -p with the umask's mode (os.makedirs already applies the umask)."""
    d.mkdir(parents=True, exist_ok=True)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write one file: temp sibling, fsync, chmod to the umask's mode, os.replace."""
    write_files(Path(path).parent, {Path(path).name: data}, force=True)


def _refuse_targets(dests: list[Path], force: bool, option: str) -> None:
    """The refusals `write_files` makes before writing, in one place (`check_files` makes
    them before any work): an existing target without `force`; a directory where a file is
    to go, `force` or not (replacing it would lose the directory's contents)."""
    existing = [str(p) for p in dests if p.exists() or p.is_symlink()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise OutputExists(f"{existing[0]} already exists{more}",
                           hint=f"pass --force to overwrite, or choose another {option}")
    for dest in dests:
        if dest.is_dir() and not dest.is_symlink():
            raise OutputError(f"{dest}: is a directory, where {option} needs to write a file",
                              hint=f"move it away, or choose another {option}")


def check_outside(out_dir, inputs: dict[str, str], option: str = "-o/--output") -> None:
    """Refuse an output directory that is one of `inputs` ({what: path}, e.g. {"dump A":
    ...}) or inside one: the outputs would be mixed into what the command reads (and read
    back as input next time)."""
    out = Path(os.path.realpath(os.fspath(out_dir)))
    for what, path in inputs.items():
        src = Path(os.path.realpath(os.fspath(path)))
        if out == src or src in out.parents:
            raise OutputError(f"{option} {out_dir} is inside {what} ({path})",
                              hint=f"choose an {option} outside the inputs")


def check_files(out_dir, names, force: bool = False, option: str = "-o/--output") -> Path:
    """Every refusal `write_files(out_dir, {name: ...}, force, option)` would make, made
    now, before the command does its work or runs any user code: `check_out_dir`, then
    `_refuse_targets`. Returns `out_dir` as an absolute path."""
    out = check_out_dir(out_dir, option)
    _refuse_targets([Path(os.path.normpath(out / n)) for n in names], force, option)
    return out


def write_files(out_dir, files: dict[str, bytes | Callable[[], bytes]], force: bool = False,
                option: str = "-o/--output") -> list[Path]:
    """Write `files` ({relative name: bytes, or a function rendering them}) into `out_dir`
    as one step.

    Refuses (OutputExists, nothing rendered or written) when any target exists and `force`
    is false. Everything is written to temp siblings first, each file's fsync started as
    soon as it is written (`Syncs`): the bytes given as such first, then each function's
    bytes in order, so the disk flushes the early files while the later ones render. Only
    when all are written and synced are they moved into place; SIGINT/SIGTERM are deferred
    throughout (rendering included: an interrupt then leaves no temp file behind), and a
    function that raises leaves the old files and no temp. Returns the final paths in
    `files` order."""
    out = Path(os.path.abspath(os.fspath(out_dir)))
    targets = []
    for name, data in files.items():
        dest = Path(os.path.normpath(out / name))
        if out not in dest.parents:
            raise OutputError(f"refusing to write {name!r} outside {out}")
        targets.append((dest, data))
    _refuse_targets([d for d, _ in targets], force, option)
    temps: list[tuple[Path, Path]] = []
    fds: list[int] = []
    syncs = Syncs()
    # Hold SIGINT/SIGTERM for all of it, temps included (a SIGTERM's default action would
    # leave them behind). Every temp is written and its fsync started, the ready bytes
    # first; when all are written and synced, they are moved into place.
    ready = [t for t in targets if not callable(t[1])] + [t for t in targets if callable(t[1])]
    with deferred_signals():
        try:
            try:
                for dest, data in ready:
                    if callable(data):
                        data = data()
                    _mkdirs(dest.parent)
                    tmp, fd = _tmp_open(dest, data)
                    temps.append((tmp, dest))
                    fds.append(fd)
                    syncs.add(fd)
            except BaseException:
                syncs.wait(raise_errors=False)  # no descriptor closed while a thread syncs it
                raise
            syncs.wait()
            while fds:
                os.close(fds.pop())
            for tmp, dest in temps:
                os.replace(tmp, dest)
            temps = []
        finally:
            for fd in fds:
                os.close(fd)
            for tmp, _ in temps:
                _unlink(tmp)
    return [d for d, _ in targets]


def _read_marker(root: Path) -> dict | None:
    p = root / TREE_MARKER
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        return None
    return data


def check_tree(out_dir, force: bool, tool: str, option: str = "-o/--output") -> Path:
    """Early check for `write_tree`: absolute path; an existing non-empty directory is
    refused without `force`, and with `force` unless `tool` wrote it (marker file)."""
    out = check_out_dir(out_dir, option)
    if out.is_dir() and any(out.iterdir()):
        marker = _read_marker(out)
        if marker is None:
            raise OutputExists(
                f"{out} is not empty and was not written by {tool}",
                hint=f"--force only replaces a directory {tool} generated; choose a new or empty {option}")
        if not force:
            raise OutputExists(f"{out} exists", hint="pass --force to replace it")
    return out


def write_tree(files: dict[str, str | bytes], out_dir, force: bool = False, tool: str = "opgen",
               option: str = "-o/--output", scratch: tuple[str, ...] = ()) -> Path:
    """Write a generated tree to `out_dir` as one step (see module doc); returns its path.

    The tree is built in a temp sibling directory and renamed into place with signals
    deferred. A marker file lists the files written. An existing tree is replaced only
    with `force` and only when it carries the marker; files the user added to it since
    (not listed in the marker) are moved into the new tree, and a clash refuses.
    `scratch` names top-level directories the tool itself fills later (a build dir): they
    belong to the tree and are dropped on replace."""
    out = check_tree(out_dir, force, tool, option)
    old_marker = _read_marker(out) if out.is_dir() else None
    rels = {}
    for rel, text in files.items():
        norm = os.path.normpath(rel)
        if norm.startswith("..") or os.path.isabs(norm) or norm in (".", TREE_MARKER):
            raise OutputError(f"refusing to write {rel!r} outside the output directory")
        rels[norm] = text
    user_files: list[str] = []
    if old_marker is not None:
        ours = set(old_marker["files"]) | {TREE_MARKER}
        owned = set(old_marker.get("scratch") or [])
        for dirpath, dirnames, filenames in os.walk(out):
            base = Path(dirpath)
            names = filenames + [d for d in dirnames if (base / d).is_symlink()]
            for name in names:
                rel = str((base / name).relative_to(out))
                if rel not in ours and Path(rel).parts[0] not in owned:
                    user_files.append(rel)
        user_files.sort()
        clash = [f for f in user_files if f in rels]
        if clash:
            raise OutputExists(f"{out / clash[0]} was not written by {tool} and would be replaced",
                               hint="move that file away, or choose another output directory")
    _mkdirs(out.parent)
    with deferred_signals():
        return _write_tree(rels, out, tool, scratch, user_files)


def _write_tree(rels: dict, out: Path, tool: str, scratch: tuple[str, ...],
                user_files: list[str]) -> Path:
    """Build the tree in a temp sibling, then swap it in (callers hold the signals)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name[:200]}.", suffix=".tmp", dir=out.parent))
    old = None
    moved: list[str] = []
    try:
        os.chmod(tmp, dir_mode())
        for rel, text in sorted(rels.items()):
            dest = tmp / rel
            _mkdirs(dest.parent)
            data = text.encode("utf-8") if isinstance(text, str) else text
            with open(dest, "wb") as fh:
                fh.write(data)
        marker = {"tool": tool, "files": sorted(rels), "scratch": sorted(scratch)}
        (tmp / TREE_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        for rel in user_files:  # files the user added to the old tree move to the new one
            dest = tmp / rel
            _mkdirs(dest.parent)
            os.replace(out / rel, dest)
            moved.append(rel)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name[:200]}.old.", dir=out.parent))
            os.rmdir(old)
            os.replace(out, old)
        os.replace(tmp, out)
        tmp = None
    except BaseException:
        # put everything back: the old tree, and the user's files in it
        if old is not None and not out.exists():
            os.replace(old, out)
            old = None
        for rel in moved:
            os.replace(tmp / rel, out / rel)
        raise
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out


def write_or_check(path, text: str, check: bool, tool: str, what: str) -> int:
    """An extractor's last step: with `check`, 1 (and a one-line message) unless `path`
    holds `text` byte for byte; else write it atomically and say how many `what` lines."""
    path = Path(path)
    if check:
        if not path.exists() or path.read_text() != text:
            print(f"{tool}: {path.name} differs from a fresh extraction; rerun without --check "
                  "to rewrite it", file=sys.stderr)
            return 1
        return 0
    atomic_write_bytes(path, text.encode())
    print(f"{path.name}: {text.count(chr(10))} {what}")
    return 0
