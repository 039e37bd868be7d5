"""`opscan log` streaming: throughput against `grep -c` on the same file, and peak RSS.

Generates a realistic Paddle GLOG_v=3 log (glog-prefixed noise lines from the kernel factory,
tensor copies and the executor, with one fallback / black-list / not-registered line in
about every 200 lines, one near miss (a trigger word but no event) in every 100, some
binary garbage) of `--size` bytes, then in child processes:
  - baseline: `grep -c 'kernel: '` (counts the candidate lines; the file is read once
    before timing so both runs read from the page cache),
  - `opscan log FILE --framework paddle --json` (through the library call in a child),
and prints time, throughput, the ratio to grep, and peak RSS; then the same scan on a file
a tenth the size, so a flat RSS shows as a ratio near 1.

    python benchmarks/log_scan.py [--size 1G] [--dir DIR] [--keep]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NOISE = [
    "I1121 22:40:{s:02d}.{us:06d}  4331 dygraph_functions.cc:61880] Running AD API: {op}\n",
    "I1121 22:40:{s:02d}.{us:06d}  4331 tensor_utils.cc:57] TensorCopy 32, 40 from Place(npu:0) to Place(cpu)\n",
    "I1121 22:40:{s:02d}.{us:06d}  4331 kernel_factory.cc:300] {op} kernel: {{\"input\":[\"npu, NCHW, float32\"],\"output\":[\"npu, NCHW, float32\"]}}\n",
    "I1121 22:40:{s:02d}.{us:06d}  4331 api.cc:1024] {op} API kernel key: (npu, NCHW, float32)\n",
    "[2025-11-21 22:40:{s:02d},120] [    INFO] - loss: 2.3019, lr: 0.001, step {us}\n",
]
# lines that contain a trigger substring but are no event (1% of lines): the matcher runs on them
NEAR_MISS = [
    "I1121 22:40:{s:02d}.{us:06d}  4331 eager_tensor.cc:88] the grad op is missing its input, skip {op}\n",
    "W1121 22:40:{s:02d}.{us:06d}  4331 op_compat.cc:51] {op} is not registered as a sparse kernel\n",
]
SIGNAL = [
    "I1121 22:40:{s:02d}.{us:06d}  4331 kernel_factory.cc:123] missing npu kernel: {op}, expected_kernel_key:(npu, Undefined(AnyLayout), float64), fallbacking to CPU one!\n",
    "I1121 22:40:{s:02d}.{us:06d}  4331 kernel_factory.cc:115] phi in black list npu kernel: {op}, expected_kernel_key:(npu, Undefined(AnyLayout), float32), fallback to CPU one!\n",
    "NotFoundError: The kernel with key (npu, Undefined(AnyLayout), complex64) of kernel `{op}` is not registered and fail to fallback to CPU one.\n",
]
OPS = ["conv2d", "argsort", "matmul", "adam", "warpctc", "angle", "pool2d_grad", "layer_norm"]


def parse_size(text: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * mult[text[-1].upper()]) if text[-1].upper() in mult else int(text)


def generate(path: Path, size: int, seed: int = 0) -> int:
    """Write about `size` bytes of log; returns the number of signal lines."""
    rng = random.Random(seed)
    block = []
    signals = 0
    for i in range(20000):
        x = rng.random()
        fmt = SIGNAL[i % 3] if x < 0.005 else NEAR_MISS[i % 2] if x < 0.015 else rng.choice(NOISE)
        signals += fmt in SIGNAL
        block.append(fmt.format(s=i % 60, us=rng.randrange(10 ** 6), op=rng.choice(OPS)))
    block.append("\x00\xff\xfe binary garbage \x1b[31m\n")
    data = "".join(block).encode("utf-8", errors="surrogateescape")
    reps = max(1, size // len(data))
    with open(path, "wb") as f:
        for _ in range(reps):
            f.write(data)
    return signals * reps


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def child(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one command (CPU: user + sys of the child)."""
    c0, t0 = _cpu_children(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, _cpu_children() - c0, out


SCAN = ("import sys, resource, time; sys.path.insert(0, {root!r});"
        "t0 = time.perf_counter();"
        "from analyzer.logscan import scan_logs;"
        "r = scan_logs([sys.argv[1]], 'paddle');"
        "s = resource.getrusage(resource.RUSAGE_SELF); c = resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(sum(o.count for o in r.ops), s.ru_maxrss, max(s.ru_maxrss, c.ru_maxrss),"
        "      time.perf_counter() - t0)")


def scan(path: Path) -> tuple[float, float, int, int, int]:
    """(wall s, CPU s incl. its grep/wc children, peak RSS of the Python process,
    peak RSS of any child, events found) of one scan in a fresh interpreter; wall and
    CPU exclude nothing (interpreter start-up included)."""
    c0, t0 = _cpu_children(), time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SCAN.format(root=str(ROOT)), str(path)],
                         check=True, capture_output=True, text=True).stdout.split()
    return (time.perf_counter() - t0, _cpu_children() - c0, int(out[1]) * 1024,
            int(out[2]) * 1024, int(out[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    size = parse_size(args.size)
    tmp = Path(tempfile.mkdtemp(prefix="opscan-logbench-", dir=args.dir))
    big, small = tmp / "big.log", tmp / "small.log"
    try:
        t0 = time.perf_counter()
        expected = generate(big, size)
        generate(small, size // 10)
        gen = time.perf_counter() - t0
        actual = big.stat().st_size
        print(f"generated {actual / 2**20:.0f} MiB ({expected} signal lines) in {gen:.1f} s")
        # warm the page cache for both contenders (output discarded: captured output would
        # grow this process, and children inherit its peak RSS until they exec)
        subprocess.run(["cat", str(big), str(small)], check=True, stdout=subprocess.DEVNULL)
        mib = actual / 2**20
        base1 = ["grep", "-c", "fallback", str(big)]
        base2 = ["grep", "-c", "-F", "-e", "missing ", "-e", "in black list ", "-e",
                 "The kernel with key ", "-e", "Can not fallback ", str(big)]
        g1_w, g1_c, g1_out = child(base1)
        g2_w, g2_c, g2_out = child(base2)
        s_w, s_c, s_rss, s_child_rss, found = scan(big)
        m_w, m_c, m_rss, _, _ = scan(small)
        print(f"{'':34}{'wall s':>8}{'CPU s':>8}{'MiB/s (CPU)':>13}")
        print(f"{'grep -c fallback':34}{g1_w:8.2f}{g1_c:8.2f}{mib / g1_c:13.1f}  ({g1_out.strip()} lines)")
        print(f"{'grep -c -F <the 4 paddle triggers>':34}{g2_w:8.2f}{g2_c:8.2f}{mib / g2_c:13.1f}  ({g2_out.strip()} lines)")
        print(f"{'opscan log (fresh interpreter)':34}{s_w:8.2f}{s_c:8.2f}{mib / s_c:13.1f}  "
              f"({found} events; expected {expected})")
        print(f"ratio opscan / grep -c fallback:    wall {s_w / g1_w:.2f}x, CPU {s_c / g1_c:.2f}x")
        print(f"ratio opscan / grep -c triggers:    wall {s_w / g2_w:.2f}x, CPU {s_c / g2_c:.2f}x  (goal <= 2x)")
        print(f"peak RSS, {mib:.0f} MiB file: {s_rss / 2**20:.1f} MiB (python), "
              f"{s_child_rss / 2**20:.1f} MiB (largest child)")
        print(f"peak RSS, {small.stat().st_size / 2**20:.0f} MiB file: {m_rss / 2**20:.1f} MiB "
              f"(ratio {s_rss / m_rss:.2f}: flat when near 1)")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        if found != expected:
            print("MISMATCH: events found differ from the generated signal lines", file=sys.stderr)
            return 1
    finally:
        if not args.keep:
            for p in (big, small):
                if p.exists():
                    os.unlink(p)
            tmp.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
