"""Cost of `opscan align dump --level module`: step time against an undumped step of the
same process, and bytes of dump.json per module call.

Per model: one warm-up and three undumped steps (baseline), then three dumped steps
(hooks, statistics, writing the step's JSON). Ratio = median dumped / median undumped.
Criterion (issue 15): <= 1.5x and <= 2 KB per module call (forward + backward record).

    python benchmarks/align_overhead.py [--models fw:path,...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = [("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_resnet50.py"),
          ("torch", "examples/torch_shufflenetv2.py"), ("paddle", "examples/paddle_crnn.py"),
          ("paddle", "examples/paddle_resnet50.py")]


def measure(framework: str, model: str, work: Path) -> dict:
    from analyzer.align.layout import read_step
    from analyzer.align.runner import DumpOptions, run_dump

    out = work / Path(model).stem
    res = run_dump(DumpOptions(model=str(ROOT / model), framework=framework, output=str(out),
                               steps=3, timing=True, force=True))
    t = res.meta["timing"]
    base = statistics.median(t["undumped_step_s"])
    dumped = statistics.median(t["dumped_step_s"])
    data = read_step(out, 1).data
    calls = sum(1 for k in data if k.startswith("Module.") and ".forward." in k)
    size = (out / "step1" / "rank0" / "dump.json").stat().st_size
    return {"model": Path(model).name, "framework": framework, "undumped_s": round(base, 4),
            "dumped_s": round(dumped, 4), "ratio": round(dumped / base, 2), "module_calls": calls,
            "dump_json_bytes": size, "bytes_per_call": round(size / max(calls, 1))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None)
    args = ap.parse_args()
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fw, model in models:
            r = measure(fw, model, Path(tmp))
            rows.append(r)
            print(f"{r['model']:28s} {fw:6s} undumped {r['undumped_s']:.3f}s dumped {r['dumped_s']:.3f}s "
                  f"ratio {r['ratio']:.2f}x  {r['module_calls']} module calls, "
                  f"{r['bytes_per_call']} B/call", flush=True)
    print(json.dumps(rows, indent=1))
    ok = all(r["ratio"] <= 1.5 and r["bytes_per_call"] <= 2048 for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
