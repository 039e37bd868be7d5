"""Errors users can act on: one line naming the problem and the fix."""
from __future__ import annotations

import re


def one_line(text) -> str:
    """`text` on one line: a newline (with the spaces around it) becomes one space, so
    wrapped library messages (PyYAML's, sqlite's) never break the one-line error."""
    return re.sub(r"\s*[\r\n]+\s*", " ", str(text).strip())


MAX_LINE = 2000


def shorten(line: str, limit: int = MAX_LINE) -> str:
    """`line` cut in the middle when longer than `limit` characters: an error that quotes a
    200 KB input (a list file's one line, a huge argument) stays readable, and its end, the
    hint with the fix, is kept."""
    if len(line) <= limit:
        return line
    head, tail = limit * 2 // 3, limit // 3
    return f"{line[:head]} [... {len(line) - head - tail} characters cut ...] {line[-tail:]}"


class OpscanError(Exception):
    """Base of every user-facing error. `str(err)` is the one line the CLI prints."""

    exit_code = 1

    def __init__(self, message: str, hint: str = ""):
        message, hint = one_line(message), one_line(hint)
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def cli_line(self) -> str:
        """The one line a command prints for this error (subclasses with more to say, such
        as the user's frames, keep it to one line here)."""
        return str(self)


class ParseError(OpscanError):
    """A source file is malformed: names file and line."""

    def __init__(self, path, line: int | None, message: str, hint: str = ""):
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}", hint)
        self.path = str(path)
        self.line = line


class NotFound(OpscanError):
    """A name (op, API, target) is not in opdb."""


class UnknownName(NotFound):
    """A name the user typed exists in no catalog (usage error: exit 2, closest matches)."""

    exit_code = 2


class OutputExists(OpscanError):
    """An output path exists and --force was not given."""
