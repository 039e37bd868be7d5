"""Meta-mode scan cost, measured against the "dump op" baseline porting guides use.

For each bundled example: the time of one real CPU training step under the framework's
profiler (baseline), the time of a full `--mode meta` scan (trace + classify + graph),
and their ratio. Then a 7B-class decoder (32 layers, hidden 4096, ~6.7e9 parameters,
27 GB of float32 weights) scanned in meta mode in a child process: time and peak RSS.

    python benchmarks/meta_scan.py [--skip-7b]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TORCH_EXAMPLES = ["torch_resnet50.py", "torch_shufflenetv2.py", "torch_transformer.py",
                  "torch_lstm_attention.py"]
PADDLE_EXAMPLES = ["paddle_resnet50.py", "paddle_mobilenetv3.py", "paddle_crnn.py"]


def profiled_torch_step(path: Path) -> float:
    import torch

    from analyzer.trace.entry import load_entry

    entry = load_entry(path, "torch")
    entry.run_step()  # warm-up (optimizer state, allocator)
    t0 = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        entry.run_step()
    return time.perf_counter() - t0


def profiled_paddle_step(path: Path) -> float:
    import paddle

    from analyzer.trace.entry import load_entry

    entry = load_entry(path, "paddle")
    entry.run_step()
    prof = paddle.profiler.Profiler(targets=[paddle.profiler.ProfilerTarget.CPU],
                                    on_trace_ready=lambda p: None)  # no ./profiler_log export
    t0 = time.perf_counter()
    prof.start()
    entry.run_step()
    prof.stop()
    return time.perf_counter() - t0


def meta_scan(path: Path, framework: str) -> tuple[float, int]:
    from analyzer.scan import ScanOptions, scan

    t0 = time.perf_counter()
    result = scan(ScanOptions(model=str(path), framework=framework, mode="meta"))
    return time.perf_counter() - t0, len(result.trace.calls)


def child_7b() -> None:
    from analyzer.scan import ScanOptions, scan

    t0 = time.perf_counter()
    result = scan(ScanOptions(model=str(ROOT / "examples" / "torch_decoder_7b.py"),
                              framework="torch", mode="meta"))
    elapsed = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": elapsed, "calls": len(result.trace.calls),
                      "peak_rss": rss, "summary": result.report.summary}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-7b", action="store_true")
    ap.add_argument("--child-7b", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_7b:
        return child_7b()


    print(f"{'example':<26} {'profiled real step':>18} {'meta scan':>10} {'ratio':>7} {'calls':>6}")
    for name in TORCH_EXAMPLES + PADDLE_EXAMPLES:
        fw = "torch" if name.startswith("torch") else "paddle"
        path = ROOT / "examples" / name
        base = (profiled_torch_step if fw == "torch" else profiled_paddle_step)(path)
        meta, calls = meta_scan(path, fw)
        print(f"{name:<26} {base:>16.2f} s {meta:>8.2f} s {meta / base:>7.1f} {calls:>6}")
    if not args.skip_7b:
        out = subprocess.run([sys.executable, __file__, "--child-7b"], capture_output=True,
                             text=True, check=True)
        data = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\n7B-class decoder (32 layers, hidden 4096) in meta mode: {data['seconds']:.1f} s, "
              f"{data['calls']} calls, peak RSS {data['peak_rss'] / 2**20:.0f} MiB "
              f"(its float32 weights alone would be 27 GB)")
        print(f"  {data['summary']}")


if __name__ == "__main__":
    main()
