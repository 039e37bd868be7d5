"""The command line of an extractor over a bare git clone of Ascend/op-plugin
(extract_call_limits, extract_mode_routes, extract_value_routes): `--repo DIR` (required)
and `--check`; rows written one JSON object per line, sorted keys."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

from opdb.fsio import write_or_check
from opdb.git_read import GitError


def main(argv, description: str, extract: Callable[[Path], list[dict]], commit: str,
         out: Path, name: str, what: str) -> int:
    """Parse `argv`, run `extract(repo)` and write (or `--check`) `out`; a git error is one
    line on stderr naming what --repo must hold, exit 2."""
    from opdb import clikit

    prog = f"python -m opdb.sources.torch.{name}"
    ap = clikit.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--repo", type=clikit.path_type, required=True, help="bare git dir of Ascend/op-plugin")
    ap.add_argument("--check", action="store_true", help="compare with the shipped file")
    args = ap.parse_args(argv)
    try:
        rows = extract(args.repo)
    except GitError as e:
        print(f"{prog}: error: {e} (--repo takes a bare git clone of Ascend/op-plugin "
              f"holding {commit[:8]})", file=sys.stderr)
        return 2
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)
    return write_or_check(out, text, args.check, name, what)
