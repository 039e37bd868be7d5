"""Call-site lines for stack.json: the user's own frames, in msprobe's spelling."""
from __future__ import annotations

import linecache
import sys


def user_stack(limit: int = 12) -> list[str]:
    """msprobe's stack lines ("File f, line n, in fn, \\n code") of the user's frames only."""
    from analyzer.align.loader import is_user_file

    lines = []
    f = sys._getframe(2)
    while f is not None and len(lines) < limit:
        co = f.f_code
        if is_user_file(co.co_filename):
            code = linecache.getline(co.co_filename, f.f_lineno).strip()
            lines.append(f"File {co.co_filename}, line {f.f_lineno}, in {co.co_name}, \n {code}")
        f = f.f_back
    return lines
