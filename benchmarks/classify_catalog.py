"""Classify every op of a framework's opdb catalog for one dtype: one `op category` line each,
sorted, to compare two commits' verdicts over the whole catalog (README "Labelled cases").

    python benchmarks/classify_catalog.py --framework torch --dtype float32 \
        --skip aten::_thnn_differentiable_gru_cell_backward > verdicts.txt

`--skip` (repeatable) leaves out ops whose classification crashes the process (the one
above segfaults while its composite runs on meta tensors).
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--framework", choices=("torch", "paddle"), default="torch")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--skip", action="append", default=[], metavar="OP")
    a = p.parse_args(argv)
    from analyzer.classify import ClassifyContext, classify_op
    from opdb.query import OpDB

    db = OpDB.open(overlay=False)
    ctx = ClassifyContext.create(db, a.framework)
    names = sorted(o.name for o in db.framework_ops(a.framework))
    if a.framework == "torch":
        names = [n for n in names if n.startswith("aten::")]
    for name in names:
        if name in a.skip:
            continue
        print(name, classify_op(ctx, name, (a.dtype,)).category, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
