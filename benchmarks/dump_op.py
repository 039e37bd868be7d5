"""The "dump op" baseline porting guides use: one real CPU training step under the
framework's profiler, printing the profiled op names. Run as its own process by
benchmarks/scan_vs_dump_op.py so that start-up and imports count, as they do for opscan.

    python benchmarks/dump_op.py MODEL.py --framework torch|paddle
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--framework", required=True, choices=("torch", "paddle"))
    args = ap.parse_args()
    from analyzer.trace.entry import load_entry

    entry = load_entry(args.model, args.framework)
    if args.framework == "torch":
        import torch

        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            entry.run_step()
        names = {e.name for e in prof.events() if e.name.startswith("aten::")}
    else:
        from paddle import profiler

        prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                                 on_trace_ready=lambda _p: None)
        prof.start()
        entry.run_step()
        prof.stop()
        names = set()
        todo = list(prof.profiler_result.get_data().values())
        while todo:
            node = todo.pop()
            names.add(node.name)
            todo.extend(node.children_node)
    print(len(names), "ops")


if __name__ == "__main__":
    main()
