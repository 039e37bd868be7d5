"""Measure argument-name synonyms learned from PaddleCustomDevice's aclnn call sites.

    python benchmarks/paddle_synonyms_measure.py [--min-support N] [--list]

Leave-one-file-out over upstream's registered NPU kernels at `77090b64`
(`codegen.paddle_synonyms.measure`): for every aclnn parameter that name and reviewed-alias
matching cannot feed, is the synonym learned from the other files what upstream passes?
Prints the counts by (kind, outcome); `--list` prints every right/wrong/missed site.
docs/opgen.md "Batch G" has the figures and why the rule was not adopted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-support", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--affix", action="store_true",
                    help="measure the shared prefix/suffix rule instead of learned synonyms")
    ap.add_argument("--paconvert", action="store_true",
                    help="measure PaConvert's renamings (the adopted source) instead")
    ap.add_argument("--derived", action="store_true",
                    help="a local computed from one parameter counts as that parameter")
    args = ap.parse_args(argv)
    from codegen.paddle_synonyms import fed_params, measure, measure_affix, measure_paconvert
    res = (measure_affix() if args.affix else measure_paconvert() if args.paconvert
           else measure(args.min_support, args.derived))
    direct = sum(1 for f in fed_params() if f.direct)
    print(f"call-site parameters: {len(fed_params())} ({direct} fed by a function parameter "
          f"as it is); min support {args.min_support}")
    for (kind, outcome), rows in res.items():
        print(f"{kind:6} {outcome:6} {len(rows)}")
    if args.list:
        for (kind, outcome), rows in res.items():
            if outcome == "none":
                continue
            for f in rows:
                print(f"  {kind} {outcome}: {f.api} {f.param} <- {f.arg}"
                      f"{' (from ' + f.derived + ')' if f.derived else ''}  "
                      f"({f.path.rsplit('/', 1)[-1]}:{f.line} {f.function})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
