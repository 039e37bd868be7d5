"""msprobe's statistics dump layout, written and read.

    DUMPDIR/step{N}/rank{R}/dump.json       {"task": "statistics", "level": "L0"|"L1"|"mix",
                                             "framework": "pytorch"|"paddle", "dump_data_dir": null,
                                             "data": {"Module.fc.Linear.forward.0": {...}, ...}}
    DUMPDIR/step{N}/rank{R}/construct.json  {call key: parent call key or null}
    DUMPDIR/step{N}/rank{R}/stack.json      {"0": [[call keys], ["File f, line n, in fn, \\n code"]]}
    DUMPDIR/opscan_align.json               opscan's own run record (options, losses, notes)

msprobe writes `proc{pid}` instead of `rank{R}` when no distributed rank is set; the reader
accepts both. Call keys: `Module.{path}.{Class}.forward.{n}` / `.backward.{n}` /
`.parameters_grad.{n}` for module calls (n counts calls of that path), and
`Aten.{op}.{overload}.{n}.forward` (torch) or `Paddle.{op}.{n}.forward` for op calls.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from opdb.errors import OpscanError

META_NAME = "opscan_align.json"
LEVELS = {"module": "L0", "op": "mix"}


def dumps_json(obj) -> bytes:
    return (json.dumps(obj, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


# one encoder for every record (json.dumps with options builds a new encoder per call)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps_lines(obj: dict) -> bytes:
    """A JSON object with one entry per line, through the C encoder (indent= would take
    Python's own, ten times slower, on every step)."""
    enc = _COMPACT
    body = ",\n".join(f" {enc(k)}: {enc(v)}" for k, v in obj.items())
    return ("{\n" + body + "\n}\n").encode("utf-8") if obj else b"{}\n"


# A tensor's statistics record, keys in the order the recorders write them
TENSOR_KEYS = ("type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "NanCount", "InfCount",
               "requires_grad")
# the four statistics come as one fragment ('"Max":..,"Min":..,"Mean":..,"Norm":..', built for
# the whole step at once by stats.StepStats.flush)
_TENSOR_JSON = '{"type":%s,"dtype":%s,"shape":%s,%s,"NanCount":%d,"InfCount":%d,"requires_grad":%s}'

_BOOL_JSON = {True: "true", False: "false"}
_TEXT_JSON: dict = {}  # dict keys, dtype and type strings, shapes -> their JSON text


def _text_json(key, value) -> str:
    s = _TEXT_JSON.get(key)
    if s is None:
        if len(_TEXT_JSON) > 8192:
            _TEXT_JSON.clear()
        s = _TEXT_JSON[key] = _COMPACT(value)
    return s


class _DataEncoder:
    """dump.json's call records, with a tensor record whose statistics came through the
    recorder's 9-digit rounding (`texts`: id(record) -> the four floats and their JSON
    fragment, from StepStats) filled into one template, its numbers written from that text: the C
    encoder would walk the dict generically and find each float's shortest repr again
    (most of its time). The same numbers either way (tests/analyzer/align/
    test_layout_writer.py); any other value, or a record changed since, goes to the C
    encoder."""

    def __init__(self, texts: dict):
        self.texts = texts

    def tensor(self, r: dict) -> str | None:
        e = self.texts.get(id(r))
        if e is None or len(r) != 10 or tuple(r) != TENSOR_KEYS:
            return None
        t, d, shape, mx, mn, mean, norm, nan, inf, rg = r.values()
        if mx is not e[0] or mn is not e[1] or mean is not e[2] or norm is not e[3] \
                or type(nan) is not int or type(inf) is not int or type(rg) is not bool \
                or type(t) is not str or type(d) is not str or type(shape) is not list:
            return None
        key = tuple(shape)
        ss = _TEXT_JSON.get(key)
        if ss is None:
            if any(type(x) is not int for x in key):
                return None
            ss = _text_json(key, shape)
        return _TENSOR_JSON % (_text_json(t, t), _text_json(d, d), ss, e[4], nan, inf, _BOOL_JSON[rg])

    def call(self, v) -> str:
        """A call record: {"input_args": [...], "input_kwargs": {...}, "output": [...]},
        {"input": [...], "output": [...]} or {parameter: [record]}."""
        if type(v) is not dict:
            return self.value(v)
        parts = []
        tensor, value = self.tensor, self.value
        for k, x in v.items():
            if type(k) is not str:
                return _COMPACT(v)
            kt = _TEXT_JSON.get(k) or _text_json(k, k)
            if type(x) is list:
                items = []
                for r in x:
                    s = tensor(r) if type(r) is dict else None
                    items.append(value(r) if s is None else s)
                parts.append(kt + ":[" + ",".join(items) + "]")
            else:
                parts.append(kt + ":" + value(x))
        return "{" + ",".join(parts) + "}"

    def value(self, v) -> str:
        if type(v) is dict:
            if len(v) == 10:
                s = self.tensor(v)
                if s is not None:
                    return s
            if all(type(k) is str for k in v):
                return "{" + ",".join([_text_json(k, k) + ":" + self.value(x) for k, x in v.items()]) + "}"
        elif type(v) is list:
            out = []
            for x in v:
                s = self.tensor(x) if type(x) is dict and len(x) == 10 else None
                out.append(self.value(x) if s is None else s)
            return "[" + ",".join(out) + "]"
        return _COMPACT(v)


def dumps_dump_json(head: dict, data: dict, texts: dict | None = None) -> bytes:
    """dump.json with one call record per line: msprobe reads any JSON, people grep lines,
    and it is a third of msprobe's indented size. texts: the recorder's statistics texts
    (`_DataEncoder`)."""
    enc = _COMPACT
    lines = ["{"]
    for k, v in head.items():
        lines.append(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},")
    lines.append(' "data": {')
    if texts:
        val = _DataEncoder(texts).call
        lines.append(",\n".join(f"  {enc(k)}: {val(v)}" for k, v in data.items()))
    else:
        lines.append(",\n".join(f"  {enc(k)}: {enc(v)}" for k, v in data.items()))
    lines += [" }", "}"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_file(path: Path, data: bytes) -> None:
    """Atomic write: a temp file in the same folder, then os.replace. No fsync: a dump is
    rewritten every step and can be made again; a reader never sees half a file."""
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@dataclass
class StepDump:
    """One step of one rank: dump.json's data, construct.json and stack.json."""

    step: int
    rank: int
    framework: str  # "pytorch" | "paddle" (msprobe's spelling)
    level: str  # "L0" | "mix"
    data: dict = field(default_factory=dict)
    construct: dict = field(default_factory=dict)
    stack: dict = field(default_factory=dict)
    # id(tensor record) -> its statistics and their texts (StepStats.texts; not compared)
    texts: dict = field(default_factory=dict, repr=False, compare=False)
    # statistics still to compute (stats_worker.DeferredStepStats: the records' numbers are
    # filled by the dump's worker process, not in this one)
    stats: object = field(default=None, repr=False, compare=False)

    def encode(self, reuse: dict | None = None) -> dict[str, bytes]:
        """The three files' bytes. reuse: file name -> (object, bytes) of an earlier step;
        construct.json and stack.json take those bytes again when this step's object
        equals that one (comparing costs a tenth of encoding)."""
        reuse = reuse or {}
        files = {"dump.json": self.dump_json(self.texts)}
        for name, obj in (("construct.json", self.construct), ("stack.json", self.stack)):
            old = reuse.get(name)
            files[name] = old[1] if old is not None and old[0] is not obj and old[0] == obj \
                else dumps_lines(obj)
        return files

    def dump_json(self, texts: dict | None) -> bytes:
        """dump.json's bytes, the tensor records' statistics written from `texts`
        (`_DataEncoder`)."""
        return dumps_dump_json({"task": "statistics", "level": self.level, "framework": self.framework,
                                "dump_data_dir": None}, self.data, texts)

    def write(self, root: Path, files: dict[str, bytes] | None = None,
              same_as: dict[str, Path] | None = None) -> Path:
        """The three files go into a hidden folder renamed onto step{N}/rank{R} at once (one
        rename per step: renames are the slow part of a dump on overlay filesystems).
        same_as: file name -> an earlier step's file with the same bytes, hard-linked instead
        of written (construct.json and stack.json rarely change between steps; a link costs
        a tenth of creating and writing a file here); written when linking fails."""
        files = self.encode() if files is None else files
        same_as = same_as or {}
        d = Path(root) / f"step{self.step}" / f"rank{self.rank}"
        tmp = os.path.join(d.parent, f".rank{self.rank}.tmp")
        # os-level calls, each one system call where pathlib and open() take two to four
        # (stat before mkdir, fstat and ioctl in open): eight calls per step in all
        try:
            os.mkdir(d.parent)
        except FileExistsError:
            pass
        except FileNotFoundError:
            d.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(tmp)
        except FileExistsError:  # left by a run that died mid-write
            _rmtree(tmp)
            os.mkdir(tmp)
        for name, data in files.items():
            path = os.path.join(tmp, name)
            if name in same_as:
                try:
                    os.link(same_as[name], path)
                    continue
                except OSError:
                    pass
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        try:
            os.rename(tmp, d)
        except OSError:  # the step folder exists (a dump written again with --force)
            if not d.exists():
                raise
            _rmtree(d)
            os.rename(tmp, d)
        return d


def _rmtree(path) -> None:
    import shutil

    shutil.rmtree(path)


class StepWriter:
    """Writes each step's files on one background thread, so the file system's latency
    (mkdir, open, rename: hundreds of microseconds each on an overlay filesystem) overlaps
    the next step. The JSON is encoded on the caller's thread: encoding holds the GIL, and a
    thread holding it while the step runs would stall every framework op that hands the GIL
    back and forth. Steps are written in order; nothing reads a dump before `close()`; the
    first error is raised by the next `submit` or by `close`. A construct.json or stack.json
    identical to the previous step's is hard-linked to it."""

    def __init__(self, root: Path, threads: bool = True):
        """threads=False: each step written by `submit` itself (the dump's worker process,
        stats_worker, which has no step to overlap)."""
        from concurrent.futures import ThreadPoolExecutor

        self.root = Path(root)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opscan-align-write") \
            if threads else None
        self._futures: list = []
        self._last: dict = {}  # construct/stack.json -> (bytes, path, object) of the step submitted last

    def submit(self, dump: StepDump, files: dict[str, bytes] | None = None) -> Path:
        """Queue `dump`; returns the folder it will be in (step{N}/rank{R}). files: its three
        files' bytes when the caller has them already (`dump.encode` is not called)."""
        self._check()
        if files is None:
            files = self.encode(dump)
        d = self.root / f"step{dump.step}" / f"rank{dump.rank}"
        same_as = {n: p for n, (b, p, obj) in self._last.items() if files.get(n) is b or files.get(n) == b}
        if self._pool is None:
            dump.write(self.root, files, same_as)
        else:
            self._futures.append(self._pool.submit(dump.write, self.root, files, same_as))
        self._last = {"construct.json": (files["construct.json"], d / "construct.json", dump.construct),
                      "stack.json": (files["stack.json"], d / "stack.json", dump.stack)}
        return d

    def encode(self, dump: StepDump) -> dict[str, bytes]:
        """`dump`'s three files, construct.json and stack.json reusing the last step's bytes
        when equal."""
        return dump.encode({n: (obj, b) for n, (b, p, obj) in self._last.items()})

    def _check(self) -> None:
        done = [f for f in self._futures if f.done()]
        for f in done:
            self._futures.remove(f)
            f.result()  # re-raises the writer's error here

    def close(self, quiet: bool = False) -> None:
        """Wait for every queued step; raise the first error (quiet: an error is already
        on its way up; wait, raise nothing)."""
        try:
            for f in self._futures:
                if quiet:
                    f.exception()
                else:
                    f.result()
        finally:
            self._futures.clear()
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    def __enter__(self) -> "StepWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _num(name: str, prefix: str) -> int:
    m = re.fullmatch(prefix + r"(\d+)", name)
    return int(m.group(1)) if m else -1


def find_rank_dir(root: Path, step: int | None = None, rank: int | None = None) -> Path:
    """The folder holding dump.json: root itself, root/rank*, or root/step*/rank*|proc*."""
    root = Path(root)
    if (root / "dump.json").is_file():
        return root
    if root.is_file() and root.name == "dump.json":
        return root.parent
    if not root.is_dir():
        raise OpscanError(f"{root}: no such dump directory",
                          hint="pass a folder written by `opscan align dump` or msprobe")
    steps = sorted((p for p in root.iterdir() if p.is_dir() and _num(p.name, "step") >= 0),
                   key=lambda p: _num(p.name, "step"))
    base = root
    if steps:
        base = steps[0] if step is None else root / f"step{step}"
        if step is not None and not base.is_dir():
            have = ", ".join(str(_num(p.name, "step")) for p in steps[:20])
            raise OpscanError(f"{root}: no step {step} in this dump (it has step {have})",
                              hint="pick one of those with --step")
    ranks = sorted(p for p in base.iterdir() if p.is_dir() and (p / "dump.json").is_file()
                   and (p.name.startswith("rank") or p.name.startswith("proc"))) if base.is_dir() else []
    if rank is not None:
        ranks = [p for p in ranks if p.name in (f"rank{rank}",)] or ranks
    if not ranks:
        raise OpscanError(f"{root}: no step*/rank*/dump.json inside",
                          hint="pass a folder written by `opscan align dump` or msprobe")
    return ranks[0]


def step_numbers(root: Path) -> list[int]:
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(_num(p.name, "step") for p in root.iterdir()
                  if p.is_dir() and _num(p.name, "step") >= 0)


def _load(path: Path, default=None):
    if not path.is_file():
        if default is not None:
            return default
        raise OpscanError(f"{path}: missing", hint="the dump folder is incomplete; dump again")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise OpscanError(f"{path}: not readable JSON ({e.__class__.__name__}: {e})",
                          hint="the dump is corrupt; dump again") from None


def read_step(root: Path, step: int | None = None, rank: int | None = None) -> StepDump:
    d = find_rank_dir(root, step, rank)
    dump = _load(d / "dump.json")
    if not isinstance(dump, dict) or not isinstance(dump.get("data"), dict):
        raise OpscanError(f"{d / 'dump.json'}: no \"data\" object",
                          hint="not an msprobe/opscan statistics dump")
    construct = _load(d / "construct.json", {})
    if isinstance(construct, dict) and "megatron_micro_step_number" in construct:
        construct = {k: (v[0] if isinstance(v, list) else v) for k, v in construct.items()
                     if k != "megatron_micro_step_number"}
    stack = _load(d / "stack.json", {})
    step_no = _num(d.parent.name, "step")
    rank_no = _num(d.name, "rank")
    return StepDump(step=max(step_no, 0), rank=max(rank_no, 0),
                    framework=str(dump.get("framework") or "pytorch"),
                    level=str(dump.get("level") or "L0"), data=dump["data"],
                    construct=construct if isinstance(construct, dict) else {}, stack=stack)


def read_meta(root: Path) -> dict:
    """opscan's run record, or {} for an msprobe dump."""
    p = Path(root) / META_NAME
    if not p.is_file():
        return {}
    meta = _load(p)
    return meta if isinstance(meta, dict) else {}


def clear_previous_dump(out: Path) -> list[str]:
    """What an earlier dump wrote into `out` (step<N>/ folders, inputs/, opscan_align.json),
    removed before a --force dump writes its own: left there, a shorter or input-less new
    dump would be read with the old one's steps or saved inputs. Other files stay. Returns
    the names removed."""
    import re
    import shutil

    gone = []
    for p in sorted(Path(out).iterdir()) if Path(out).is_dir() else ():
        ours = (p.is_dir() and not p.is_symlink() and (re.fullmatch(r"step\d+", p.name) or p.name == "inputs")
                or p.name == META_NAME)
        if ours:
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
            gone.append(p.name)
    return gone


def check_output_dir(out: Path, force: bool) -> None:
    """Refuse a non-empty output folder unless forced, and what fsio.check_out_dir refuses
    (a file at the path or up it, an unwritable parent), before any user code runs."""
    from opdb.fsio import check_out_dir

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OpscanError(f"{out}: exists and is not a directory", hint="pass a folder with -o")
    check_out_dir(out, "-o/--output")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise OpscanError(f"{out}: exists and is not empty", hint="pass --force to overwrite, or another -o")


def rel(path, start) -> str:
    try:
        return os.path.relpath(path, start)
    except ValueError:
        return str(path)
