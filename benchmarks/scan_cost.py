"""What a real-mode scan costs against the plain training step it traces.

For each model, in one run, each in a fresh child process (peak RSS from the child's own
rusage, wall time around the child):
  plain: the model's N training steps and nothing else (import, build, N steps);
  scan:  `python -m analyzer.cli MODEL --mode M --steps N -q ...` (import, build, trace N
         steps, classify, write every report format). M is --mode: `auto` (default), what
         `opscan MODEL.py` runs, so it includes auto's one-step meta trace for the memory
         estimate (a --script skips it); `real`, the real-mode trace alone.
and prints scan/plain ratios for N = 1..4, also of CPU time (user + system), which a
machine shared with other jobs distorts far less than wall time. Goals (issue 16): peak
RSS <= 1.3x plain and flat across N; wall <= 1.2x plain.

Models: the bundled examples of both frameworks (build() contract; torch_decoder_7b is
meta-only) and
benchmarks/models/paddle_det_train.py, a PP-OCR-det-like training script (argparse,
`--script` mode) whose plain step needs >= 2 GiB.

    python benchmarks/scan_cost.py [--steps 1,2,3,4] [--only NAME] [--skip NAME] [--json out.json]
                                   [--threads N] [--repeat N] [--mode auto|real]

--repeat N runs each pair N times, alternating (plain, scan, plain, ...) so that both meet
the same load, and keeps the fastest of each (by wall time). Before measuring, the
repository's packages are compiled to bytecode (`compileall`, as `pip install` does):
with PYTHONDONTWRITEBYTECODE set (as on the shared machine) a scan would otherwise compile
every opscan module changed since the last compile on each run (~0.2 s for all of them),
a cost no installed opscan pays and the plain run hardly has.

--threads N runs both children with N intra-op threads (OMP_NUM_THREADS, MKL_NUM_THREADS):
on a machine shared with other jobs, idle OpenMP workers spin while the traced step runs
Python between ops and inflate the scan's CPU time far more than the plain run's; with
--threads 1 the CPU ratio measures the work each side does.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Model:
    name: str
    path: Path
    framework: str
    script_args: tuple[str, ...] = ()  # a script (run as __main__), else a build() file
    steps_flag: str = ""  # the script's own option for its number of iterations


MODELS = [
    Model("torch_resnet50", ROOT / "examples/torch_resnet50.py", "torch"),
    Model("torch_shufflenetv2", ROOT / "examples/torch_shufflenetv2.py", "torch"),
    Model("torch_transformer", ROOT / "examples/torch_transformer.py", "torch"),
    Model("torch_lstm_attention", ROOT / "examples/torch_lstm_attention.py", "torch"),
    Model("hf_convnext", ROOT / "examples/hf_convnext.py", "torch"),
    Model("hf_llama_decoder", ROOT / "examples/hf_llama_decoder.py", "torch"),
    Model("paddle_resnet50", ROOT / "examples/paddle_resnet50.py", "paddle"),
    Model("paddle_mobilenetv3", ROOT / "examples/paddle_mobilenetv3.py", "paddle"),
    Model("paddle_crnn", ROOT / "examples/paddle_crnn.py", "paddle"),
    Model("paddle_det_train (script, >=2 GiB)", ROOT / "benchmarks/models/paddle_det_train.py",
          "paddle", ("-c", "det.yml", "-o", "Train.batch_size=4"), "--iters"),
]

# The plain run: the same build() + step contract opscan traces, nothing else.
_PLAIN_BUILD = """
import sys
from analyzer.trace.entry import load_entry
entry = load_entry(sys.argv[1], sys.argv[2])
for _ in range(int(sys.argv[3])):
    entry.run_step()
