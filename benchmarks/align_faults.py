"""Planted-fault sweep for `opscan align`: does the compare name the right module and op?

For each model: dump side A once at --level op (CPU, float32, inputs saved); then for each
of N seeded draws pick an op kind present in the model (gelu, layer_norm, softmax, conv,
matmul) and one of its forward calls at random, dump side B with that call's output
scaled by 1 + 1e-3, compare, and score the named module and op against where the fault
landed. Criterion (issue 15): right module in N/N, right op in >= 95%.

    python benchmarks/align_faults.py [--draws 20] [--models a.py,b.py] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = [("torch", "tests/analyzer/align/models/torch_tiny_vit.py"),
          ("torch", "examples/torch_transformer.py"),
          ("torch", "examples/torch_lstm_attention.py"),
          ("paddle", "tests/analyzer/align/models/paddle_tiny_transformer.py"),
          ("paddle", "examples/paddle_crnn.py")]


def kind_counts(dump: Path, framework: str) -> dict[str, int]:
    from analyzer.align.fault import kind_of
    from analyzer.align.layout import read_step

    counts: dict[str, int] = {}
    for key in read_step(dump).data:
        if key.startswith("Module."):
            continue
        parts = key.split(".")
        name = parts[1]
        kind = kind_of(name, framework)
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def sweep(framework: str, model: str, draws: int, work: Path) -> list[dict]:
    from analyzer.align.compare import compare_dumps
    from analyzer.align.fault import Fault
    from analyzer.align.runner import DumpOptions, run_dump

    a = work / f"{Path(model).stem}-a"
    run_dump(DumpOptions(model=str(ROOT / model), framework=framework, output=str(a),
                         save_inputs=True, level="op", force=True))
    counts = kind_counts(a, framework)
    rng = random.Random(f"{model}:15")
    rows = []
    for i in range(draws):
        kind = rng.choice(sorted(counts))
        n = rng.randrange(counts[kind])
        b = work / f"{Path(model).stem}-b"
        t0 = time.perf_counter()
        res = run_dump(DumpOptions(model=str(ROOT / model), framework=framework, output=str(b),
                                   inputs_from=str(a), level="op", fault=Fault(kind, n), force=True))
        hit = res.meta["fault"]["hit"] or {}
        rep = compare_dumps(a, b)
        rows.append({"model": Path(model).name, "draw": i, "kind": kind, "occurrence": n,
                     "module": hit.get("module"), "op": hit.get("op_key"),
                     "found_module": rep.origin.key if rep.origin else None,
                     "found_op": rep.op.key if rep.op else None,
                     "module_ok": bool(rep.origin and rep.origin.key == hit.get("module")),
                     "op_ok": bool(rep.op and rep.op.key == hit.get("op_key")),
                     "seconds": round(time.perf_counter() - t0, 2)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--models", default=None, help="comma-separated framework:path (default: 5 models)")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    all_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fw, model in models:
            rows = sweep(fw, model, args.draws, Path(tmp))
            all_rows += rows
            m = sum(r["module_ok"] for r in rows)
            o = sum(r["op_ok"] for r in rows)
            print(f"{Path(model).name:32s} {fw:6s} module {m}/{len(rows)}  op {o}/{len(rows)}", flush=True)
            for r in rows:
                if not (r["module_ok"] and r["op_ok"]):
                    print(f"    miss: {r['kind']}:{r['occurrence']} planted {r['module']} {r['op']} "
                          f"found {r['found_module']} {r['found_op']}", flush=True)
    m = sum(r["module_ok"] for r in all_rows)
    o = sum(r["op_ok"] for r in all_rows)
    print(f"total: module {m}/{len(all_rows)}, op {o}/{len(all_rows)} over {len(models)} models")
    if args.out:
        Path(args.out).write_text(json.dumps(all_rows, indent=1) + "\n")
    return 0 if m == len(all_rows) and o >= 0.95 * len(all_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
