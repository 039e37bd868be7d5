"""Instructions per step of `opscan align dump --level module` against the undumped step,
counted by valgrind's callgrind: a load-independent companion of align_overhead.py (whose
CPU times swing +-0.2x on the small models when others load the machine).

Each measurement runs the model in a fresh process under callgrind with instrumentation
off until the steps to count (`callgrind_control -i on/off` around them, after warm-up
steps), so importing the framework costs no instrumented time (~1 min per measurement
here). "dumped" is what `opscan align dump` does per step (begin_step, the step with hooks
and statistics, end_step, the three files encoded and handed to the background writer,
which is closed before counting stops; callgrind counts every thread). Instructions are not time (numpy's and the C
encoder's code runs at a different IPC than the interpreter's), but two versions of the
code compare exactly.

    python benchmarks/align_overhead_instructions.py [--models fw:path,...] [--steps N] [--parts] [--worker]

--parts: also the dumped step built up in layers, each counted the same way (torch only):
"dispatch" (the same hooks registered, each returning at once: what torch's hook calls
cost), "hooks" (the recorder with each tensor's statistics replaced by an empty record,
up to end_step), "statistics" (the real statistics and end_step); "dumped" adds encoding
and writing the files. With --worker, the training process's side of the worker in
layers too: "dispatch", "hooks", "records" (each tensor's record made, nothing read from
it: no numpy view, no staging), "staging" (the numbers copied into the shared slot, up to
end_step), "worker" (+ the step's message to the worker). Differences of consecutive
layers say what each costs, whatever the machine's load.

Needs valgrind (apt-get install valgrind); torch models only by default (Paddle's run
under valgrind takes several minutes per measurement).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from align_bench import cpu_session, install_stub_hooks  # benchmarks/align_bench.py
from callgrind import count_instructions, instrument, valgrind_missing  # benchmarks/callgrind.py

ROOT = Path(__file__).resolve().parents[1]
MODELS = [("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_lstm_attention.py")]


# --parts: the dumped step's layers, each including the ones before it
PARTS = ("dispatch", "hooks", "statistics", "dumped")
LABELS = {"dispatch": "hook dispatch", "hooks": "hook bodies", "statistics": "statistics and flush",
          "dumped": "encoding and writing"}
# --parts --worker: the training process's side of the worker in layers ("dispatch" as above;
# "whooks" the hooks layer with the worker's batch; "wrecords" each tensor's record made, no
# numpy view, no staging; "wstaging" the numbers copied into the shared slot, up to end_step;
# "worker" + the step's message)
WORKER_PARTS = ("dispatch", "whooks", "wrecords", "wstaging", "worker")
WORKER_LABELS = {"dispatch": "hook dispatch", "whooks": "hook bodies", "wrecords": "tensor records",
                 "wstaging": "numpy views and staging", "worker": "message to the worker"}


def _child(framework: str, model: str, mode: str, steps: int) -> None:
    """Runs inside valgrind: warm-up, then `steps` counted steps of `mode`."""
    sys.path.insert(0, str(ROOT))
    if framework == "torch":
        import torch
        torch.set_num_threads(1)
    from analyzer.align.layout import StepWriter

    entry, s, rec = cpu_session(framework, ROOT / model)
    if mode in ("undumped", "dispatch"):
        rec.remove()
    if mode == "dispatch":  # the recorder's hooks, each returning at once
        install_stub_hooks(entry.model)
    if mode in ("hooks", "whooks"):  # every tensor's statistics an empty record
        rec._stats = lambda obj: {"type": "stub"}
    if mode == "wrecords":  # each tensor's record made, its numbers neither viewed nor staged
        import analyzer.align.hooks_torch as hooks_torch

        def records_only(t, batch, on_device=None, compact=False):
            name = hooks_torch._DTYPE_NAMES.get(t.dtype) or str(t.dtype)
            if compact:  # (the worker path's record: queue_stats)
                return (name, list(t.shape), t.requires_grad), None
            return dict(hooks_torch._RECORD, dtype=name, shape=list(t.shape)), None
        hooks_torch.queue_stats = records_only
    out = Path(tempfile.mkdtemp(prefix="opscan-align-ir-"))
    if mode.startswith("w"):  # the statistics, encoding and writing in the worker process
        from analyzer.align.stats_worker import WorkerWriter

        writer = WorkerWriter(out)
        rec.defer_to(writer)
    else:
        writer = StepWriter(out)

    def step(i: int) -> None:
        if mode in ("undumped", "dispatch"):
            entry.run_step()
            return
        rec.begin_step(i)
        with s.step_context(None):
            entry.run_step()
        d = rec.end_step()
        if mode in ("dumped", "worker"):  # (the layers below stop at end_step)
            writer.submit(d)
        elif mode in WORKER_PARTS:  # (stopped at end_step: the slot handed back unsent)
            d.stats.release()

    try:
        for i in range(3):
            step(i)
        if mode.startswith("w"):
            writer.drain()
        else:
            writer.close()
            writer = StepWriter(out)
        instrument("on")
        for i in range(steps):
            step(100 + i)
        if mode.startswith("w"):
            writer.drain()  # the last step's files written (by the worker: not counted)
        else:
            writer.close()  # the last step's files written
        instrument("off")
        if mode.startswith("w"):
            writer.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)


def count(framework: str, model: str, mode: str, steps: int) -> int:
    """Instructions of `steps` steps (plus the fixed cost of the two toggles, measured
    apart with steps=0)."""
    return count_instructions(__file__, f"{framework}:{model}:{mode}:{steps}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: the torch transformer and LSTM)")
    ap.add_argument("--steps", type=int, default=10, help="counted steps per measurement (default 10)")
    ap.add_argument("--parts", action="store_true", help="also count the dumped step in layers "
                    "(dispatch, hooks, statistics; torch models; with --worker also the training "
                    "process's side of the worker: dispatch, hooks, records, staging, message)")
    ap.add_argument("--worker", action="store_true", help="also count the training process's "
                    "instructions when the statistics, encoding and writing go to the worker process "
                    "(stats_worker; callgrind does not follow the worker: --trace-children=no)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        fw, model, mode, steps = args.child.split(":")
        _child(fw, model, mode, int(steps))
        return 0
    if valgrind_missing():
        return 2
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    for fw, model in models:
        base = count(fw, model, "undumped", 0)  # the toggles themselves
        plain = (count(fw, model, "undumped", args.steps) - base) / args.steps
        dumped = (count(fw, model, "dumped", args.steps) - base) / args.steps
        print(f"{Path(model).name:26s} {fw:6s} undumped {plain / 1e6:7.2f} M instr/step  dumped "
              f"{dumped / 1e6:7.2f} M instr/step  ratio {dumped / plain:.2f}x  "
              f"overhead {(dumped - plain) / 1e6:.2f} M", flush=True)
        if args.worker:
            w = (count(fw, model, "worker", args.steps) - base) / args.steps
            print(f"{'':26s} {'':6s} worker process: training process {w / 1e6:7.2f} M instr/step  "
                  f"ratio {w / plain:.2f}x  overhead {(w - plain) / 1e6:.2f} M (the worker's own not counted)",
                  flush=True)
        if args.parts and fw == "torch":
            last, line, done = plain, [], {}
            for part in PARTS:
                n = dumped if part == "dumped" else (count(fw, model, part, args.steps) - base) / args.steps
                done[part] = n
                line.append(f"{LABELS[part]} +{(n - last) / 1e6:.2f} M")
                last = n
            print(f"{'':26s} {'':6s} layers: " + ", ".join(line), flush=True)
            if args.worker:
                last, line = plain, []
                for part in WORKER_PARTS:
                    n = w if part == "worker" else done.get(part) or \
                        (count(fw, model, part, args.steps) - base) / args.steps
                    line.append(f"{WORKER_LABELS[part]} +{(n - last) / 1e6:.2f} M")
                    last = n
                print(f"{'':26s} {'':6s} worker layers (training process): " + ", ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
