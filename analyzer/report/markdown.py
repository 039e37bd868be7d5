"""report.md: the summary line, counts, fallback cost, gap table, not-a-kernel ops, notes and
provenance, as GitHub-flavoured Markdown for an issue or a PR (templates/report/report.md.j2)."""
from __future__ import annotations

import re

from analyzer.report import common
from analyzer.report.json_report import normalize


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def md_text(text) -> str:
    """One line of plain text that cannot open raw HTML: `complex<float>` is shown, not
    swallowed as a tag (`<` before a letter becomes `&lt;`; `<->` stays as written)."""
    return _TAG_START.sub("&lt;", " ".join(x.strip() for x in str(text).splitlines()))


def md_cell(text) -> str:
    """Plain text safe inside a table cell: pipes escaped, newlines as <br>, no raw HTML."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|")
    return "<br>".join(md_text(line) for line in s.splitlines())


def md_code(text) -> str:
    """A code span safe inside a table cell ('' stays empty)."""
    s = str(text)
    if not s:
        return ""
    fence = "``" if "`" in s else "`"
    return f"{fence}{s.replace('|', chr(92) + '|')}{fence}"


def render_markdown(report: dict) -> str:
    r = normalize(report)
    env = common.template_env(autoescape=False)
    env.filters.update(
        cell=md_cell, text=md_text, code=md_code, hbytes=common.human_bytes,
        codes=lambda xs: ", ".join(md_code(x) for x in xs),
        lines=lambda xs: "<br>".join(md_cell(x) for x in xs))
    nak = common.sorted_verdicts(r, ("not-a-kernel",))
    supported = common.sorted_verdicts(r, ("supported",))
    text = env.get_template("report.md.j2").render(
        r=r, title=common.title(r), banner=common.partial_banner(r),
        count_rows=common.count_rows(r), help=common.CATEGORY_HELP, gaps=common.gaps(r),
        nak=nak, supported=supported, details=common.detail_lines, opgen=common.opgen_commands,
        groups=common.island_groups(r), group_line=common.group_line,
        setup=common.setup_verdicts(r))
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"
