"""Whole-process time and peak RSS: `opscan --mode meta` against the dump-op method.

Each measurement is a fresh process (imports and start-up count, as they do for a user):
`python -m analyzer.cli MODEL --mode meta` against `python benchmarks/dump_op.py MODEL`
(one real CPU step under the framework profiler). Rows: every bundled example, a model
whose real step takes more than 10 s (benchmarks/models/resnet50_224.py), and a 70B-class
decoder (benchmarks/models/decoder_70b.py) in meta mode only (its real step would need
about 1.1 TB). Prints a Markdown table; ratio = opscan time / dump-op time.

    python benchmarks/scan_vs_dump_op.py [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODELS = [
    ("examples/torch_resnet50.py", "torch"),
    ("examples/torch_shufflenetv2.py", "torch"),
    ("examples/torch_transformer.py", "torch"),
    ("examples/torch_lstm_attention.py", "torch"),
    ("examples/paddle_resnet50.py", "paddle"),
    ("examples/paddle_mobilenetv3.py", "paddle"),
    ("examples/paddle_crnn.py", "paddle"),
    ("examples/hf_llama_decoder.py", "torch"),
    ("examples/hf_convnext.py", "torch"),
    ("benchmarks/models/resnet50_224.py", "torch"),
    ("benchmarks/models/decoder_70b.py", "torch"),
]
META_ONLY = {"benchmarks/models/decoder_70b.py"}


def measure(cmd: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS bytes, exit status) of one child process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss * 1024, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="model file names to run")
    args = ap.parse_args()
    print("| model | dump-op time | dump-op peak RSS | opscan --mode meta time | "
          "peak RSS | time ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for model, fw in MODELS:
            if args.only and Path(model).name not in args.only:
                continue
            if model in META_ONLY:
                base = None
            else:
                base = measure([sys.executable, "benchmarks/dump_op.py", model,
                                "--framework", fw])
            out = Path(tmp) / Path(model).stem
            scan = measure([sys.executable, "-m", "analyzer.cli", model, "--framework", fw,
                            "--mode", "meta", "-o", str(out), "--format", "json"])
            ok = "" if scan[2] in (0, 1) else f" (exit {scan[2]})"
            if base is None:
                print(f"| {model} | (needs ~1.1 TB) | | {scan[0]:.1f} s{ok} | "
                      f"{scan[1] / 2**20:.0f} MiB | |")
            else:
                bok = "" if base[2] == 0 else f" (exit {base[2]})"
                print(f"| {model} | {base[0]:.1f} s{bok} | {base[1] / 2**20:.0f} MiB | "
                      f"{scan[0]:.1f} s{ok} | {scan[1] / 2**20:.0f} MiB | "
                      f"{scan[0] / base[0]:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