"""


@dataclass
class Run:
    seconds: float
    peak_rss: int  # bytes
    rc: int
    cpu_seconds: float = 0.0  # user + system of the child: steadier than wall on a busy machine
    stderr: str = field(default="", repr=False)


_THREADS: dict[str, str] = {}  # --threads: the intra-op thread settings of both children


def _child(cmd: list[str]) -> Run:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TORCH_DEVICE_BACKEND_AUTOLOAD="0", **_THREADS)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Run(seconds, usage.ru_maxrss * 1024, proc.returncode,
               cpu_seconds=usage.ru_utime + usage.ru_stime, stderr=text[-2000:])


def plain(m: Model, steps: int) -> Run:
    if m.script_args:
        return _child([sys.executable, str(m.path), *m.script_args, m.steps_flag, str(steps)])
    return _child([sys.executable, "-c", _PLAIN_BUILD, str(m.path), m.framework, str(steps)])


def scan(m: Model, steps: int, out: Path, mode: str = "auto") -> Run:
    cmd = [sys.executable, "-m", "analyzer.cli", str(m.path), "--framework", m.framework,
           "--mode", mode, "--steps", str(steps), "-o", str(out), "--force", "-q"]
    if m.script_args:
        # the script's own loop would run longer: opscan stops it after --steps
        cmd += ["--script", "--", *m.script_args, m.steps_flag, str(steps + 100)]
    return _child(cmd)


def fastest_pair(m: Model, n: int, out: Path, repeat: int, mode: str) -> tuple[Run, Run]:
    """The fastest plain run and the fastest scan of `repeat` alternating runs of each."""
    plains, scans = [], []
    for i in range(repeat):
        plains.append(plain(m, n))
        scans.append(scan(m, n, out / str(i), mode))
    return (min(plains, key=lambda r: (r.rc != 0, r.seconds)),
            min(scans, key=lambda r: (r.rc != 0, r.seconds)))


def compile_bytecode() -> None:
    """The repository's packages as bytecode, as an installed opscan has them."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "analyzer", "opdb", "codegen"],
                   cwd=ROOT, stdout=subprocess.DEVNULL, check=False)


def gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", default="1,2,3,4", help="comma-separated step counts")
    ap.add_argument("--only", default="", help="run only models whose name contains this")
    ap.add_argument("--skip", default="", help="skip models whose name contains this")
    ap.add_argument("--json", default="", help="also write the figures here")
    ap.add_argument("--threads", type=int, default=None,
                    help="intra-op threads of both children (default: the frameworks' own)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per command, alternating; the fastest counts (default 1)")
    ap.add_argument("--mode", choices=("auto", "real"), default="auto",
                    help="the scan's --mode: auto (default, what `opscan MODEL.py` runs) or real")
    args = ap.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        ap.error(f"--threads must be at least 1, got {args.threads}")
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    compile_bytecode()
    _THREADS.clear()
    if args.threads:
        _THREADS.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    step_list = [int(s) for s in args.steps.split(",")]
    rows = []
    print(f"scan: --mode {args.mode}")
    print("| model | steps | plain RSS | scan RSS | RSS ratio | plain wall | scan wall | wall ratio "
          "| plain CPU | scan CPU | CPU ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for m in MODELS:
            if args.only and args.only not in m.name or args.skip and args.skip in m.name:
                continue
            for n in step_list:
                p, s = fastest_pair(m, n, Path(tmp) / f"{m.name}-{n}", args.repeat,
                                    args.mode)
                if p.rc != 0 or s.rc not in (0,):
                    print(f"| {m.name} | {n} | failed: plain rc {p.rc}, scan rc {s.rc} | "
                          f"{(p.stderr or s.stderr).strip().splitlines()[-1:]} |||||")
                    continue
                row = dict(model=m.name, steps=n, mode=args.mode, plain_rss=p.peak_rss, scan_rss=s.peak_rss,
                           rss_ratio=s.peak_rss / p.peak_rss, plain_s=p.seconds,
                           scan_s=s.seconds, wall_ratio=s.seconds / p.seconds,
                           plain_cpu=p.cpu_seconds, scan_cpu=s.cpu_seconds,
                           cpu_ratio=s.cpu_seconds / p.cpu_seconds)
                rows.append(row)
                print(f"| {m.name} | {n} | {gib(p.peak_rss)} | {gib(s.peak_rss)} | "
                      f"{row['rss_ratio']:.2f} | {p.seconds:.1f} s | {s.seconds:.1f} s | "
                      f"{row['wall_ratio']:.2f} | {p.cpu_seconds:.1f} s | {s.cpu_seconds:.1f} s | "
                      f"{row['cpu_ratio']:.2f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
