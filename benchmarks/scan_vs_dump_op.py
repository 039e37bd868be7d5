"""Issue 12 item 7 in one run: whole-process time and peak RSS of `opscan --mode meta`
against the dump-op method, with each goal checked against the same run's baseline.

Each measurement is a fresh process (imports and start-up count, as they do for a user):
`python -m analyzer.cli MODEL --mode meta -o TMP --format json -q` against
`python benchmarks/dump_op.py MODEL` (build the model on CPU, one real training step
under the framework profiler, print the op names). Wall time, CPU time (user + system,
from the child's rusage: steadier than wall on a shared machine) and peak RSS (ru_maxrss)
are taken for each. Rows: every bundled example, a model whose real step takes more than
10 s (benchmarks/models/resnet50_224.py; with --large also the same network at batch 64,
benchmarks/models/resnet50_224_b64.py, a real step of about a minute), and a 70B-class decoder
(benchmarks/models/decoder_70b.py: 80 layers, hidden 8192, GQA 64/8 heads, SwiGLU 28672)
in meta mode only (its real step would need about 1.1 TB). Two more rows time the default
`--mode auto` on the 7B and 70B decoders (auto decides from a meta build and keeps it).

Goals (issue 12, item 7), checked per row in the last column:
  - small models: opscan wall <= 1.2x the dump-op wall;
  - a model whose real step takes > 10 s: opscan at least 10x faster (ratio <= 0.1);
  - the 70B-class decoder: <= 10 s and <= 1 GB peak RSS.
The "> 10 s" rows are fixed (LONG_STEP), not guessed from this run's wall time: under load
a small model's dump-op can take longer than 10 s too.

Before measuring, the repository's packages are compiled to bytecode (`compileall`, as
`pip install` does): with PYTHONDONTWRITEBYTECODE set (as on the shared machine) every
opscan process would otherwise compile its ~60 modules from source (~0.2 s), a cost no
installed opscan pays.

    python benchmarks/scan_vs_dump_op.py                 # the whole table (~5 min quiet)
    python benchmarks/scan_vs_dump_op.py --only decoder_70b.py torch_transformer.py
    python benchmarks/scan_vs_dump_op.py --repeat 3      # best of 3 per command, alternating
    python benchmarks/scan_vs_dump_op.py --large --only resnet50_224.py resnet50_224_b64.py

Prints `uptime` before and after (the load average says how much to trust wall times)
and a Markdown table; ratio = opscan / dump-op, for wall and for CPU time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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
    ("benchmarks/models/resnet50_224_b64.py", "torch"),
    ("benchmarks/models/decoder_70b.py", "torch"),
]
META_ONLY = {"benchmarks/models/decoder_70b.py"}
# Real steps of more than 10 s (ResNet-50, 224x224, at batch 16 and 64): the 10x goal.
LONG_STEP = {"benchmarks/models/resnet50_224.py", "benchmarks/models/resnet50_224_b64.py"}
# Only with --large: a dump-op of about a minute and ~6 GB.
LARGE = {"benchmarks/models/resnet50_224_b64.py"}
AUTO_ROWS = [("examples/torch_decoder_7b.py", "torch"),
             ("benchmarks/models/decoder_70b.py", "torch")]
# What every torch process of the long-step rows pays before any model code: the import,
# and torch._dynamo, which torch.optim's decorated methods import on their first call.
FIXED = ("import torch", "import torch, torch._dynamo")
SMALL_RATIO, BIG_SPEEDUP = 1.2, 10.0
BIG_DECODER_SECONDS, BIG_DECODER_RSS = 10.0, 2**30


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # user + system seconds of the child
    rss: int  # peak RSS, bytes
    status: int  # exit status

    def cell(self) -> str:
        bad = "" if self.status in (0, 1) else f" (exit {self.status})"
        return f"{self.wall:.1f} s / {self.cpu:.1f} s{bad} | {self.rss / 2**20:.0f} MiB"


def run_once(cmd: list[str]) -> Run:
    """Wall, CPU and peak RSS of `cmd` as a fresh child process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return Run(time.perf_counter() - t0, usage.ru_utime + usage.ru_stime,
               usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))


def fastest(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.wall)


def measure(cmd: list[str], repeat: int = 1) -> Run:
    """The fastest of `repeat` runs of `cmd`."""
    return fastest([run_once(cmd) for _ in range(repeat)])


