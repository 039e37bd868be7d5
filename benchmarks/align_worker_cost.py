"""What the dump's worker process (analyzer/align/stats_worker.py) spends per step, by part:
the other half of `opscan align dump`'s worker path (align_overhead_instructions.py
counts the training process's half). With at most two steps in flight, a worker slower
per step than the dumped training step sets the run's wall time.

The model runs its dumped steps with the worker as `opscan align dump` runs them; every
message the training process sends and the bytes of its shared staging slot are kept.
Then a fresh process without torch or paddle (as the worker is) replays them through the
worker's own `stats_worker.StepServer` (kept from round to round, as the worker keeps it
from step to step: after the first round every step of a repeated structure is written
from its template), each step from a staging slot of its own, into a new folder per round:

- time (default): per step, this thread's CPU time (`time.thread_time`) and wall time in
  all and in parts: expand (the compact records made msprobe's dicts), reductions (the
  staged and copied numbers reduced, `reduce_host`), texts (means, 9-digit texts and
  fragments, `step_values`/`_fragments`, on the template path), encode (dump.json's
  bytes, `StepDump.dump_json`), write (`StepDump.write`: folders, files, renames; its
  time is mostly the kernel's); median over rounds. Unwrapped code (the message
  unmarshalled, the records filled on the full path, the template filled) is in "all" only.
- --instructions: callgrind's count of the replay per step (user space: the write's
  system calls are not in it).
- --full: every step through the full path (no templates: what the worker did before).

Copied into a tree of the previous code (no StepServer: `git archive 9717673`) it replays
through that code's worker loop (`_PreviousServer`), for an A/B in one sitting; there
"reductions" is `finish_stats` (the records filled included) and "encode" `StepDump.encode`.

    python benchmarks/align_worker_cost.py [--models fw:path,...] [--steps N] [--rounds N]
        [--instructions] [--full]
"""
from __future__ import annotations

import argparse
import marshal
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = [("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_lstm_attention.py")]
PARTS = ("expand", "reductions", "texts", "encode", "write")


def capture(framework: str, model: str, steps: int, out_file: Path) -> None:
    """Run `steps` dumped steps (after 3 warm-up steps) with the worker; save each step's
    message and its staging slot's bytes to `out_file`."""
    from align_bench import cpu_session  # benchmarks/align_bench.py

    if framework == "torch":
        import torch
        torch.set_num_threads(1)
    from analyzer.align.stats_worker import SLOT_BYTES, WorkerWriter

    entry, s, rec = cpu_session(framework, ROOT / model)
    out = Path(tempfile.mkdtemp(prefix="opscan-align-wc-"))
    kept = []
    try:
        writer = WorkerWriter(out)
        rec.defer_to(writer)
        sent = []
        send = writer._tx.send_bytes
        writer._tx.send_bytes = lambda msg: (sent.append(bytes(msg)), send(msg))[1]
        for i in range(3 + steps):
            rec.begin_step(i)
            with s.step_context(None):
                entry.run_step()
            d = rec.end_step()
            batch = d.stats
            writer.submit(d)
            if i >= 3:  # (the slot is the worker's to read, nobody's to write, until the next step)
                lo = batch._slot * SLOT_BYTES
                kept.append((sent[-1], writer._view[lo:lo + batch._used].tobytes()))
        writer.drain()
        writer.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    out_file.write_bytes(pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))


