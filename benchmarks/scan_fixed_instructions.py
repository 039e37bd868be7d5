"""Instructions of a real-mode scan's own work around the trace, counted by valgrind's
callgrind: everything `analyzer.scan.scan` does besides tracing (opening opdb, the target,
classifying, the step repeats, the op graph, the fallback cost, the blacklist, the
report model) and writing every report file (`write_reports`: validating, rendering
md/html/csv/xlsx/json, the GraphML, the writes), the first time in the process, as one
`opscan MODEL --mode real` pays it (lazy imports such as Jinja's included). A
load-independent companion of scan_cost.py for the fixed cost after (and before) the
trace, as scan_step_instructions.py is for a further traced step.

The child runs the scan in a fresh process under callgrind with instrumentation off except
inside `scan()` and `write_reports()`, and off again while the framework's tracer runs
(`callgrind_control -i on/off` around it), with the heap frozen as the `opscan` program
freezes it. Instructions are not time, but two versions of the code compare exactly.
The files' fsyncs cost wall time, not instructions: they are not in the count.

    python benchmarks/scan_fixed_instructions.py [--models fw:path,...] [--steps N]

Needs valgrind (apt-get install valgrind).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from callgrind import count_instructions, instrument, valgrind_missing  # benchmarks/callgrind.py

ROOT = Path(__file__).resolve().parents[1]
MODELS = [("paddle", "examples/paddle_mobilenetv3.py")]


def _child(framework: str, model: str, steps: int) -> None:
    """Runs inside valgrind: one real-mode scan of `model`, counted outside the trace."""
    sys.path.insert(0, str(ROOT))
    from analyzer import scan as scan_module
    from analyzer.report.writer import write_reports
    from analyzer.trace import heap

    heap.enable()  # as the opscan program does (analyzer.cli.main)
    real_trace = scan_module.trace_model

    def trace_uncounted(opts, adapted):
        instrument("off")
        try:
            return real_trace(opts, adapted)
        finally:
            instrument("on")

    scan_module.trace_model = trace_uncounted
    with tempfile.TemporaryDirectory() as out:
        instrument("on")
        result = scan_module.scan(scan_module.ScanOptions(
            model=str(ROOT / model), framework=framework, mode="real", steps=steps))
        write_reports(result.report.to_json(), out, graphml=result.graphml)
        instrument("off")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: paddle MobileNetV3)")
    ap.add_argument("--steps", type=int, default=4, help="traced steps (default 4)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        fw, model, steps = args.child.split(":")
        _child(fw, model, int(steps))
        return 0
    if args.steps < 1:
        ap.error(f"--steps must be at least 1, got {args.steps}")
    if valgrind_missing():
        return 2
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    for fw, model in models:
        n = count_instructions(__file__, f"{fw}:{model}:{args.steps}", {"OMP_NUM_THREADS": "1"})
        print(f"{Path(model).name:26s} {fw:6s} steps {args.steps}  scan's own work "
              f"{n / 1e6:8.2f} M instr", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
