"""CPU time of the dump's per-tensor statistics alone, on the tensors a real step hands them:
one dumped step of each model records every tensor its hooks reduce (forward inputs and
outputs, gradients, parameter gradients; cloned), then `queue_stats` is timed over that
list (best of --repeat passes, CPU time of this process, torch on one thread) and the
step's undumped time is given for scale. Run it in two trees to compare two versions of
the statistics on the same tensors (the hook costs are in align_overhead.py).

    python benchmarks/align_stats_cost.py [--models fw:path,...] [--repeat N] [--staged] [--per-size]

--staged: also the same tensors with the small-tensor staging off (`STAGED_MAX = 0`: each
tensor reduced by its own numpy calls, the code before staging), timed alternately in the
same process, and each record's Mean and Norm from both paths against float64: how many
staged records differ from the per-tensor path's, and each path's largest error (relative
to the tensor's RMS for the mean, to the float64 norm for the norm).
--per-size: instead, per array size, 200 float32 numpy arrays through the per-tensor
reductions (`host_reductions` + `add_host`) and through staging (`add_array`), flush
included, best of 20: the cost per tensor that sets `stats.STAGED_MAX`.
"""
from __future__ import annotations

import argparse
import importlib
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = [("torch", "benchmarks/models/hf_bert_base_seq128.py"),
          ("torch", "benchmarks/models/hf_convnext_tiny_224.py"),
          ("paddle", "benchmarks/models/paddle_mobilenetv3_b32_224.py"),
          ("torch", "examples/torch_transformer.py"), ("torch", "examples/torch_shufflenetv2.py")]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(framework: str, model: str, repeat: int, staged: bool = False) -> dict:
    from analyzer.align.loader import load_model
    from analyzer.align.runner import _seed, _session
    from analyzer.align.stats import StepStats

    hooks = importlib.import_module(f"analyzer.align.hooks_{framework}")
    _seed(framework, 0)
    entry = load_model(ROOT / model, framework)
    s = _session(entry, framework, "cpu")
    s.to_device()
    s.disable_dropout()
    with s.step_context(None):
        entry.run_step()  # warm-up
    c = _cpu()
    entry.run_step()
    step_cpu = _cpu() - c
    seen, real = [], hooks.queue_stats

    def keep(t, batch, on_device=None, *compact):
        seen.append(t.detach().clone())
        return real(t, batch, on_device, *compact)

    hooks.queue_stats = keep
    rec = s.recorder("module", (), None)
    try:
        rec.begin_step(0)
        with s.step_context(None):
            entry.run_step()
        rec.end_step()
    finally:
        hooks.queue_stats = real
        rec.remove()
        s.close()
    elements = sum(int(t.numel()) if framework == "torch" else int(t.size) for t in seen)
    limits = {"staged": hooks.STAGED_MAX, "per_tensor": 0} if staged else {"staged": hooks.STAGED_MAX}
    best = {k: float("inf") for k in limits}
    recs: dict = {}
    try:
        for _ in range(repeat):
            for k, limit in limits.items():
                hooks.STAGED_MAX = limit
                batch = StepStats(hooks._to_floats, getattr(hooks, "_staged_fallback", None))
                c = _cpu()
                out = [real(t, batch)[0] for t in seen]
                batch.flush()
                best[k] = min(best[k], _cpu() - c)
                recs[k] = out
    finally:
        hooks.STAGED_MAX = limits["staged"]
    row = {"model": Path(model).name, "tensors": len(seen), "elements": elements,
           "stats_cpu_s": best["staged"], "undumped_step_cpu_s": step_cpu}
    if staged:
        row["per_tensor_cpu_s"] = best["per_tensor"]
        row.update(_accuracy(seen, recs["staged"], recs["per_tensor"], framework, hooks.STAGED_MAX))
    return row


def _accuracy(seen, staged, per_tensor, framework, limit) -> dict:
    """Staged records (float tensors up to `limit` elements) against the per-tensor path's
    and float64."""
    import numpy as np

    same_mean = same_norm = total = 0
    err = {"staged": [0.0, 0.0], "per_tensor": [0.0, 0.0]}  # worst mean, norm error
    for t, a, b in zip(seen, staged, per_tensor):
        x = t.detach().cpu().double().numpy() if framework == "torch" else t.astype("float64").numpy()
        x = np.asarray(x).ravel()
        if not (0 < x.size <= limit) or not np.isfinite(x).all() \
                or a["dtype"] not in ("torch.float32", "torch.float64"):
            continue
        total += 1
        same_mean += a["Mean"] == b["Mean"]
        same_norm += a["Norm"] == b["Norm"]
        rms = float(np.sqrt(np.mean(x * x)))
        norm = float(np.sqrt(x.dot(x)))
        for k, r in (("staged", a), ("per_tensor", b)):
            err[k][0] = max(err[k][0], abs(r["Mean"] - float(x.mean())) / (rms or 1.0))
            err[k][1] = max(err[k][1], abs(r["Norm"] - norm) / (norm or 1.0))
    return {"staged_records": total, "same_mean": same_mean, "same_norm": same_norm, "max_error": err}


def per_size(sizes=(16, 256, 1024, 2048, 4096, 8192, 16384), count: int = 200, repeat: int = 20) -> None:
    import time

    import numpy as np

    from analyzer.align.stats import StepStats, host_reductions

    rng = np.random.default_rng(0)
    for n in sizes:
        arrays = [rng.standard_normal(n).astype(np.float32) for _ in range(count)]
        best = {"per-tensor": float("inf"), "staged": float("inf")}
        for _ in range(repeat):
            for kind in best:
                batch = StepStats(None)
                c = time.process_time()
                if kind == "staged":
                    for a in arrays:
                        batch.add_array(a, {}, n, True)
                else:
                    for a in arrays:
                        batch.add_host(host_reductions(a), {}, n, True)
                batch.flush()
                best[kind] = min(best[kind], time.process_time() - c)
        print(f"{n:6d} elements: per-tensor {best['per-tensor'] / count * 1e6:6.2f} us, "
              f"staged {best['staged'] / count * 1e6:6.2f} us per tensor", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: the three real-size rows, two toys)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--staged", action="store_true",
                    help="also time the same tensors with staging off and compare the numbers (see above)")
    ap.add_argument("--per-size", action="store_true",
                    help="instead: per-tensor cost of both statistics paths per array size (see above)")
    args = ap.parse_args()
    if args.per_size:
        per_size()
        return 0
    import torch
    torch.set_num_threads(1)
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    for fw, model in models:
        r = measure(fw, model, args.repeat, args.staged)
        print(f"{r['model']:30s} {fw:6s} {r['tensors']:5d} tensors {r['elements'] / 1e6:8.1f} M elements  "
              f"statistics {r['stats_cpu_s'] * 1e3:8.2f} ms CPU  (undumped step {r['undumped_step_cpu_s'] * 1e3:.0f} ms: "
              f"{r['stats_cpu_s'] / r['undumped_step_cpu_s']:.1%})", flush=True)
        if args.staged:
            e = r["max_error"]
            print(f"    staging off: {r['per_tensor_cpu_s'] * 1e3:.2f} ms CPU; {r['staged_records']} staged records, "
                  f"the per-tensor path's Mean in {r['same_mean']}, Norm in {r['same_norm']}; worst error vs float64 "
                  f"staged mean {e['staged'][0]:.1e} norm {e['staged'][1]:.1e}, per-tensor mean "
                  f"{e['per_tensor'][0]:.1e} norm {e['per_tensor'][1]:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
