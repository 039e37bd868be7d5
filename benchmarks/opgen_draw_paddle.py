"""Draw a held-out batch of paddle kernels for opgen's side-by-side scoring (docs/opgen.md).

    python benchmarks/opgen_draw_paddle.py [--seed N] [--n 12]

The population is every PaddleCustomDevice NPU kernel registration at `77090b64`
(`opdb/sources/paddle/custom_npu_kernels.develop.jsonl`) whose adapter calls at least one
aclnn API through `EXEC_NPU_CMD`, minus the kernels already scored (the 12 and every
held-out paddle row of `benchmarks/opgen_twelve.py`, with the grad kernels scored in the
same row; batch G itself unless `--next`). The kernels are sorted by name and shuffled with `random.Random(seed)`; the
first `n` that opdb's catalog knows are drawn, none skipped by hand.

The API of each: opdb's primary mapping for the kernel (what `opgen aclnn <kernel>
--target paddle` resolves) when it is one of the APIs the upstream adapter calls; else
the upstream adapter's only aclnn API; else the first of them the seeded generator picks.
Prints one line per drawn kernel: kernel, API, how the API was chosen, upstream file.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# grad kernels scored in the same row as their forward (docs/opgen.md tables: "+ grad")
SCORED_WITH_FORWARD = {"layer_norm_grad", "pool2d_grad", "conv2d_grad", "sqrt_grad",
                       "log_softmax_grad", "group_norm_grad", "nll_loss_grad"}


def scored_kernels(with_g: bool = False) -> set[str]:
    """The kernels scored before batch G (with `with_g`, batch G's too: the next draw)."""
    from opgen_twelve import BATCH_G_PADDLE, HELD_OUT_PADDLE, TWELVE
    held = [row for row in HELD_OUT_PADDLE if with_g or row not in BATCH_G_PADDLE]
    return {k for _, _, k in TWELVE} | {k for _, k in held} | SCORED_WITH_FORWARD


def draw(seed: int, n: int, with_g: bool = False) -> list[tuple[str, str, str, str]]:
    from opdb.query import OpDB

    from codegen.resolve import _fw_op, _top_mapped

    path = ROOT / "opdb" / "sources" / "paddle" / "custom_npu_kernels.develop.jsonl"
    recs = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("aclnn"):
            recs.setdefault(r["kernel"], r)
    done = scored_kernels(with_g)
    pool = sorted(k for k in recs if k not in done)
    rng = random.Random(seed)
    rng.shuffle(pool)
    db = OpDB.open()
    out = []
    for kernel in pool:
        if len(out) == n:
            break
        op = _fw_op(db, "paddle", kernel)
        if op is None:
            print(f"# {kernel}: not in opdb's catalog, not drawable", file=sys.stderr)
            continue
        apis = recs[kernel]["aclnn"]
        mapped = [a for a in _top_mapped(db, "paddle", op) if a in apis]
        if mapped:
            api, how = mapped[0], "opdb primary mapping"
        elif len(apis) == 1:
            api, how = apis[0], "the adapter's only aclnn API"
        else:
            api, how = rng.choice(sorted(apis)), "seeded choice among the adapter's APIs"
        out.append((kernel, api, how, recs[kernel]["path"]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--next", action="store_true",
                    help="exclude batch G too (draw the batch after it); without it the "
                         "script reproduces batch G")
    args = ap.parse_args(argv)
    print(f"# population: {len(scored_kernels(args.next))} kernels already scored excluded; "
          f"seed {args.seed}")
    for kernel, api, how, path in draw(args.seed, args.n, args.next):
        print(f"{kernel:28} {api:32} {how:40} {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