def _replay_setup(capture_file: Path):
    """(messages, staging view, slot size): each captured step's message made to read its
    own slot of one staging array holding every step's bytes (the slot's number is in the
    message's head; the rest of the message is kept byte for byte)."""
    import numpy as np

    from analyzer.align import stats_worker as sw

    kept = pickle.loads(capture_file.read_bytes())
    size = max(64, max(len(b) for _, b in kept))
    size = (size + 63) // 64 * 64
    view = np.zeros(size * len(kept), np.uint8)
    msgs = []
    for i, (msg, slot) in enumerate(kept):
        view[i * size:i * size + len(slot)] = np.frombuffer(slot, np.uint8)
        if msg[:1] == b"m":  # (a tree before the split message: --tree of the previous code)
            obj = sw.decode_step(msg)
            obj[-1]["slot"] = i
            msgs.append(b"m" + marshal.dumps(obj, 4))
        elif msg[:1] == b"t":
            head, body = sw._split(msg)
            h = list(marshal.loads(head))
            h[2] = i
            head = marshal.dumps(tuple(h), 4)
            msgs.append(b"t" + len(head).to_bytes(4, "little") + head + bytes(body))
        else:
            obj = sw.decode_step(msg)
            obj[-1]["slot"] = i
            msgs.append(b"p" + pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    return msgs, view, size


def _replay(msgs, server, root: Path) -> int:
    """The messages served as the worker serves them (`server`, a StepServer kept from round
    to round as the worker keeps it from step to step), into `root`; -> steps templated."""
    from analyzer.align import layout

    server.writer = writer = layout.StepWriter(root, threads=False)
    was = server.templated
    for msg in msgs:
        server.serve(msg)
    writer.close()
    return server.templated - was


def _server(view, size):
    import analyzer.align.stats_worker as sw

    if hasattr(sw, "StepServer"):
        return sw.StepServer(view, size, None)
    return _PreviousServer(view, size)


class _PreviousServer:
    """The worker's loop before StepServer (a tree of the previous code: its _serve's body)."""

    def __init__(self, view, size):
        self.view, self.size, self.writer, self.templated = view, size, None, 0

    def serve(self, msg):
        from analyzer.align import layout
        import analyzer.align.stats_worker as sw

        step, rank, framework, level, data, construct, stack, payload = sw.decode_step(msg)
        sw.expand_records(data, payload["slots"], sw._TENSOR_TYPE.get(framework, "torch.Tensor"))
        s = payload["slot"]
        texts = sw.finish_stats(payload, self.view[s * self.size:(s + 1) * self.size])
        self.writer.submit(layout.StepDump(step=step, rank=rank, framework=framework, level=level,
                                           data=data, construct=construct, stack=stack, texts=texts))


def _no_template():
    """--full: every step takes the full path (the previous worker's work)."""
    import analyzer.align.stats_worker as sw

    sw._Template.build = lambda self, *a: None


def _time_child(capture_file: Path, rounds: int) -> None:
    """Per-part CPU and wall time per step of the replay (prints one line)."""
    import analyzer.align.layout as layout
    import analyzer.align.stats_worker as sw

    msgs, view, size = _replay_setup(capture_file)
    acc = {p: [0.0, 0.0] for p in PARTS}

    def timed(part, fn):
        def wrapper(*a, **k):
            c, w = time.thread_time(), time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                acc[part][0] += time.thread_time() - c
                acc[part][1] += time.perf_counter() - w
        return wrapper

    for owner, name, part in ((sw, "expand_records", "expand"), (sw, "reduce_host", "reductions"),
                              (sw, "finish_stats", "reductions"),  # (the previous code's)
                              (sw, "step_values", "texts"), (sw, "_fragments", "texts"),
                              (layout.StepDump, "dump_json", "encode"),
                              (layout.StepDump, "encode", "encode"),  # (the previous code's)
                              (layout.StepDump, "write", "write")):
        if hasattr(owner, name) and not (name in ("finish_stats", "encode") and hasattr(sw, "StepServer")):
            setattr(owner, name, timed(part, getattr(owner, name)))
    per_round, templated = [], 0
    server = _server(view, size)
    tmp = Path(tempfile.mkdtemp(prefix="opscan-align-wr-"))
    try:
        for r in range(rounds + 1):  # (the first round warms up)
            for p in PARTS:
                acc[p] = [0.0, 0.0]
            root = tmp / f"r{r}"
            c0, w0 = time.thread_time(), time.perf_counter()
            templated = _replay(msgs, server, root)
            total = (time.thread_time() - c0, time.perf_counter() - w0)
            if r:
                per_round.append(({p: tuple(v) for p, v in acc.items()}, total))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(msgs)
    ms = lambda xs: statistics.median(xs) / n * 1e3  # noqa: E731
    parts = ", ".join(f"{p} {ms([r[0][p][0] for r in per_round]):.3f}/{ms([r[0][p][1] for r in per_round]):.3f}"
                      for p in PARTS)
    print(f"per step, CPU/wall ms: all {ms([r[1][0] for r in per_round]):.3f}/"
          f"{ms([r[1][1] for r in per_round]):.3f} ({parts}; {templated} of {n} steps templated)", flush=True)


def _count_child(capture_file: Path, rounds: int) -> None:
    """Replay `rounds` times under callgrind, counting only the replay (rounds 0: the
    toggles alone)."""
    from callgrind import instrument  # benchmarks/callgrind.py

    msgs, view, size = _replay_setup(capture_file)
    server = _server(view, size)
    tmp = Path(tempfile.mkdtemp(prefix="opscan-align-wr-"))
    try:
        _replay(msgs, server, tmp / "warm")
        instrument("on")
        for r in range(rounds):
            _replay(msgs, server, tmp / f"r{r}")
        instrument("off")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: the torch transformer and LSTM)")
    ap.add_argument("--steps", type=int, default=10, help="steps captured per model (default 10)")
    ap.add_argument("--rounds", type=int, default=20, help="replays of them (default 20; 2 with --instructions)")
    ap.add_argument("--instructions", action="store_true", help="callgrind counts instead of times")
    ap.add_argument("--full", action="store_true", help="no step from a template (StepServer's full "
                    "path for every step, as the worker before templates)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, file, rest = args.child.split(":", 2)
        if rest.endswith(":full"):
            _no_template()
            rest = rest[:-5]
        if kind == "capture":
            fw, model, steps = rest.split(":")
            capture(fw, model, int(steps), Path(file))
        elif kind == "time":
            _time_child(Path(file), int(rest))
        else:
            _count_child(Path(file), int(rest))
        return 0
    if args.instructions:
        from callgrind import count_instructions, valgrind_missing  # benchmarks/callgrind.py

        if valgrind_missing():
            return 2
    full = ":full" if args.full else ""
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for fw, model in models:
            f = Path(tmp) / "capture.pkl"
            capture_in_child(fw, model, args.steps, f)
            label = f"{Path(model).name:26s} {fw:6s}"
            if not args.instructions:
                r = subprocess.run([sys.executable, __file__, "--child", f"time:{f}:{args.rounds}{full}"],
                                   capture_output=True, text=True, env=_env())
                if r.returncode:
                    raise SystemExit(r.stderr[-2000:])
                print(f"{label} worker {r.stdout.strip()}", flush=True)
                continue
            rounds = args.rounds if args.rounds != 20 else 2
            base = count_instructions(__file__, f"count:{f}:0{full}", env=_env())
            c = (count_instructions(__file__, f"count:{f}:{rounds}{full}", env=_env()) - base) / (args.steps * rounds)
            print(f"{label} worker {c / 1e6:.3f} M instr/step{' (full path)' if full else ''}", flush=True)
    return 0


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")]
                                                      + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def capture_in_child(fw: str, model: str, steps: int, f: Path) -> None:
    """The capture in a process of its own (the framework stays out of this one)."""
    r = subprocess.run([sys.executable, __file__, "--child", f"capture:{f}:{fw}:{model}:{steps}"],
                       capture_output=True, text=True, env=_env())
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])


if __name__ == "__main__":
    sys.exit(main())
