"""Draw the rows of the second scoring audit (docs/opgen.md, "Second scoring audit (branch
ws/h9audit2)"): 10 rows among the torch held-out samples 16 to 21 (`HELD_OUT_TORCH` indices
166-233, benchmarks/opgen_twelve.py) that their sample tables score 3 on the first pass.

    python benchmarks/opgen_audit2_draw.py [--seed 2026112502] [--n 10] [--doc docs/opgen.md]

Why: those first-pass 3s make up the headline held-out figure; a seeded draw over them says
whether they were lenient, without picking rows by hand.
Deterministic: the sample tables ("#### Sixteenth sample" to "#### Twenty-first sample") are
read in file order, their rows paired with `HELD_OUT_TORCH[166:234]` in order (a row whose
API/op differs from the list is an error), the population is the rows whose "score first
pass" cell is exactly `3`, in index order; one `random.Random(seed)` samples `n` of them,
printed in index order as `torch index API op`.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opgen_twelve import HELD_OUT_TORCH  # noqa: E402

FIRST, LAST = 166, 233
SAMPLES = ("Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth", "Twentieth", "Twenty-first")
DOC = Path(__file__).resolve().parents[1] / "docs" / "opgen.md"
_ROW = re.compile(r"^\| (aclnn\w+) \(`([^`]+)`\) \|")


def first_pass_scores(text: str) -> list[tuple[int, str, str, str]]:
    """(index, API, op, first-pass score cell) of every row of samples 16-21, in file order."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("#### "):
            inside = any(line.startswith(f"#### {s} sample") for s in SAMPLES)
            continue
        if line.startswith("### "):
            inside = False
        m = _ROW.match(line) if inside else None
        if m:
            cells = [c.strip() for c in line.split("|")]
            rows.append((m.group(1), m.group(2), cells[4]))
    want = HELD_OUT_TORCH[FIRST:LAST + 1]
    if [(a, o) for a, o, _ in rows] != [tuple(w) for w in want]:
        raise ValueError(f"the sample tables' {len(rows)} rows are not HELD_OUT_TORCH"
                         f"[{FIRST}:{LAST + 1}] in order; check the doc's sixteenth to "
                         "twenty-first sample tables")
    return [(FIRST + k, a, o, s) for k, (a, o, s) in enumerate(rows)]


def draw(seed: int, n: int, text: str) -> list[tuple[int, str, str]]:
    """(index, API, op) of `n` rows drawn from the first-pass 3s, in index order."""
    pool = [(i, a, o) for i, a, o, s in first_pass_scores(text) if s == "3"]
    if not 0 <= n <= len(pool):
        raise ValueError(f"sample size must be within 0..{len(pool)}")
    return [pool[k] for k in sorted(random.Random(seed).sample(range(len(pool)), n))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026_11_25_2)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--doc", type=Path, default=DOC)
    args = ap.parse_args(argv)
    try:
        rows = draw(args.seed, args.n, args.doc.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"opgen_audit2_draw: {exc}", file=sys.stderr)
        return 2
    for i, api, op in rows:
        print(f"torch  {i:3} {api:36} {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
