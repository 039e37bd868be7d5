"""The one C++ lexer the ingesters share: where comments, literals and preprocessor lines are.

`lex(text)` finds, in one linear pass,
- comments: `// ...` (continued by a backslash-newline) and `/* ... */`;
- string and character literals, with encoding prefixes (`u8`, `u`, `U`, `L`) and escapes,
  ending at an unescaped newline when unterminated; raw strings `R"delim( ... )delim"`
  (also `u8R`, `LR`, ...), which may span lines and contain quotes and backslashes;
- digit separators (`1'000'000`, `0x7fff'ffff`), which are not character literals;
- preprocessor lines (`#` first on a line), with backslash-newline continuations.
Comments and literals inside preprocessor lines are found too.

`Lexed.blank(...)` returns the text with chosen spans replaced by spaces, keeping every
newline and offset, so a position means the same in the source and in every view.
`LineIndex` turns offsets into 1-based line numbers in O(log n).
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

# One pass: the next interesting token from `pos`. Order matters (raw before string,
# numbers before character literals).
_TOKEN = re.compile(r"""
    (?P<pp>^[ \t]*\#)
  | (?P<lc>//)
  | (?P<bc>/\*)
  | (?P<raw>(?<![\w])(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\()
  | (?P<num>(?<![\w.])\.?[0-9](?:[\w.]|'(?=\w)|[eEpP][+-])*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<str>")
  | (?P<chr>')
""", re.M | re.X)
_STR_BODY = re.compile(r'(?:[^"\\\n]|\\.)*', re.S)
_CHR_BODY = re.compile(r"(?:[^'\\\n]|\\.)*", re.S)
_LOGICAL_EOL = re.compile(r"(?<!\\)\n")
_LINE_COMMENT_END = re.compile(r"(?<!\\)\n")
_NOT_NEWLINE = re.compile(r"[^\n]")


@dataclass
class Lexed:
    """Spans found in `text` (start, end offsets; end exclusive)."""

    text: str
    comments: list[tuple[int, int]] = field(default_factory=list)
    # literal contents, quotes (and raw-string delimiters) excluded; kind "str", "chr", "raw"
    literals: list[tuple[int, int, str]] = field(default_factory=list)
    preproc: list[tuple[int, int]] = field(default_factory=list)

    def blank(self, comments: bool = True, literals: bool = False, preproc: bool = False) -> str:
        """`text` with the chosen spans replaced by spaces (newlines kept)."""
        spans: list[tuple[int, int]] = []
        if comments:
            spans += self.comments
        if literals:
            spans += [(a, b) for a, b, _ in self.literals]
        if preproc:
            spans += self.preproc
        return blank_spans(self.text, spans)

    def comment_texts(self) -> list[tuple[int, str]]:
        """(end offset, text) of every comment, in order."""
        return [(b, self.text[a:b]) for a, b in self.comments]

    def string_texts(self) -> list[str]:
        """Contents of string literals (plain and raw), in order."""
        return [self.text[a:b] for a, b, kind in self.literals if kind != "chr"]


def split_top_level(text: str, brackets: str = "(<[{") -> list[str]:
    """`text` cut at the commas outside every bracket pair of `brackets` (openers; their
    closers follow), parts unstripped, the last part always kept: the one splitter for
    C++ parameter lists and schema argument lists (pass "([" where `->` may occur)."""
    closers = {"(": ")", "<": ">", "[": "]", "{": "}"}
    opens, closes = set(brackets), {closers[b] for b in brackets}
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with `spans` (possibly overlapping) replaced by spaces, newlines kept."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        if b <= pos:
            continue
        a = max(a, pos)
        out.append(text[pos:a])
        out.append(_NOT_NEWLINE.sub(" ", text[a:b]))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def lex(text: str) -> Lexed:
    """Find comments, literals and preprocessor lines of C++ `text` in one pass."""
    res = Lexed(text)
    n = len(text)
    pos = 0
    pp_end = -1
    while pos < n:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        kind = m.lastgroup if m.lastgroup != "delim" else "raw"
        start = m.start()
        if kind == "pp":
            if start < pp_end:  # a `#` inside a preprocessor line (stringizing): not a new one
                pos = m.end()
                continue
            eol = _LOGICAL_EOL.search(text, m.end())
            pp_end = n if eol is None else eol.start()
            res.preproc.append((start, pp_end))
            pos = m.end()  # keep lexing inside the directive: its comments and strings
        elif kind == "lc":
            eol = _LINE_COMMENT_END.search(text, start)
            end = n if eol is None else eol.start()
            res.comments.append((start, end))
            pos = end
        elif kind == "bc":
            close = text.find("*/", start + 2)
            end = n if close < 0 else close + 2
            res.comments.append((start, end))
            pos = end
        elif kind == "raw":
            delim = m.group("delim")
            close = text.find(")" + delim + '"', m.end())
            if close < 0:
                res.literals.append((m.end(), n, "raw"))
                pos = n
            else:
                res.literals.append((m.end(), close, "raw"))
                pos = close + len(delim) + 2
        elif kind in ("str", "chr"):
            body = (_STR_BODY if kind == "str" else _CHR_BODY).match(text, m.end())
            end = body.end()
            res.literals.append((m.end(), end, kind))
            pos = end + 1 if end < n and text[end] == ('"' if kind == "str" else "'") else end
        else:  # num, ident: skip whole tokens (digit separators stay inside numbers)
            pos = m.end()
    return res


class LineIndex:
    """1-based line numbers of offsets in one text, by binary search over newline offsets."""

    def __init__(self, text: str):
        self._nl = [m.start() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self._nl, offset) + 1
