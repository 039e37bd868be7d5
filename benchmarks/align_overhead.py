"""Cost of `opscan align dump --level module`: step time against an undumped step of the
same process, and bytes of dump.json per module call.

Per model: one recorder (as `opscan align dump` makes one per run); rounds of a block of
undumped steps followed by a block of dumped steps, so the machine's load hits both (a
first round of each kind is a warm-up: the dumped one captures the call sites, once per
run). A dumped block is what `opscan align dump` does per step: begin_step, the step with
hooks and statistics, end_step (one conversion of the step's statistics), the step handed
to the background writer; the block's time includes waiting for the writer to finish its
last step. Installing and removing the hooks (once per run in a real dump) is timed apart.
Each block is timed in wall time and in CPU time of this process, all threads (user+sys
from getrusage: what the dump costs whatever else loads the machine), and with the worker
process (`--writer worker`, the default, as `opscan align dump`: statistics, encoding and
writing in analyzer/align/stats_worker.py) its CPU time too (/proc/PID/schedstat: "total
cpu"); `--writer both` alternates an in-process block (OPSCAN_ALIGN_WORKER=0: statistics
and encoding in this process, files on a writer thread) and a worker block in every round.
Each row also says how many of the machine's cores sat idle during it (/proc/stat): the
worker shortens the step only where a core is free. "tail": the wait at each block's end
for the writer's last step(s) (the worker's, or the writer thread's), per step of the
block: part of the wall ratio, which a dump of N steps pays once at its end rather than
once per `--block` steps; the ratio without it is printed beside it.
An undumped step is the bare step, outside the dump's step context (its dropout
interception is part of the dump's cost). Ratio = median dumped step / median undumped step; the fastest-block ratio is printed too.
Criterion (issue 15): <= 1.5x and <= 2 KB per module call (forward + backward record +
parameter gradients); the in-process rows judged on CPU time, the worker rows on wall time
(the step the user sees; the training process's CPU alone would hide the worker's).

    python benchmarks/align_overhead.py [--models fw:path,...] [--rounds N] [--block N] [--threads N]
        [--breakdown] [--writer worker|thread|both] [--pin]

The default set: the bundled examples, transformers' Llama decoder and ConvNeXt from small
configs, and three rows at real sizes (benchmarks/models/: BERT-base widths at sequence 128,
ConvNeXt-tiny widths at 224x224, paddle.vision MobileNetV3 at batch 32 of 224x224; 3 rounds
of one step each, about a minute per row).

--breakdown also times, in every round, blocks of the dumped step cut short: hooks only
(statistics replaced by an empty record), + statistics, + encoding the files (CPU time per
step; the full dumped step adds the writing).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the bundled toy models, then real library models built from config as a porting team
# would bring them (transformers' Llama decoder and ConvNeXt; the two Paddle models marked
# paddle.vision are `paddle.vision.models` unchanged)
MODELS = [("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_lstm_attention.py"),
          ("torch", "examples/torch_shufflenetv2.py"), ("torch", "examples/torch_resnet50.py"),
          ("torch", "examples/hf_llama_decoder.py"), ("torch", "examples/hf_convnext.py"),
          ("paddle", "examples/paddle_crnn.py"), ("paddle", "examples/paddle_mobilenetv3.py"),
          ("paddle", "examples/paddle_resnet50.py"),
          # real sizes: BERT-base's and ConvNeXt-tiny's widths at sequence 128 / 224x224 (fewer
          # layers of the same sizes), paddle.vision's MobileNetV3 at batch 32 of 224x224: steps
          # of about a second, where the statistics' passes over large tensors are the cost
          ("torch", "benchmarks/models/hf_bert_base_seq128.py"),
          ("torch", "benchmarks/models/hf_convnext_tiny_224.py"),
          ("paddle", "benchmarks/models/paddle_mobilenetv3_b32_224.py")]
# (rounds, steps per block) of the rows whose step takes about a second (unless --rounds/--block)
SHORT_RUN = {"benchmarks/models/hf_bert_base_seq128.py": (3, 1),
             "benchmarks/models/hf_convnext_tiny_224.py": (3, 1),
             "benchmarks/models/paddle_mobilenetv3_b32_224.py": (3, 1)}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _proc_cpu(pid) -> float:
    """CPU time of another process so far (/proc/PID/schedstat: nanoseconds on a CPU;
    0 without a pid or on a system without it)."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _idle() -> tuple[float, float]:
    """(idle, total) CPU time of the whole machine so far (/proc/stat, all cores; zeros
    where it cannot be read): how much of the machine nobody used during a row."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return float(v[3] + v[4]), float(sum(v[:8]))
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0


class _Clock:
    """Wall time, CPU time of this process, and CPU time of a worker process (`pid`)."""

    def __init__(self, pid=None):
        self.pid = pid
        self.other = 0.0

    def __enter__(self):
        self.w, self.c, self.o = time.perf_counter(), _cpu(), _proc_cpu(self.pid)
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, _cpu() - self.c
        if self.pid is not None:
            self.other = _proc_cpu(self.pid) - self.o


def measure(framework: str, model: str, work: Path, rounds: int, block: int, device: str = "cpu",
            breakdown: bool = False, writers: tuple = ("worker",)) -> list[dict]:
    """One row per writer: "thread" (statistics, encoding in this process, files written
    on a thread: layout.StepWriter), "worker" (the worker process: stats_worker; its CPU
    time counted apart), blocks of each kind alternating in every round."""
    from analyzer.align import stats_worker
    from analyzer.align.layout import StepWriter
    from analyzer.align.loader import load_model
    from analyzer.align.runner import _seed, _session

    _seed(framework, 0)
    entry = load_model(ROOT / model, framework)
    s = _session(entry, framework, device)
    s.to_device()
    s.disable_dropout()
    out = work / Path(model).stem
    plain, hooks, calls, last = [], [], 0, None
    dumped: dict = {w: [] for w in writers}
    parts: dict = {}
    rec = s.recorder("module", (), None)
    rec.remove()
    step = 0
    worker = stats_worker.WorkerWriter(out) if "worker" in writers else None
    if PIN and worker is not None:  # --pin: this process on the first core, the worker on the last
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
        os.sched_setaffinity(worker.pid, {cpus[-1]})
    idle0 = _idle()
    try:
        with s.step_context(None):
            entry.run_step()  # warm-up
        for r in range(-1, rounds):  # round -1: warm-up of both kinds (call sites captured once)
            with _Clock() as c:  # the user's step: no opscan code at all (dropout set to 0 as in the dump)
                for _ in range(block):
                    entry.run_step()
                s.sync()
            if r >= 0:
                plain.append((c.wall / block, c.cpu / block))
            for kind in writers:
                with _Clock() as h1:
                    rec.install()
                rec.defer_to(worker if kind == "worker" else None)
                with _Clock(worker.pid if kind == "worker" else None) as c:
                    writer = worker if kind == "worker" else StepWriter(out)
                    for _ in range(block):
                        rec.begin_step(step)
                        with s.step_context(None):
                            entry.run_step()
                        d = rec.end_step()  # one host conversion of the step's statistics
                        last = writer.submit(d)
                        step += 1
                    t_tail = time.perf_counter()
                    if kind == "worker":
                        writer.drain()  # the block ends when its last step is written
                    else:
                        writer.close()
                    t_tail = time.perf_counter() - t_tail
                with _Clock() as h2:
                    rec.remove()
                rec.defer_to(None)
                if r >= 0:
                    dumped[kind].append((c.wall / block, c.cpu / block, (c.cpu + c.other) / block,
                                         t_tail / block))
                    hooks.append(h1.wall + h2.wall)
            calls = sum(1 for k in d.data if k.startswith("Module.") and ".forward." in k)
            if breakdown:
                for part in PARTS:
                    cpu = _part(part, rec, s, entry, block, framework)
                    if r >= 0:
                        parts.setdefault(part, []).append(cpu)
    finally:
        if worker is not None:
            worker.close()
        s.close()
    idle1 = _idle()
    cores = os.cpu_count() or 1
    idle = (idle1[0] - idle0[0]) / (idle1[1] - idle0[1]) * cores if idle1[1] > idle0[1] else float("nan")
    size = (last / "dump.json").stat().st_size
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    low = lambda xs, k: min(x[k] for x in xs)  # noqa: E731
    rows = []
    for kind, dm in dumped.items():
        rows.append({
            "model": Path(model).name, "framework": framework, "device": device, "writer": kind,
            "module_calls": calls,
            "undumped_wall_s": round(med(plain, 0), 4), "dumped_wall_s": round(med(dm, 0), 4),
            "undumped_cpu_s": round(med(plain, 1), 4), "dumped_cpu_s": round(med(dm, 1), 4),
            "dumped_total_cpu_s": round(med(dm, 2), 4),
            "ratio_wall": round(med(dm, 0) / med(plain, 0), 2),
            "ratio_cpu": round(med(dm, 1) / med(plain, 1), 2),
            "ratio_total_cpu": round(med(dm, 2) / med(plain, 1), 2),
            "ratio_fastest_wall": round(low(dm, 0) / low(plain, 0), 2),
            # the wait at the block's end for the writer's last step(s), per step of the
            # block (in the wall above; a run of N steps waits once, at its end)
            "tail_wall_s": round(med(dm, 3), 5),
            "ratio_wall_without_tail": round((med(dm, 0) - med(dm, 3)) / med(plain, 0), 2),
            "install_remove_s": round(statistics.median(hooks), 4),
            "idle_cores": round(idle, 2),  # of the machine's cores, on average during the row
            "dump_json_bytes": size, "bytes_per_call": round(size / max(calls, 1)),
            "undumped_per_step": [[round(w, 4), round(c, 4)] for w, c in plain],
            "dumped_per_step": [[round(w, 4), round(c, 4), round(t, 4)] for w, c, t, _ in dm],
            **({"breakdown_cpu_s": {p: round(statistics.median(v), 4) for p, v in parts.items()}}
               if breakdown else {})})
    return rows


PIN = False  # --pin


# --breakdown: the dumped step built up in parts, each a block of its own in every round
# (CPU time per step; cumulative: each part includes the ones before it; the dumped step
# adds the writing of the files)
PARTS = ("hooks", "statistics", "encode")


def _part(part: str, rec, s, entry, block: int, framework: str) -> float:
    """CPU time per step of a dumped block cut after `part`: "hooks" (the recorder's hooks
    and end of step, each tensor's statistics replaced by an empty record), "statistics"
    (the real statistics and their conversion at the end of the step), "encode" (+ the
    three files' bytes, not written)."""
    import importlib

    hooks = importlib.import_module(f"analyzer.align.hooks_{framework}")
    real = hooks.queue_stats
    if part == "hooks":
        hooks.queue_stats = lambda t, batch, on_device=None, compact=False: ({"type": "stub", "shape": list(t.shape)}, None)
    rec.install()
    try:
        with _Clock() as c:
            for i in range(block):
                rec.begin_step(10_000 + i)
                with s.step_context(None):
                    entry.run_step()
                d = rec.end_step()
                if part == "encode":
                    d.encode()
            s.sync()
    finally:
        hooks.queue_stats = real
        rec.remove()
    return c.cpu / block


def device_skip(framework: str, device: str) -> str | None:
    """Why `device` cannot run here (None: it can)."""
    if device == "gpu":
        if framework == "torch":
            import torch
            return None if torch.cuda.is_available() else "no CUDA device (torch.cuda.is_available() is False)"
        import paddle
        return None if paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() else \
            "no CUDA device (this Paddle build has no CUDA or sees no GPU)"
    if device == "npu":
        import os
        if not os.environ.get("ASCEND_HOME_PATH"):
            return "no Ascend NPU (ASCEND_HOME_PATH unset: CANN not installed)"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None,
                    help="fw:path,... (default: the bundled examples: the torch toys, transformers' "
                         "Llama decoder and ConvNeXt, the Paddle CRNN and two paddle.vision models; "
                         "then three real-size rows from benchmarks/models)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds of (undumped block, dumped block) per model (default 5; 3 for the real-size rows)")
    ap.add_argument("--block", type=int, default=None, help="steps per block (default 4; 1 for the real-size rows)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (default 1: steadier timings on a shared machine)")
    ap.add_argument("--devices", default="cpu,gpu,npu",
                    help="devices to measure (default cpu,gpu,npu; one without hardware is skipped with the reason)")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time the dumped step in parts (hooks, + statistics, + encoding; CPU time)")
    ap.add_argument("--writer", default="worker", choices=("worker", "thread", "both"),
                    help="where the statistics, encoding and writing run: the worker process (default, "
                         "as `opscan align dump`), this process with a writer thread (OPSCAN_ALIGN_WORKER=0), "
                         "or both in alternating blocks of the same run")
    ap.add_argument("--pin", action="store_true",
                    help="this process on the first core and the worker process on the last (Linux; "
                         "where the scheduler keeps both on one core of a busy machine)")
    args = ap.parse_args()
    global PIN
    PIN = args.pin
    writers = ("thread", "worker") if args.writer == "both" else (args.writer,)
    if args.threads:
        import torch
        torch.set_num_threads(args.threads)
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    rows = []
    devices = [d for d in args.devices.split(",") if d]
    with tempfile.TemporaryDirectory() as tmp:
        for (fw, model), device in itertools.product(models, devices):
            why = device_skip(fw, device)
            if why:
                print(f"{Path(model).name:26s} {fw:6s} {device}: skipped: {why}", flush=True)
                continue
            rounds, block = SHORT_RUN.get(model, (5, 4))
            got = measure(fw, model, Path(tmp), args.rounds or rounds, args.block or block, device,
                          args.breakdown, writers)
            rows += got
            for r in got:
                print(f"{r['model']:26s} {fw:6s} {device} {r['writer']:6s} {r['module_calls']:4d} calls  "
                      f"undumped {r['undumped_wall_s']:.4f}s (cpu {r['undumped_cpu_s']:.4f}s)  "
                      f"dumped {r['dumped_wall_s']:.4f}s (cpu {r['dumped_cpu_s']:.4f}s, with worker "
                      f"{r['dumped_total_cpu_s']:.4f}s)  ratio {r['ratio_wall']:.2f}x wall, "
                      f"{r['ratio_cpu']:.2f}x cpu, {r['ratio_total_cpu']:.2f}x total cpu, "
                      f"{r['ratio_fastest_wall']:.2f}x fastest  (tail {r['tail_wall_s'] * 1e3:.2f} ms/step, "
                      f"{r['ratio_wall_without_tail']:.2f}x wall without it)  {r['bytes_per_call']} B/call  "
                      f"idle {r['idle_cores']:.2f} of {os.cpu_count()} cores", flush=True)
            r = got[0]
            if args.breakdown:
                b = r["breakdown_cpu_s"]
                steps = [("undumped", r["undumped_cpu_s"]), *b.items(), ("write (dumped)", r["dumped_cpu_s"])]
                print("    cpu per step: " + ", ".join(
                    f"{k} {v * 1e3:.2f} ms" + (f" (+{(v - steps[i - 1][1]) * 1e3:.2f})" if i else "")
                    for i, (k, v) in enumerate(steps)), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    # CPU runs are judged on CPU time (what the dump costs, whatever else loads the machine;
    # on a quiet machine wall and CPU agree); device runs on wall time (the device's work is
    # not CPU time)
    # with the worker process the CPU-time ratio is the training process's alone: judged on
    # wall time, the step the user sees (the total CPU is printed beside it)
    ok = all((r["ratio_cpu"] if r["device"] == "cpu" and r["writer"] == "thread" else r["ratio_wall"]) <= 1.5
             and r["bytes_per_call"] <= 2048 for r in rows)
    print("criterion (<= 1.5x, <= 2 KB per module call):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
