"""Draw the rows of the scoring audit (docs/opgen.md, "Scoring audit (branch ws/h9audit)"):
12 torch rows of `HELD_OUT_TORCH` and 8 paddle rows of `HELD_OUT_PADDLE`
(benchmarks/opgen_twelve.py), to rescore independently of the scorers who wrote the tables.

    python benchmarks/opgen_audit_draw.py [--seed 20261125] [--torch 12] [--paddle 8]

Why: outside reviewers will rescore the generated adapters against upstream; a seeded draw
over rows already scored says whether our own scores were lenient, without picking by hand.
Deterministic: one `random.Random(seed)` samples row indices of the torch list (in file
order), then of the paddle list (in file order, batches appended as the file appends them);
the drawn rows are printed in file order as `target index API op`.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opgen_twelve import HELD_OUT_PADDLE, HELD_OUT_TORCH  # noqa: E402


def draw(seed: int, n_torch: int, n_paddle: int) -> list[tuple[str, int, str, str]]:
    """(target, index in its list, aclnn API, torch op or phi kernel), in file order."""
    if not 0 <= n_torch <= len(HELD_OUT_TORCH) or not 0 <= n_paddle <= len(HELD_OUT_PADDLE):
        raise ValueError(f"sample sizes must be within 0..{len(HELD_OUT_TORCH)} (torch) "
                         f"and 0..{len(HELD_OUT_PADDLE)} (paddle)")
    rng = random.Random(seed)
    ti = sorted(rng.sample(range(len(HELD_OUT_TORCH)), n_torch))
    pi = sorted(rng.sample(range(len(HELD_OUT_PADDLE)), n_paddle))
    return ([("torch", i, *HELD_OUT_TORCH[i]) for i in ti]
            + [("paddle", i, *HELD_OUT_PADDLE[i]) for i in pi])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026_11_25)
    ap.add_argument("--torch", type=int, default=12)
    ap.add_argument("--paddle", type=int, default=8)
    args = ap.parse_args(argv)
    try:
        rows = draw(args.seed, args.torch, args.paddle)
    except ValueError as exc:
        print(f"opgen_audit_draw: {exc}", file=sys.stderr)
        return 2
    for target, i, api, op in rows:
        print(f"{target:6} {i:3} {api:32} {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
