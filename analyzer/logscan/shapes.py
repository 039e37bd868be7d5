"""The log lines Paddle, torch_npu and CANN print when an op falls back to the CPU or fails,
as regexes over one decoded line (glog prefixes such as `I1121 22:40:32.227588  4331
kernel_factory.cc:123] ` and `[W VariableFallbackKernel.cpp:51] ` may precede them).

Each shape has byte `triggers`: substrings every matching line contains, found with
`bytes.find` over whole chunks, so the reader only decodes and matches candidate lines.
What real logs wrap around the lines (from the public excerpts in tests/fixtures/logs/public/):
any prefix (`[rank3]:`, vLLM's `(EngineCore_DP0 pid=...) ERROR ... [file.py:58] `, prose), ANSI
codes (dropped), a log embedded in a JSON string (split at its escaped `\\n`), a line wrapped at
a fixed width (`match_wrapped` joins it with up to `JOIN_LINES` following lines; `heads` make
its first part a candidate), CRLF.

Paddle (GLOG_v=3; paddle/phi/core/kernel_factory.cc, operator.cc, pd_op_to_kernel_pass.cc):
  missing <backend> kernel: <kernel>, expected_kernel_key:<key>, fallbacking to CPU one!
  phi missing <backend> kernel: <kernel>, expected_kernel_key:<key>, fallback to CPU one!
  phi in black list <backend> kernel: <kernel>, ...      (also `fluid missing <key> kernel: <k>`)
  The kernel with key <key> of kernel `<kernel>` is not registered and fail to fallback ...
  Can not fallback <kernel> from custom_device to CPU, no CPU kernel found for kernel key = <key>.
  (`fallingback`, the misspelling used in guides, is accepted too.)
  There are no kernels which are registered in the <op> operator.          (fluid, older)
  op [pd_op.<op>] kernel output args (0) defs should equal op outputs (1)  (PIR kernel pass)
  [operator < <op> > error]   (the op an error was raised in; a trailer: one event with the
                               failure of the same op just above it)
torch_npu / CANN:
  Warning: CAUTION: The operator 'aten::<op>' is not currently supported on the NPU backend
    and will fall back to run on the CPU. ...                 (also `run on CPU`)
  Could not run 'aten::<op>' with arguments from the '<NPU|PrivateUse1|NPUTensorId>' backend
  Op type <Type> of ops kernel AIcoreEngine is unsupported   (also `Op type[<Type>] ...`,
    and CANN 8's `Optype [<Type>] of Ops kernel [<engine>] is unsupported. Reason: ...`)
  aclnnXxx ... not in libopapi.so                            (a CANN version skew)
  ... NPU function error: call aclnnXxx failed, error code is 161002   (kind npu-error)
  RuntimeError: call aclnnXxx failed, detail:EZ1001: ... not implemented for DT_BFLOAT16
  ... AclNN_Parameter_Error(EZ1001): Tensor scale not implemented for DT_FLOAT16, ...
                        (a detail: the dtype of the aclnn failure just above, no event itself)
  Warning: Device do not support double dtype now, dtype cast repalce with float.
                                                             (kind dtype-cast, op double->float)
A runtime API's `NPU function error: aclrtXxx, error code is N` names no op and is not read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# a kernel key: `(npu, Undefined(AnyLayout), float32)`, one level of nested parentheses
_KEY = r"\((?:[^()\n]|\([^()\n]*\))*\)"
KINDS = ("fallback", "blacklisted", "failed", "npu-error", "dtype-cast", "cann-unsupported",
         "cann-skew")


@dataclass(frozen=True)
class Shape:
    name: str
    framework: str
    kind: str  # one of KINDS
    regex: re.Pattern
    triggers: tuple[bytes, ...]
    text_triggers: tuple[str, ...] = ()
    bregex: re.Pattern | None = None  # the same pattern over raw bytes (undecoded lines)
    # trailer: the line only names the op of the error reported just before it (Paddle's
    # `[operator < X > error]` after the message), so it adds no event when that op's
    # failure was read from the lines right above
    trailer: bool = False
    # detail: the line only adds the dtype to the event of the same kind just above it (the
    # `AclNN_Parameter_Error(EZ1001): ... not implemented for DT_X` line under a failed aclnn
    # call); alone it is no event
    detail: bool = False
    # heads: text a line starts the shape with, so a line a terminal or `docker logs` wrapped
    # at a fixed width (the shape's tail, with its trigger, on the next lines) is a candidate
    heads: tuple[bytes, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "text_triggers", tuple(t.decode("ascii") for t in self.triggers))
        object.__setattr__(self, "bregex", re.compile(self.regex.pattern.encode("ascii")))


@dataclass(frozen=True)
class Hit:
    """One recognised line: the op (kernel name / aten op / CANN op type), what happened,
    and the key or backend when the line gives one."""

    shape: str
    op: str
    kind: str
    backend: str = ""
    key: str = ""
    dt: str = ""  # a dtype the line names outside a kernel key (`DT_BFLOAT16` -> bfloat16)

    @property
    def dtype(self) -> str:
        """The dtype of a Paddle kernel key `(npu, Undefined(AnyLayout), float32)`, else the
        one the line names."""
        if not self.key.startswith("("):
            return self.dt
        last = self.key[1:-1].rsplit(",", 1)[-1].strip()
        return last if re.fullmatch(r"[a-z]+[0-9]*(?:_[a-z0-9]+)*", last) else ""


def _rx(p: str) -> re.Pattern:
    return re.compile(p, re.ASCII)


SHAPES: tuple[Shape, ...] = (
    Shape("paddle-missing", "paddle", "fallback", _rx(
        r"missing (?P<backend>" + _KEY + r"|[\w:]+) kernel: (?P<op>\w+)"
        r"(?:, expected_kernel_key:\s*(?P<key>" + _KEY + r"))?"), (b"missing ",)),
    Shape("paddle-black-list", "paddle", "blacklisted", _rx(
        r"in black list (?P<backend>" + _KEY + r"|[\w:]+) kernel: (?P<op>\w+)"
        r"(?:, expected_kernel_key:\s*(?P<key>" + _KEY + r"))?"), (b"in black list ",)),
    Shape("paddle-not-registered", "paddle", "failed", _rx(
        r"The kernel with key (?P<key>" + _KEY + r") of kernel `(?P<op>\w+)` is not registered"),
        (b"The kernel with key ",)),
    Shape("paddle-pir-no-cpu", "paddle", "failed", _rx(
        r"Can not fallback (?P<op>\w+) from custom_device to CPU, no CPU kernel found for "
        r"kernel key = (?P<key>" + _KEY + r")"), (b"Can not fallback ",)),
    Shape("paddle-no-kernels", "paddle", "failed", _rx(
        r"There are no kernels which are registered in the (?P<op>\w+) operator"),
        (b"There are no kernels which are registered in the ",)),
    Shape("paddle-pir-kernel-args", "paddle", "failed", _rx(
        r"op \[(?:\w+\.)?(?P<op>\w+)\] kernel output args"),
        (b"] kernel output args",)),
    Shape("paddle-operator-error", "paddle", "failed", _rx(
        r"\[operator < (?P<op>\w+) > error\]"), (b"[operator < ",), trailer=True),
    Shape("torch-cpu-fallback", "torch", "fallback", _rx(
        r"The operator '(?P<op>[\w:.]+)' is not currently supported on the (?P<backend>\w+) "
        r"backend and will fall back to run on (?:the )?CPU"), (b"will fall back to run on ",),
        heads=(b"The operator '",)),
    Shape("torch-aclnn-call", "torch", "npu-error", _rx(
        r"call (?P<op>aclnn[A-Za-z0-9_]+) failed(?:[^\n]*?not implemented for "
        r"DT_(?P<dt>[A-Z0-9_]+))?"), (b"call aclnn",)),
    Shape("torch-aclnn-dtype-detail", "torch", "npu-error", _rx(
        r"AclNN_\w+\(E[A-Z0-9]+\):[^\n]*?not implemented for DT_(?P<dt>[A-Z0-9_]+)"),
        (b"not implemented for DT_",), detail=True),
    Shape("torch-double-cast", "torch", "dtype-cast", _rx(
        r"Device do not support (?P<src>\w+) dtype now, dtype cast \w+ with (?P<dst>\w+)"),
        (b" dtype now, dtype cast ",)),
    Shape("torch-could-not-run", "torch", "failed", _rx(
        r"Could not run '(?P<op>[\w:.]+)' with arguments from the '(?P<backend>\w+)' backend"),
        (b"Could not run '",)),
    Shape("cann-op-unsupported", "torch", "cann-unsupported", _rx(
        r"Op ?type\s*\[?(?P<op>\w+)\]? of [Oo]ps kernel\s*\[?(?P<backend>\w+)\]? is unsupported"),
        (b"of ops kernel", b"of Ops kernel")),
    Shape("cann-libopapi", "torch", "cann-skew", _rx(
        r"(?P<op>aclnn[A-Za-z0-9_]+?)(?:GetWorkspaceSize)?\b[^\n]*?not in libopapi\.so"),
        (b"libopapi.so",)),
)


def shapes_for(framework: str) -> tuple[Shape, ...]:
    return tuple(s for s in SHAPES if s.framework == framework)


_DT = {"float": "float32", "double": "float64", "half": "float16"}


def _hit(s: Shape, g: dict) -> Hit:
    backend, key = (g.get("backend") or "").strip(), (g.get("key") or "").strip()
    if backend.startswith("("):  # `fluid missing <key> kernel: <k>` names the key
        key = key or backend
        backend = backend[1:].split(",", 1)[0].strip()
    dt = (g.get("dt") or "").lower()
    op = g.get("op") or (f"{g['src']}->{g['dst']}" if "src" in g else "")  # a cast: two dtypes
    return Hit(s.name, op, s.kind, backend, key, _DT.get(dt, dt))


JOIN_LINES = 3  # continuation lines tried for a wrapped line (a 250-character line at 80 columns)
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")


def candidate_triggers(shapes: tuple[Shape, ...]) -> tuple[bytes, ...]:
    """Every substring that makes a line a candidate: the triggers and the heads."""
    return tuple(sorted({t for s in shapes for t in (*s.triggers, *s.heads)}))


def _segments(raw: bytes) -> list[bytes]:
    """A physical line as the lines it holds: ANSI colour/cursor codes dropped, and split at
    literal `\\n`, the escaped newlines of a log embedded in a JSON or repr string."""
    if b"\x1b" in raw:
        raw = _ANSI.sub(b"", raw)
    return raw.split(b"\\n") if b"\\n" in raw else [raw]


def match_all(raw: bytes, shapes: tuple[Shape, ...]) -> list[Hit]:
    """Every event of one physical line: each embedded line (see `_segments`), and in each
    every non-overlapping match of any shape, in line order (a log flattened onto one line by
    a web form or a quote holds several); where two shapes' matches overlap the earlier, and
    then the shape listed first, wins."""
    segs = _segments(raw) if b"\x1b" in raw or b"\\n" in raw else (raw,)
    out = []
    for seg in segs:
        found = []
        for order, s in enumerate(shapes):
            for t in s.triggers:
                if t in seg:
                    break
            else:
                continue
            m = s.bregex.search(seg)
            while m is not None:
                found.append((m.start(), order, m.end(), s, m))
                m = s.bregex.search(seg, m.end()) if m.end() < len(seg) else None
        if len(found) > 1:
            found.sort(key=lambda f: f[:2])
        end = -1
        for start, _, stop, s, m in found:
            if start < end:
                continue
            end = stop
            out.append(_hit(s, {k: v.decode("utf-8", "replace").replace("\x00", "")
                                for k, v in m.groupdict().items() if v}))
    return out


def headed(raw: bytes, shapes: tuple[Shape, ...]) -> tuple[Shape, ...]:
    """The shapes whose head the line holds: the only ones a wrapped line is tried for."""
    return tuple(s for s in shapes if any(h in raw for h in s.heads))


def match_wrapped(raw: bytes, conts: list[bytes], shapes: tuple[Shape, ...]
                  ) -> tuple[Hit | None, int, bytes]:
    """A line that matches nothing alone and holds a shape's head, joined with up to
    `JOIN_LINES` following lines as a fixed-width wrap splits one (no separator: the wrap can fall mid-word, carriage returns
    dropped): the hit, how many continuation lines it used and the joined line, or
    (None, 0, b""). The match must start on the first line and
    end past it, and a continuation line that matches alone is never used."""
    shapes = headed(raw, shapes)
    if not shapes:
        return None, 0, b""
    raw = _ANSI.sub(b"", raw) if b"\x1b" in raw else raw
    joined = raw.rstrip(b"\r")
    first = len(joined)
    for n, c in enumerate(conts[:JOIN_LINES], 1):
        if match_all(c, shapes):
            break
        c = _ANSI.sub(b"", c) if b"\x1b" in c else c
        joined += c.rstrip(b"\r")
        for s in shapes:
            m = s.bregex.search(joined)
            if m and m.start() < first < m.end():
                return _hit(s, {k: v.decode("utf-8", "replace").replace("\x00", "")
                                for k, v in m.groupdict().items() if v}), n, joined
    return None, 0, b""


def match_bytes(raw: bytes, shapes: tuple[Shape, ...]) -> Hit | None:
    """`match_line` on an undecoded line: near misses are rejected without decoding
    (the patterns are ASCII; captured bytes are decoded with errors replaced)."""
    for s in shapes:
        for t in s.triggers:
            if t in raw:
                break
        else:
            continue
        m = s.bregex.search(raw)
        if m:
            return _hit(s, {k: v.decode("utf-8", "replace").replace("\x00", "")
                            for k, v in m.groupdict().items() if v})
    return None


def match_line(line: str, shapes: tuple[Shape, ...]) -> Hit | None:
    """The first shape that matches `line` (one decoded log line), or None."""
    for s in shapes:
        if not any(t in line for t in s.text_triggers):
            continue
        m = s.regex.search(line)
        if m:
            return _hit(s, m.groupdict())
    return None