def measure_pair(base_cmd: list[str], scan_cmd_: list[str], repeat: int = 1) -> tuple[Run, Run]:
    """The fastest of `repeat` runs of each command, the two alternating (dump-op, scan,
    dump-op, scan, ...), so that on a shared machine both meet the same load."""
    base_runs, scan_runs = [], []
    for _ in range(repeat):
        base_runs.append(run_once(base_cmd))
        scan_runs.append(run_once(scan_cmd_))
    return fastest(base_runs), fastest(scan_runs)


def scan_cmd(model: str, fw: str, out: Path, mode: str = "meta") -> list[str]:
    cmd = [sys.executable, "-m", "analyzer.cli", model, "--framework", fw, "-o", str(out),
           "--format", "json", "-q", "--force"]  # --force: --repeat rewrites the same dir
    return cmd + (["--mode", mode] if mode != "auto" else [])


def verdict(model: str, base: Run | None, scan: Run) -> str:
    """The item-7 goal that applies to this row, and whether this run meets it."""
    if scan.status not in (0, 1):
        return "scan failed"
    if base is None:
        ok = scan.wall <= BIG_DECODER_SECONDS and scan.rss <= BIG_DECODER_RSS
        return (f"<= {BIG_DECODER_SECONDS:.0f} s and <= 1 GB: "
                f"{'met' if ok else 'not met'}")
    if model in LONG_STEP:
        speedup = base.wall / scan.wall
        return (f">= {BIG_SPEEDUP:.0f}x faster: {speedup:.1f}x (CPU {base.cpu / scan.cpu:.1f}x), "
                f"{'met' if speedup >= BIG_SPEEDUP else 'not met'}")
    ratio = scan.wall / base.wall
    return f"<= {SMALL_RATIO}x: {'met' if ratio <= SMALL_RATIO else 'not met'}"


def compile_bytecode() -> None:
    """The repository's packages as bytecode, as an installed opscan has them."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "analyzer", "opdb", "codegen"],
                   cwd=ROOT, stdout=subprocess.DEVNULL, check=False)


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average: {os.getloadavg()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="model file names to run")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per command, dump-op and scan alternating; the fastest counts")
    ap.add_argument("--no-auto", action="store_true", help="skip the --mode auto rows")
    ap.add_argument("--large", action="store_true",
                    help="add ResNet-50 at batch 64 (a real step of about a minute, ~6 GB)")
    args = ap.parse_args(argv)

    def wanted(model: str) -> bool:
        if model in LARGE and not args.large:
            return False
        return not args.only or Path(model).name in args.only

    compile_bytecode()

    print(f"`uptime` before: `{uptime()}`\n")
    print("| model | dump-op wall / CPU | dump-op peak RSS | opscan --mode meta wall / CPU | "
          "peak RSS | wall ratio | CPU ratio | goal (item 7) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for model, fw in MODELS:
            if not wanted(model):
                continue
            cmd = scan_cmd(model, fw, Path(tmp) / Path(model).stem)
            if model in META_ONLY:
                base, scan = None, measure(cmd, args.repeat)
            else:
                base, scan = measure_pair([sys.executable, "benchmarks/dump_op.py", model,
                                           "--framework", fw], cmd, args.repeat)
            if base is None:
                left = "(meta only: a real step needs ~1.1 TB) | "
                ratios = " | "
            else:
                left = base.cell()
                ratios = f"{scan.wall / base.wall:.2f} | {scan.cpu / base.cpu:.2f}"
            print(f"| {model} | {left} | {scan.cell()} | {ratios} | "
                  f"{verdict(model, base, scan)} |")
            sys.stdout.flush()
        if not args.no_auto:
            for model, fw in AUTO_ROWS:
                if not wanted(model):
                    continue
                scan = measure(scan_cmd(model, fw, Path(tmp) / (Path(model).stem + "_auto"),
                                        mode="auto"), args.repeat)
                print(f"| {model} (default --mode auto) | | | {scan.cell()} | | | "
                      f"{'finished' if scan.status in (0, 1) else 'failed'} |")
                sys.stdout.flush()
    if any(wanted(m) for m in LONG_STEP):
        fixed = [(code, measure([sys.executable, "-c", code], args.repeat)) for code in FIXED]
        print("\nFixed costs in this run (fresh processes, wall / CPU): " + "; ".join(
            f"`python -c '{code}'` {r.wall:.1f} s / {r.cpu:.1f} s" for code, r in fixed))
    print(f"\n`uptime` after: `{uptime()}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
