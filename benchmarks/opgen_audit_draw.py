"""Draw the rows of the scoring audit (docs/opgen.md, "Scoring audit (branch ws/h9audit)"):
12 torch rows of `HELD_OUT_TORCH` and 8 paddle rows of `HELD_OUT_PADDLE`
(benchmarks/opgen_twelve.py), to rescore independently of the scorers who wrote the tables.

    python benchmarks/opgen_audit_draw.py [--seed 20261125] [--torch 12] [--paddle 8]
                                          [--torch-rows 166] [--paddle-rows 160]

Why: outside reviewers will rescore the generated adapters against upstream; a seeded draw
over rows already scored says whether our own scores were lenient, without picking by hand.
Deterministic: one `random.Random(seed)` samples row indices of the torch list (in file
order), then of the paddle list (in file order, batches appended as the file appends them);
the drawn rows are printed in file order as `target index API op`. The population is the
first `--torch-rows` / `--paddle-rows` rows of each list (default: the 166 and 160 rows the
audit drew from), so later samples appended to the lists do not change the draw.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opgen_twelve import HELD_OUT_PADDLE, HELD_OUT_TORCH  # noqa: E402


AUDITED_TORCH_ROWS, AUDITED_PADDLE_ROWS = 166, 160


def draw(seed: int, n_torch: int, n_paddle: int, torch_rows: int = AUDITED_TORCH_ROWS,
         paddle_rows: int = AUDITED_PADDLE_ROWS) -> list[tuple[str, int, str, str]]:
    """(target, index in its list, aclnn API, torch op or phi kernel), in file order, drawn
    from the first `torch_rows` / `paddle_rows` rows."""
    if not 0 < torch_rows <= len(HELD_OUT_TORCH) or not 0 < paddle_rows <= len(HELD_OUT_PADDLE):
        raise ValueError(f"row counts must be within 1..{len(HELD_OUT_TORCH)} (torch) "
                         f"and 1..{len(HELD_OUT_PADDLE)} (paddle)")
    if not 0 <= n_torch <= torch_rows or not 0 <= n_paddle <= paddle_rows:
        raise ValueError(f"sample sizes must be within 0..{torch_rows} (torch) "
                         f"and 0..{paddle_rows} (paddle)")
    rng = random.Random(seed)
    ti = sorted(rng.sample(range(torch_rows), n_torch))
    pi = sorted(rng.sample(range(paddle_rows), n_paddle))
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
    args = ap.parse_args(argv)
    try:
        rows = draw(args.seed, args.torch, args.paddle, args.torch_rows, args.paddle_rows)
    except ValueError as exc:
        print(f"opgen_audit_draw: {exc}", file=sys.stderr)
        return 2
    for target, i, api, op in rows:
        print(f"{target:6} {i:3} {api:32} {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
