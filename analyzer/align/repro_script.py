"""Single-op repro written by `opscan align compare` (copied verbatim into the repro folder).

    python repro.py [--device cpu|cuda|npu]

Loads the op's inputs captured on side A (inputs.pt / inputs.pkl), runs the op in float32,
float64 and the dtype side B computed in, on the device given, and prints each output's
statistics and its norm-relative error against side A's saved output and side B's recorded
statistics (repro.json).
"""
import argparse
import json
import math
import pickle
from pathlib import Path

HERE = Path(__file__).resolve().parent


def stats(x):
    import numpy as np
    a = np.asarray(x, dtype=np.float64)
    return {"Max": float(a.max()), "Min": float(a.min()), "Mean": float(a.mean()),
            "Norm": float(np.linalg.norm(a.ravel())), "shape": list(a.shape)}


def err(a, b):
    n = max(a["Norm"], 1e-30)
    rms = max(n / math.sqrt(max(1, math.prod(a["shape"]) if a["shape"] else 1)), 1e-30)
    return max(abs(a["Norm"] - b["Norm"]) / n, *(abs(a[k] - b[k]) / rms for k in ("Mean", "Max", "Min")))


def run_torch(meta, device):
    import torch
    fn = torch.ops
    for part in meta["op"].split("."):
        fn = getattr(fn, part)
    saved = torch.load(HERE / "inputs.pt", weights_only=False)
    results = {}
    for label, dt in (("float32", torch.float32), ("float64", torch.float64),
                      (meta["dtype_b"], getattr(torch, meta["dtype_b"]))):
        def conv(x):
            if isinstance(x, torch.Tensor):
                x = x.to(device)
                return x.to(dt) if x.is_floating_point() else x
            return x
        args = [conv(a) if not isinstance(a, (list, tuple)) else type(a)(conv(y) for y in a) for a in saved["args"]]
        kwargs = {k: conv(v) for k, v in saved["kwargs"].items()}
        out = fn(*args, **kwargs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        results[label] = stats(out.detach().double().cpu().numpy())
    ref = saved["out"]
    ref = ref[0] if isinstance(ref, (tuple, list)) else ref
    return results, stats(ref.double().numpy())


def run_paddle(meta, device):
    import paddle
    paddle.set_device(device if device != "cuda" else "gpu")
    with open(HERE / "inputs.pkl", "rb") as f:
        saved = pickle.load(f)
    fn = getattr(paddle._C_ops, meta["op"])
    results = {}
    for label in ("float32", "float64", meta["dtype_b"]):
        def conv(x):
            if hasattr(x, "dtype") and hasattr(x, "shape"):
                t = paddle.to_tensor(x)
                return t.astype(label) if t.dtype in (paddle.float32, paddle.float64) else t
            return x
        out = fn(*[conv(a) for a in saved["args"]], **{k: conv(v) for k, v in saved["kwargs"].items()})
        out = out[0] if isinstance(out, (tuple, list)) else out
        results[label] = stats(out.astype("float64").numpy())
    return results, stats(saved["out"][0])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    meta = json.loads((HERE / "repro.json").read_text())
    run = run_torch if meta["framework"] == "torch" else run_paddle
    results, out_a = run(meta, args.device)
    b = meta.get("stats_b")
    print(f"{meta['op']} ({meta['call']}) on {args.device}")
    for label, s in results.items():
        line = f"  {label:9s} vs A's output: {err(out_a, s):.3g}"
        if b:
            line += f"   vs B's recorded stats: {err(b, s):.3g}"
        print(line)
    if b:
        print(f"  side B (recorded) vs A's output: {err(out_a, b):.3g}")


if __name__ == "__main__":
    main()
