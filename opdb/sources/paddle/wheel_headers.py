"""The command line of an extractor that reads the installed Paddle wheel's headers
(extract_phi_flag_wrappers, extract_phi_view_kernels): `--include DIR` (default: the
installed paddle's include dir) and `--check`; the installed version goes in every row."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from opdb.fsio import write_or_check


def main(argv, description: str, extract: Callable[[Path, str], str], out: Path,
         name: str, what: str) -> int:
    """Parse `argv`, run `extract(include_dir, paddle_version)` and write (or `--check`) `out`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--include", type=Path, help="the paddle wheel's include dir "
                    "(default: the installed paddle's)")
    ap.add_argument("--check", action="store_true",
                    help="fail unless the committed file is byte-identical")
    args = ap.parse_args(argv)
    from opdb.pairing import installed_version

    version = installed_version("paddle")
    if args.include is None:
        from opdb.ingest.paddle_catalog import find_include_dir
        args.include = find_include_dir()
    if not version:
        raise SystemExit(f"{name}: paddle is not installed (its version goes in every row)")
    return write_or_check(out, extract(args.include, version), args.check, name, what)
