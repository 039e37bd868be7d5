"""Draw a held-out batch of paddle kernels for opgen's side-by-side scoring (docs/opgen.md).

    python benchmarks/opgen_draw_paddle.py [--seed N] [--n 12]

The population is every PaddleCustomDevice NPU kernel registration at `77090b64`
(`opdb/sources/paddle/custom_npu_kernels.develop.jsonl`) whose adapter calls at least one
aclnn API through `EXEC_NPU_CMD`, minus the kernels already scored (the 12 and every
held-out paddle row of `benchmarks/opgen_twelve.py`, with the grad kernels scored in the
same row; batch G and later batches unless `--next` (batch H's draw) or `--before X`). The kernels are sorted by name and shuffled with `random.Random(seed)`; the
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
# grads scored in a forward's row of a seeded batch (depthwise_conv2d in H, swiglu in K),
# excluded from batch L's draw on only, so that the draws of H-K stay reproducible
SCORED_WITH_FORWARD_FROM = {"L": {"depthwise_conv2d_grad", "swiglu_grad"}}


def scored_kernels(with_g: bool = False, before: str | None = None) -> set[str]:
    """The kernels scored before batch `before` ("G", "H", "I": the batches of
    `opgen_twelve.BATCHES_PADDLE` in order; every scored kernel for the batch after the
    last). Without `before`: batch G's draw (`with_g`: the batch after G, i.e. H)."""
    from opgen_twelve import BATCHES_PADDLE, HELD_OUT_PADDLE, TWELVE
    before = before or ("H" if with_g else "G")
    later = [row for name, rows in BATCHES_PADDLE.items() if name >= before for row in rows]
    held = [row for row in HELD_OUT_PADDLE if row not in later]
    extra = {k for b, ks in SCORED_WITH_FORWARD_FROM.items() if before >= b for k in ks}
    return {k for _, _, k in TWELVE} | {k for _, k in held} | SCORED_WITH_FORWARD | extra


def draw(seed: int, n: int, with_g: bool = False, before: str | None = None
         ) -> list[tuple[str, str, str, str]]:
    from opdb.query import OpDB

    from codegen.resolve import _fw_op, _top_mapped

    path = ROOT / "opdb" / "sources" / "paddle" / "custom_npu_kernels.develop.jsonl"
    recs = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("aclnn"):
            recs.setdefault(r["kernel"], r)
    done = scored_kernels(with_g, before)
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
    ap.add_argument("--before", metavar="BATCH",
                    help="exclude every kernel scored before this batch (G, H, I, ...): "
                         "--before H is --next; --before I draws the batch after H")
    args = ap.parse_args(argv)
    print(f"# population: {len(scored_kernels(args.next, args.before))} kernels already scored "
          f"excluded; seed {args.seed}")
    for kernel, api, how, path in draw(args.seed, args.n, args.next, args.before):
        print(f"{kernel:28} {api:32} {how:40} {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
