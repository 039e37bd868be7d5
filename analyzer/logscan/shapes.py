"""The log lines Paddle, torch_npu and CANN print when an op falls back to the CPU or fails,
as regexes over one decoded line (glog prefixes such as `I1121 22:40:32.227588  4331
kernel_factory.cc:123] ` and `[W VariableFallbackKernel.cpp:51] ` may precede them).

Each shape has byte `triggers`: substrings every matching line contains, found with
`bytes.find` over whole chunks, so the reader only decodes and matches candidate lines.

Paddle (GLOG_v=3; paddle/phi/core/kernel_factory.cc, operator.cc, pd_op_to_kernel_pass.cc):
  missing <backend> kernel: <kernel>, expected_kernel_key:<key>, fallbacking to CPU one!
  phi missing <backend> kernel: <kernel>, expected_kernel_key:<key>, fallback to CPU one!
  phi in black list <backend> kernel: <kernel>, ...      (also `fluid missing <key> kernel: <k>`)
  The kernel with key <key> of kernel `<kernel>` is not registered and fail to fallback ...
  Can not fallback <kernel> from custom_device to CPU, no CPU kernel found for kernel key = <key>.
  (`fallingback`, the misspelling used in guides, is accepted too.)
torch_npu / CANN:
  Warning: CAUTION: The operator 'aten::<op>' is not currently supported on the NPU backend
    and will fall back to run on the CPU. ...
  Could not run 'aten::<op>' with arguments from the '<NPU|PrivateUse1|NPUTensorId>' backend
  Op type <Type> of ops kernel AIcoreEngine is unsupported   (also `Op type[<Type>] ...`)
  aclnnXxx ... not in libopapi.so                            (a CANN version skew)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# a kernel key: `(npu, Undefined(AnyLayout), float32)`, one level of nested parentheses
_KEY = r"\((?:[^()\n]|\([^()\n]*\))*\)"
KINDS = ("fallback", "blacklisted", "failed", "cann-unsupported", "cann-skew")


@dataclass(frozen=True)
class Shape:
    name: str
    framework: str
    kind: str  # one of KINDS
    regex: re.Pattern
    triggers: tuple[bytes, ...]
    text_triggers: tuple[str, ...] = ()
    bregex: re.Pattern | None = None  # the same pattern over raw bytes (undecoded lines)

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

    @property
    def dtype(self) -> str:
        """The dtype of a Paddle kernel key `(npu, Undefined(AnyLayout), float32)`."""
        if not self.key.startswith("("):
            return ""
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
    Shape("torch-cpu-fallback", "torch", "fallback", _rx(
        r"The operator '(?P<op>[\w:.]+)' is not currently supported on the (?P<backend>\w+) "
        r"backend and will fall back to run on the CPU"), (b"will fall back to run on the CPU",)),
    Shape("torch-could-not-run", "torch", "failed", _rx(
        r"Could not run '(?P<op>[\w:.]+)' with arguments from the '(?P<backend>\w+)' backend"),
        (b"Could not run '",)),
    Shape("cann-op-unsupported", "torch", "cann-unsupported", _rx(
        r"Op type\s*\[?(?P<op>\w+)\]? of ops kernel\s*\[?(?P<backend>\w+)\]? is unsupported"),
        (b"of ops kernel",)),
    Shape("cann-libopapi", "torch", "cann-skew", _rx(
        r"(?P<op>aclnn[A-Za-z0-9_]+?)(?:GetWorkspaceSize)?\b[^\n]*?not in libopapi\.so"),
        (b"libopapi.so",)),
)


def shapes_for(framework: str) -> tuple[Shape, ...]:
    return tuple(s for s in SHAPES if s.framework == framework)


def _hit(s: Shape, g: dict) -> Hit:
    backend, key = (g.get("backend") or "").strip(), (g.get("key") or "").strip()
    if backend.startswith("("):  # `fluid missing <key> kernel: <k>` names the key
        key = key or backend
        backend = backend[1:].split(",", 1)[0].strip()
    return Hit(s.name, g["op"], s.kind, backend, key)


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
