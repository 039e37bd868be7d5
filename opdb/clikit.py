"""Pieces every CLI shares: argument groups, the error boundary, text tables, JSON output.

Borrowed from Polygraphy: options such as `--framework`, `--soc`, `--json`, `-o`,
`--force` are defined once here and mean the same in `opscan`, `opgen` and `opdb`.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Sequence


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, `PROG: error: MESSAGE (see `PROG --help`)`,
    exit 2 (plain argparse prints its usage block first: four more lines on stderr).
    Subparsers made with `add_subparsers()` are of this class too."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        from opdb.errors import one_line

        from opdb.errors import shorten

        self.exit(2, f"{self.prog}: error: {shorten(one_line(message))} (see `{self.prog} --help`)\n")


MAX_STEPS = 1000  # --steps above this is a typo, not a scan (see steps_int)


def add_framework(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--framework", "-f", choices=("torch", "paddle"), required=required,
                   help="framework whose ops are meant")


def soc_arg(text: str) -> str:
    """argparse type for --soc: refused at parse time, before anything runs."""
    from opdb.soc import UnknownSoc, resolve_soc

    try:
        return resolve_soc(text).id
    except UnknownSoc as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def path_arg(text: str) -> str:
    """argparse type for a path option: an empty string is refused (Path("") is the current
    directory, where an output would land by accident)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty path")
    return text


def path_type(text: str):
    """argparse type for a path option the command uses as a `Path`: `path_arg`, then Path."""
    from pathlib import Path

    return Path(path_arg(text))


def text_arg(text: str) -> str:
    """argparse type for a name or text option (--target, a search text): an empty string is
    refused instead of meaning "the default" or "everything"."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty value")
    return text


def dtype_arg(text: str) -> str:
    """argparse type for --dtype: the canonical name of a known dtype (a typo is a usage
    error naming the accepted spellings, never a verdict)."""
    from opdb.dtypes import known_dtype
    from opdb.errors import OpscanError

    try:
        return known_dtype(text)
    except OpscanError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def seed_arg(text: str) -> int:
    """argparse type for --seed: 0 to 2**32 - 1 (what torch and paddle accept)."""
    value = _whole(text)
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError(f"must be between 0 and {2 ** 32 - 1}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type for counts such as --limit and --steps: an integer of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type for indexes such as --step: an integer of at least 0."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type for limits such as --timeout and --memory: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text}")
    return value


def steps_int(text: str) -> int:
    """argparse type for --steps: 1 to MAX_STEPS (a scan or a dump needs a few steps; a
    typo such as 1000000000000 would otherwise run for days)."""
    value = positive_int(text)
    if value > MAX_STEPS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_STEPS}, got {value}")
    return value


def add_soc(p: argparse.ArgumentParser) -> None:
    p.add_argument("--soc", default=None, type=soc_arg,
                   help="chip to judge aclnn support for (default ascend910b, the Atlas A2 "
                        "training series; also ascend910_93, ascend950, ascend910, ascend310p, ascend310b)")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def add_output(p: argparse.ArgumentParser, default: str | None = None) -> None:
    p.add_argument("-o", "--output", default=default, type=path_arg, help="output directory")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")


def print_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def run(main: Callable[[], int | None], prog: str) -> int:
    """Call `main`; turn any exception into one line on stderr and a non-zero exit code
    (opdb.errlines: OpscanError, OSError, decode errors, corrupt SQLite/JSON/YAML/zip, ...).
    OPSCAN_DEBUG=1 re-raises instead, for the traceback."""
    import os
    import warnings

    # paddle warns about ccache on import; it is noise before every message of ours
    warnings.filterwarnings("ignore", message="No ccache found", category=UserWarning)
    try:
        return int(main() or 0)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit:
        raise
    except BaseException as err:  # noqa: BLE001 - the boundary: every error is one line
        if os.environ.get("OPSCAN_DEBUG") == "1":
            raise
        from opdb.errlines import one_line

        from opdb.errors import shorten

        line, code = one_line(err)
        sys.stderr.write(f"{prog}: error: {shorten(line)}\n")
        return code
