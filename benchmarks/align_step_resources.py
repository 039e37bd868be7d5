"""Where a dumped step's CPU time goes beyond its instructions: per-step resource use of the
training process on the worker path, in the layers of align_overhead_instructions.py
(`--parts --worker`), against the undumped step of the same process.

callgrind counts user-space instructions only; this script reads what it cannot see, per
step of each layer (blocks of each layer alternating in every round, so the machine's load
hits all of them): CPU time of this thread (`time.thread_time`) and the system time in it
(getrusage(RUSAGE_THREAD), tick-sampled), minor page faults, voluntary and involuntary context switches,
and the cyclic collector's collections (gc.callbacks). Combined with the instruction counts
of the same layers it gives each layer's time per instruction (`--instructions` takes them
from a previous `align_overhead_instructions.py --parts --worker` run: M instructions per
step of undumped,dispatch,whooks,wrecords,wstaging,worker), which says whether a layer's
CPU time is its instructions or something else (the kernel, faults, cache misses).

    python benchmarks/align_step_resources.py [--model fw:path] [--rounds N] [--block N]
        [--instructions U,D,H,R,S,W]

Wall time is not judged here (the machine is shared); the CPU columns are this thread's.
"""
from __future__ import annotations

import argparse
import gc
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from align_bench import cpu_session, install_stub_hooks  # noqa: E402 (benchmarks/align_bench.py)

LAYERS = ("undumped", "dispatch", "whooks", "wrecords", "wstaging", "worker")
LABELS = {"undumped": "undumped step", "dispatch": "+ hook dispatch", "whooks": "+ hook bodies",
          "wrecords": "+ tensor records", "wstaging": "+ numpy views, staging",
          "worker": "+ message (full worker path)"}


def _usage():
    """(CPU time of this thread (ns clock), its system time (getrusage: tick-sampled, a
    share to read over many steps), minor faults, voluntary, involuntary switches)."""
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return (time.thread_time(), r.ru_stime, r.ru_minflt, r.ru_nvcsw, r.ru_nivcsw)


def measure(framework: str, model: str, rounds: int, block: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from analyzer.align import hooks_torch
    from analyzer.align.stats_worker import WorkerWriter

    entry, s, rec = cpu_session(framework, ROOT / model)
    rec.remove()
    stub_hooks = []

    real_queue, real_stats = hooks_torch.queue_stats, rec._stats

    def records_only(t, batch, on_device=None, compact=False):
        name = hooks_torch._DTYPE_NAMES.get(t.dtype) or str(t.dtype)
        if compact:
            return (name, list(t.shape), t.requires_grad), None
        return dict(hooks_torch._RECORD, dtype=name, shape=list(t.shape)), None

    collections = [0]

    def on_gc(phase, info):
        if phase == "start":
            collections[0] += 1

    out = Path(tempfile.mkdtemp(prefix="opscan-align-res-"))
    writer = WorkerWriter(out)
    res: dict = {k: [] for k in LAYERS}
    gc.callbacks.append(on_gc)
    try:
        def run_block(layer: str, n: int):
            if layer == "dispatch":
                stub_hooks.extend(install_stub_hooks(entry.model))
            elif layer != "undumped":
                rec.install()
                rec.defer_to(writer)
                rec._stats = (lambda obj: {"type": "stub"}) if layer == "whooks" else real_stats
                hooks_torch.queue_stats = records_only if layer == "wrecords" else real_queue
            g0, u0 = collections[0], _usage()
            for i in range(n):
                if layer in ("undumped", "dispatch"):
                    entry.run_step()
                    continue
                rec.begin_step(i)
                with s.step_context(None):
                    entry.run_step()
                d = rec.end_step()
                if layer == "worker":
                    writer.submit(d)
                else:
                    d.stats.release()
            u1, g1 = _usage(), collections[0]
            if layer == "worker":
                writer.drain()
            hooks_torch.queue_stats = real_queue
            rec._stats = real_stats
            if layer == "dispatch":
                for h in stub_hooks:
                    h.remove()
                stub_hooks.clear()
            elif layer != "undumped":
                rec.remove()
                rec.defer_to(None)
            return [(b - a) / n for a, b in zip(u0, u1)] + [(g1 - g0) / n]

        for layer in LAYERS:  # warm-up
            run_block(layer, 3)
        for _ in range(rounds):
            for layer in LAYERS:
                res[layer].append(run_block(layer, block))
    finally:
        gc.callbacks.remove(on_gc)
        writer.close()
        s.close()
        shutil.rmtree(out, ignore_errors=True)
    return {k: [statistics.median(x[i] for x in v) for i in range(6)] for k, v in res.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="torch:examples/torch_transformer.py")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--instructions", default=None,
                    help="M instructions per step of the six layers (align_overhead_instructions.py)")
    args = ap.parse_args()
    fw, model = args.model.split(":", 1)
    if fw != "torch":
        print("torch models only (the layers are torch's recorder's)", file=sys.stderr)
        return 2
    med = measure(fw, model, args.rounds, args.block)
    instr = [float(x) for x in args.instructions.split(",")] if args.instructions else None
    base = med["undumped"]
    print(f"{Path(model).name}: per step, medians of {args.rounds} blocks of {args.block} "
          f"(this thread; cumulative layers)")
    print(f"{'layer':32s} {'cpu ms':>8s} {'sys ms':>7s} {'cpu x':>6s} {'minflt':>7s} {'vcsw':>6s} "
          f"{'ivcsw':>6s} {'gc':>5s}" + ("  M instr  ns/instr (of the layer's increment)" if instr else ""))
    prev = None
    for i, layer in enumerate(LAYERS):
        cpu, sy, flt, vcs, ivcs, g = med[layer]
        line = (f"{LABELS[layer]:32s} {cpu * 1e3:8.3f} {sy * 1e3:7.3f} {cpu / base[0]:6.2f} "
                f"{flt:7.1f} {vcs:6.2f} {ivcs:6.2f} {g:5.2f}")
        if instr:
            if prev is None:
                line += f"  {instr[i]:7.2f}  {cpu / (instr[i] * 1e6) * 1e9:.3f}"
            else:
                d_i = instr[i] - instr[i - 1]
                d_c = cpu - prev[0]
                line += f"  {d_i:+7.2f}  {d_c / (d_i * 1e6) * 1e9 if d_i > 0 else float('nan'):.3f}"
        prev = med[layer]
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
