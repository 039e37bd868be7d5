"""Which torch adapters a change moves: render the whole torch sweep (each aclnn API with
`benchmarks/opgen_sweep.py`'s op choice) and every `TWELVE` / `HELD_OUT_TORCH` row of
`benchmarks/opgen_twelve.py`, and dump per render the op, the TODO count and a hash of
every file; `--compare A B` lists what differs between two dumps. `--target paddle` does
the same for the paddle sweep and the `TWELVE` / `HELD_OUT_PADDLE` paddle rows (rendered
in-tree, as `opgen_paddle_dtype_gap.py` does).

    python benchmarks/opgen_torch_render_diff.py --dump before.json   # in the old tree
    python benchmarks/opgen_torch_render_diff.py --dump after.json    # in the new tree
    python benchmarks/opgen_torch_render_diff.py --compare before.json after.json

Run each dump with that tree first on PYTHONPATH. Render only (no compiler); ~45 s of
CPU per dump on the shipped snapshot.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path


def _hashes(files: dict) -> dict:
    return {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in sorted(files.items())}


def dump(out: Path, target: str = "torch") -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import opgen_twelve
    from opgen_sweep import choose_op

    from codegen.api import prepare, render_adapter, render_context
    from opdb.query import OpDB

    db = OpDB.open(overlay=False)
    res: dict = {"sweep": {}, "rows": {}}
    t0 = time.monotonic()
    for api in [a for a in db.aclnn_apis() if not a.internal]:
        try:
            op, _ = choose_op(db, api, target)
            r = render_adapter(api, op, target, "both", **render_context(db, api, op, target))
            res["sweep"][api.name] = [op.name, len(r.todos), _hashes(r.files)]
        except Exception as exc:  # a failure is a figure here
            res["sweep"][api.name] = ["FAIL", f"{type(exc).__name__}: {exc}"[:200]]
    if target == "torch":
        rows = [(a, o) for a, o, _ in opgen_twelve.TWELVE if o] + list(opgen_twelve.HELD_OUT_TORCH)
        extra: dict = {}
    else:
        rows = list(dict.fromkeys([(a, o) for a, _, o in opgen_twelve.TWELVE]
                                  + list(opgen_twelve.HELD_OUT_PADDLE)))
        extra = {"layout": "in-tree"}
    for api, op in rows:
        try:
            r = prepare(db, api, target, op=op, **extra)
            res["rows"][f"{api} {op}"] = [op, len(r.todos), _hashes(r.files)]
        except Exception as exc:
            res["rows"][f"{api} {op}"] = ["FAIL", f"{type(exc).__name__}: {exc}"[:200]]
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{len(res['sweep'])} sweep APIs, {len(res['rows'])} rows: "
          f"{time.monotonic() - t0:.0f} s wall, {ru.ru_utime + ru.ru_stime:.0f} s CPU")
    out.write_text(json.dumps(res, indent=0, sort_keys=True))


def compare(a_path: Path, b_path: Path) -> None:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    for part in ("rows", "sweep"):
        A, B = a[part], b[part]
        changed = [k for k in sorted(set(A) | set(B)) if A.get(k) != B.get(k)]
        todos = [sum(v[1] for v in d.values() if v[0] != "FAIL") for d in (A, B)]
        fails = [sum(v[0] == "FAIL" for v in d.values()) for d in (A, B)]
        print(f"{part}: {len(B)} renders, {len(changed)} changed; TODOs {todos[0]} -> "
              f"{todos[1]}; failures {fails[0]} -> {fails[1]}")
        for k in changed:
            x, y = A.get(k, ["-", 0]), B.get(k, ["-", 0])
            print(f"  {k}: {x[0]} -> {y[0]}, TODOs {x[1]} -> {y[1]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dump", type=Path, help="write this tree's renders here (JSON)")
    g.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--target", choices=("torch", "paddle"), default="torch",
                    help="which adapters --dump renders (default torch)")
    args = ap.parse_args(argv)
    if args.dump:
        dump(args.dump, args.target)
    else:
        compare(*args.compare)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
