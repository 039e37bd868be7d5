"""Call-site lines for stack.json: the user's own frames, in msprobe's spelling.

A module's call site is captured once per run, when the module is first called, as raw
(file, line, function) triples (a frame walk, no file access); the user's frames are
picked and formatted when the step is written, once per module path.
"""
from __future__ import annotations

import linecache
import sys


def raw_stack(depth: int = 2, limit: int = 64) -> tuple:
    """(file, line, function) of the caller's frames, innermost first."""
    out = []
    f = sys._getframe(depth)
    while f is not None and len(out) < limit:
        out.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    return tuple(out)


def user_lines(raw, limit: int = 12) -> list[str]:
    """msprobe's stack lines ("File f, line n, in fn, \\n code") of the user's frames only."""
    from analyzer.align.loader import is_user_file

    lines = []
    for filename, lineno, name in raw:
        if len(lines) >= limit:
            break
        if is_user_file(filename):
            code = linecache.getline(filename, lineno).strip()
            lines.append(f"File {filename}, line {lineno}, in {name}, \n {code}")
    return lines


def user_stack(limit: int = 12) -> list[str]:
    """The user's frames of the caller's stack, formatted now."""
    return user_lines(raw_stack(3), limit)


class StackSites:
    """Module path -> call site, for one recorder: `seen(path, key)` at each call (cheap
    after the first), `stack_json()` at the end of a step: {"0": [[call keys], [lines]]},
    call keys grouped by identical call-site lines, in first-call order."""

    def __init__(self):
        self._raw: dict = {}  # path -> raw_stack() of its first call in this run
        self._lines: dict = {}  # path -> formatted lines
        self._keys: list = []  # (path, first call key of this step)
        self._step_paths: set = set()
        self._last: tuple = (None, None)  # (keys, stack.json object) of the step before

    def begin_step(self) -> None:
        self._keys = []
        self._step_paths = set()

    def seen(self, path: str, key: str) -> None:
        if path in self._step_paths:
            return
        self._step_paths.add(path)
        if path not in self._raw:
            self._raw[path] = raw_stack(3)
        self._keys.append((path, key))

    def stack_json(self) -> dict:
        """This step's stack.json object. The same calls as the step before (a step of a
        deterministic model) give that step's groups again without grouping them anew,
        in a new dict: the writer re-encodes an object it has seen before, which may have
        changed in place (layout.StepDump.encode)."""
        last_keys, last = self._last
        if last is not None and self._keys == last_keys:
            return dict(last)
        groups: dict = {}
        for path, key in self._keys:
            lines = self._lines.get(path)
            if lines is None:
                lines = self._lines[path] = user_lines(self._raw[path])
            groups.setdefault(tuple(lines), (lines, []))[1].append(key)
        out = {str(i): [keys, lines] for i, (lines, keys) in enumerate(groups.values())}
        self._last = (self._keys, out)
        return dict(out)
