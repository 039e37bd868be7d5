"""Counting instructions of part of a Python process with valgrind's callgrind, for the
load-independent benchmarks (align_overhead_instructions.py, scan_step_instructions.py,
scan_fixed_instructions.py).

The measuring script re-runs itself under callgrind with instrumentation off
(`count_instructions`); the child turns it on and off around the code to count
(`instrument`). Only what runs between the two toggles is counted, in every thread.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def valgrind_missing() -> bool:
    """True, after a one-line message on stderr, when valgrind's callgrind is not installed."""
    if shutil.which("valgrind") and shutil.which("callgrind_control"):
        return False
    print("valgrind not found: apt-get install valgrind", file=sys.stderr)
    return True


def instrument(state: str) -> None:
    """Turn callgrind's instrumentation of this process "on" or "off"."""
    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())],
                   stdout=subprocess.DEVNULL, check=False)
    time.sleep(0.5)  # the request is picked up asynchronously


def count_instructions(script: str, child: str, env: dict | None = None) -> int:
    """Instructions counted while `python script --child CHILD` ran under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=no",
               f"--callgrind-out-file={tmp}/cg.out", sys.executable, script, "--child", child]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if r.returncode != 0 or not m:
            raise SystemExit(f"{child}: valgrind failed (exit {r.returncode}):\n"
                             f"{r.stderr[-2000:]}")
        return int(m.group(1))
