"""Draw the rows of the scoring audit (docs/opgen.md, "Scoring audit (branch ws/h9audit)"):
12 torch rows of `HELD_OUT_TORCH` and 8 paddle rows of `HELD_OUT_PADDLE`
(benchmarks/opgen_twelve.py), to rescore independently of the scorers who wrote the tables.

    python benchmarks/opgen_audit_draw.py [--seed 20261125] [--torch 12] [--paddle 8]
                                          [--torch-rows 166] [--paddle-rows 160]
                                          [--exclude DRAW.out ...]

Why: outside reviewers will rescore the generated adapters against upstream; a seeded draw
over rows already scored says whether our own scores were lenient, without picking by hand.
Deterministic: one `random.Random(seed)` samples row indices of the torch list (in file
order), then of the paddle list (in file order, batches appended as the file appends them);
the drawn rows are printed in file order as `target index API op`. The population is the
first `--torch-rows` / `--paddle-rows` rows of each list (default: the 166 and 160 rows the
audit drew from), so later samples appended to the lists do not change the draw. `--exclude` takes earlier
draws' outputs (lines `target index API op`, as printed here) and draws from the rows they
do not name, so a new audit never rescores a row an earlier one drew; without it the draw
is what it always was.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opgen_twelve import HELD_OUT_PADDLE, HELD_OUT_TORCH  # noqa: E402


AUDITED_TORCH_ROWS, AUDITED_PADDLE_ROWS = 166, 160


def read_excluded(paths) -> set[tuple[str, int]]:
    """(target, index) of every row named by earlier draws' outputs; a line that is not
    `target index API op` with a known target is a ValueError naming the file and line."""
    out: set[tuple[str, int]] = set()
    for path in paths:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ValueError(f"cannot read --exclude file {path}: {exc.strerror}") from None
        for n, line in enumerate(text.splitlines(), 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4 or parts[0] not in ("torch", "paddle") or not parts[1].isdigit():
                raise ValueError(f"{path}:{n}: not a draw line (`target index API op`); "
                                 "pass the output of this script")
            out.add((parts[0], int(parts[1])))
    return out


def draw(seed: int, n_torch: int, n_paddle: int, torch_rows: int = AUDITED_TORCH_ROWS,
         paddle_rows: int = AUDITED_PADDLE_ROWS,
         exclude: set[tuple[str, int]] = frozenset()) -> list[tuple[str, int, str, str]]:
    """(target, index in its list, aclnn API, torch op or phi kernel), in file order, drawn
    from the first `torch_rows` / `paddle_rows` rows less the `exclude`d (target, index)."""
    if not 0 < torch_rows <= len(HELD_OUT_TORCH) or not 0 < paddle_rows <= len(HELD_OUT_PADDLE):
        raise ValueError(f"row counts must be within 1..{len(HELD_OUT_TORCH)} (torch) "
                         f"and 1..{len(HELD_OUT_PADDLE)} (paddle)")
    t_pool = [i for i in range(torch_rows) if ("torch", i) not in exclude]
    p_pool = [i for i in range(paddle_rows) if ("paddle", i) not in exclude]
    if not 0 <= n_torch <= len(t_pool) or not 0 <= n_paddle <= len(p_pool):
        raise ValueError(f"sample sizes must be within 0..{len(t_pool)} (torch) "
                         f"and 0..{len(p_pool)} (paddle)")
    rng = random.Random(seed)
    # (sampling a list of the same indices as the range draws the same rows: old draws hold)
    ti = sorted(rng.sample(t_pool, n_torch))
    pi = sorted(rng.sample(p_pool, n_paddle))
    return ([("torch", i, *HELD_OUT_TORCH[i]) for i in ti]
            + [("paddle", i, *HELD_OUT_PADDLE[i]) for i in pi])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026_11_25)
    ap.add_argument("--torch", type=int, default=12)
    ap.add_argument("--paddle", type=int, default=8)
    ap.add_argument("--torch-rows", type=int, default=AUDITED_TORCH_ROWS,
                    help="draw from the first N rows of HELD_OUT_TORCH")
    ap.add_argument("--paddle-rows", type=int, default=AUDITED_PADDLE_ROWS,
                    help="draw from the first N rows of HELD_OUT_PADDLE")
    ap.add_argument("--exclude", nargs="+", default=[], metavar="DRAW.out",
                    help="earlier draws' outputs: their rows are not drawn again")
    args = ap.parse_args(argv)
    try:
        rows = draw(args.seed, args.torch, args.paddle, args.torch_rows, args.paddle_rows,
                    read_excluded(args.exclude))
    except ValueError as exc:
        print(f"opgen_audit_draw: {exc}", file=sys.stderr)
        return 2
    for target, i, api, op in rows:
        print(f"{target:6} {i:3} {api:32} {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
