"""CPU time of the dump's per-tensor statistics alone, on the tensors a real step hands them:
one dumped step of each model records every tensor its hooks reduce (forward inputs and
outputs, gradients, parameter gradients; cloned), then `queue_stats` is timed over that
list (best of --repeat passes, CPU time of this process, torch on one thread) and the
step's undumped time is given for scale. Run it in two trees to compare two versions of
the statistics on the same tensors (the hook costs are in align_overhead.py).

    python benchmarks/align_stats_cost.py [--models fw:path,...] [--repeat N]
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


def measure(framework: str, model: str, repeat: int) -> dict:
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

    def keep(t, batch, on_device=None):
        seen.append(t.detach().clone())
        return real(t, batch, on_device)

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
    best = float("inf")
    for _ in range(repeat):
        batch = StepStats(hooks._to_floats)
        c = _cpu()
        for t in seen:
            real(t, batch)
        batch.flush()
        best = min(best, _cpu() - c)
    return {"model": Path(model).name, "tensors": len(seen), "elements": elements,
            "stats_cpu_s": best, "undumped_step_cpu_s": step_cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="fw:path,... (default: the three real-size rows, two toys)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    models = MODELS if not args.models else [tuple(m.split(":", 1)) for m in args.models.split(",")]
    for fw, model in models:
        r = measure(fw, model, args.repeat)
        print(f"{r['model']:30s} {fw:6s} {r['tensors']:5d} tensors {r['elements'] / 1e6:8.1f} M elements  "
              f"statistics {r['stats_cpu_s'] * 1e3:8.2f} ms CPU  (undumped step {r['undumped_step_cpu_s'] * 1e3:.0f} ms: "
              f"{r['stats_cpu_s'] / r['undumped_step_cpu_s']:.1%})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
