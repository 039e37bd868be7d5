"""Instructions per traced step of a real-mode scan against the plain step, counted by
valgrind's callgrind: a load-independent companion of scan_cost.py (whose wall and CPU
ratios swing by more than the per-step cost being cut when others load the machine).

Each measurement runs the model in a fresh process under callgrind with instrumentation
off until the steps to count (`callgrind_control -i on/off` around them, after warm-up
steps), so importing the framework and building the model cost no instrumented time.
Modes:
  plain:  `entry.run_step()`, nothing else;
  traced: what a real-mode scan does per further step: the recorder's wrappers and hooks
          and the framework profiler around the step, then that step's profiler tree
          walked into launches and calls (`collect_launches` + `build_calls`) and the
          repeated steps found (`find_repeats`), with the heap frozen as the `opscan`
          program freezes it (`analyzer.trace.heap`: without it every count included
          young and full collections walking Paddle's million-object heap, which no scan
          pays).
Instructions are not time, but two versions of the code compare exactly.

    python benchmarks/scan_step_instructions.py [--models fw:path,...] [--steps N] [--traced-only]

Needs valgrind (apt-get install valgrind). Paddle models only by default: the torch
tracer's per-step cost is measured by scan_cost.py's torch rows.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from callgrind import count_instructions, instrument, valgrind_missing  # benchmarks/callgrind.py

ROOT = Path(__file__).resolve().parents[1]
MODELS = [("paddle", "examples/paddle_mobilenetv3.py")]


def _child(framework: str, model: str, mode: str, steps: int) -> None:
    """Runs inside valgrind: two warm-up steps, then `steps` counted steps of `mode`."""
    sys.path.insert(0, str(ROOT))
    if framework != "paddle":
        raise SystemExit(f"{framework}: only paddle models are measured here")
    from analyzer.model import Trace
    from analyzer.step_repeats import find_repeats
    from analyzer.trace import heap
    from analyzer.trace.entry import load_entry
    from analyzer.trace.paddle import tracer
    from analyzer.trace.paddle.real import Recorder, build_calls, collect_launches

    entry = load_entry(ROOT / model, framework)
    for _ in range(2):
        entry.run_step()
    if mode == "plain":
        instrument("on")
        for _ in range(steps):
            entry.run_step()
        instrument("off")
        return
    heap.enable()  # as the opscan program does (analyzer.cli.main)
    rec = Recorder(entry.model)
    with rec.installed(), heap.frozen_heap():
        prof = tracer._profiler()
        prof.start()
        rec.enabled = True
        rec.instant("begin")
        entry.run_step()  # the first traced step (optimizer state exists already)
        rec.instant("stepend")
        instrument("on")
        for _ in range(steps):
            entry.run_step()
            rec.instant("stepend")
        rec.enabled = False
        prof.stop()
        launches = collect_launches(prof.profiler_result)
        calls, _ = build_calls(launches, rec)
        find_repeats(Trace(framework=framework, mode="real", model=model, steps=steps + 1,
                           calls=calls))
        instrument("off")
        tracer._release(prof)


def count(framework: str, model: str, mode: str, steps: int) -> int:
    """Instructions of `steps` steps (plus the fixed cost of the toggles and, traced, of
    stopping the profiler and walking the first traced step: measured apart with
    steps=0 and subtracted by the caller)."""
    return count_instructions(__file__, f"{framework}:{model}:{mode}:{steps}",
                              {"OMP_NUM_THREADS": "1"})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: paddle MobileNetV3)")
    ap.add_argument("--steps", type=int, default=3, help="counted steps per measurement (default 3)")
    ap.add_argument("--traced-only", action="store_true",
                    help="count the traced steps only (to compare two versions of the code)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        fw, model, mode, steps = args.child.split(":")
        _child(fw, model, mode, int(steps))
        return 0
    if args.steps < 1:
        ap.error(f"--steps must be at least 1, got {args.steps}")
    if valgrind_missing():
        return 2
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    for fw, model in models:
        traced = (count(fw, model, "traced", args.steps)
                  - count(fw, model, "traced", 0)) / args.steps
        if args.traced_only:
            print(f"{Path(model).name:26s} {fw:6s} traced {traced / 1e6:8.2f} M instr/step",
                  flush=True)
            continue
        plain = (count(fw, model, "plain", args.steps) - count(fw, model, "plain", 0)) / args.steps
        print(f"{Path(model).name:26s} {fw:6s} plain {plain / 1e6:8.2f} M instr/step  traced "
              f"{traced / 1e6:8.2f} M instr/step  ratio {traced / plain:.2f}x  "
              f"overhead {(traced - plain) / 1e6:.2f} M", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
