"""Errors the analyzer raises about the user's model file (CLI exit status 2)."""
from __future__ import annotations

import re

from opdb.errors import OpscanError

_FRAME = re.compile(r'\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>.*)$')


class ModelError(OpscanError):
    """The user's model file cannot be loaded or run.

    `message` is one line naming the file and the problem; `frames` are the user's own
    traceback frames (`  File "model.py", line 12, in build` plus the code line), never
    frames from opscan, torch, paddle or the standard library. `str(err)` is the line
    (with the hint) followed by those frames (what a partial report's `error` holds);
    `cli_line()` is what a command prints on stderr: one line naming the innermost frame.
    """

    exit_code = 2

    def __init__(self, message: str, hint: str = "", frames: list[str] | None = None,
                 path: str = ""):
        super().__init__(message, hint)
        self.frames = list(frames or [])
        self.path = path

    def __str__(self) -> str:
        head = super().__str__()
        return "\n".join([head, *self.frames]) if self.frames else head

    def where(self) -> str:
        """`model.py:7 in make_layer: <code>` for the innermost user frame ("" if none)."""
        for i in range(len(self.frames) - 1, -1, -1):
            m = _FRAME.match(self.frames[i])
            if m:
                code = self.frames[i + 1].strip() if i + 1 < len(self.frames) else ""
                if _FRAME.match(code) or code.startswith("["):
                    code = ""
                code = code if len(code) <= 100 else code[:100] + "..."
                return f"{m['file']}:{m['line']} in {m['func']}" + (f": {code}" if code else "")
        return ""

    def cli_line(self) -> str:
        where = self.where()
        notes = [n for n in (f"at {where}" if where else "", self.hint,
                             "OPSCAN_DEBUG=1 prints every frame" if len(self.frames) > 2 else "") if n]
        return f"{self.message} ({'; '.join(notes)})" if notes else self.message
