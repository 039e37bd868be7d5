"""Cost of `opscan align dump --level module`: step time against an undumped step of the
same process, and bytes of dump.json per module call.

Per model: one warm-up step, then seven undumped steps (baseline) interleaved with seven
dumped steps (hooks, statistics, writing the step's JSON), so the machine's load hits both.
Ratio = fastest dumped / fastest undumped (on a shared machine the minimum is the step's
own cost; the median ratio is printed too).
Criterion (issue 15): <= 1.5x and <= 2 KB per module call (forward + backward record).

    python benchmarks/align_overhead.py [--models fw:path,...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = [("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_resnet50.py"),
          ("torch", "examples/torch_shufflenetv2.py"), ("paddle", "examples/paddle_crnn.py"),
          ("paddle", "examples/paddle_resnet50.py")]


def measure(framework: str, model: str, work: Path, repeat: int = 7) -> dict:
    """Interleaved undumped and dumped steps in one process (the machine's load hits both)."""
    from analyzer.align.loader import load_model
    from analyzer.align.runner import _seed, _session

    _seed(framework, 0)
    entry = load_model(ROOT / model, framework)
    s = _session(entry, framework, "cpu")
    s.disable_dropout()
    out = work / Path(model).stem
    plain, dumped, sizes, calls = [], [], [], 0
    try:
        with s.step_context(None):
            entry.run_step()  # warm-up
        for i in range(repeat):
            t0 = time.perf_counter()
            with s.step_context(None):
                entry.run_step()
            plain.append(time.perf_counter() - t0)
            rec = s.recorder("module", (), None)
            t0 = time.perf_counter()
            rec.begin_step(i)
            with s.step_context(None):
                entry.run_step()
            d = rec.end_step()
            path = d.write(out)
            dumped.append(time.perf_counter() - t0)
            rec.remove()
            calls = sum(1 for k in d.data if k.startswith("Module.") and ".forward." in k)
            sizes.append((path / "dump.json").stat().st_size)
    finally:
        s.close()
    base, dump = min(plain), min(dumped)
    return {"model": Path(model).name, "framework": framework, "undumped_s": round(base, 4),
            "dumped_s": round(dump, 4), "ratio": round(dump / base, 2),
            "median_ratio": round(statistics.median(dumped) / statistics.median(plain), 2),
            "module_calls": calls,
            "dump_json_bytes": sizes[-1], "bytes_per_call": round(sizes[-1] / max(calls, 1)),
            "undumped_all": [round(x, 4) for x in plain], "dumped_all": [round(x, 4) for x in dumped]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (default 1: steadier timings on a shared machine)")
    args = ap.parse_args()
    if args.threads:
        import torch
        torch.set_num_threads(args.threads)
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fw, model in models:
            r = measure(fw, model, Path(tmp))
            rows.append(r)
            print(f"{r['model']:28s} {fw:6s} undumped {r['undumped_s']:.3f}s dumped {r['dumped_s']:.3f}s "
                  f"ratio {r['ratio']:.2f}x (median {r['median_ratio']:.2f}x)  {r['module_calls']} module calls, "
                  f"{r['bytes_per_call']} B/call", flush=True)
    print(json.dumps(rows, indent=1))
    ok = all(r["ratio"] <= 1.5 and r["bytes_per_call"] <= 2048 for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
