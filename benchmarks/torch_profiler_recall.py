"""Trace completeness on real torch models: `opscan MODEL --framework torch` against torch's
own view of the same training step.

For each model file (build() contract):
  1. the scan, as a user runs it, in a fresh process:
     `python -m analyzer.cli MODEL --framework torch --steps 1 -o TMP --format json -q`;
     its report ops (verdict rows, overloads as the NPU dispatches them) and its
     "CPU trace vs NPU route" rows are read from report.json;
  2. one plain CPU step of a freshly built model under `torch.profiler.profile(record_shapes=
     True)` ("dump op": every aten event with its parent chain), and one more under a
     `TorchDispatchMode` (every OpOverload that reaches the CPU kernels below autograd),
     in a second fresh process.

Scores (names folded as tests/analyzer/test_cpu_route.py does: overload dropped, `add_` ~ `add`):
  - recall: of the op names the profiler shows, the share the report accounts for: a
    report op, a route row, or an event nested under a report op, a composite route row or
    AccumulateGrad (the rules of test_cpu_route.unexplained). A miss is printed by name;
  - precision: of the report ops, the share the CPU profile shows too, that torch_npu's
    derivatives name as an NPU-only backward kernel of an adapted composite, or that a
    route row names as the op the CPU ran something else for (`_foreach_add_` for the
    CPU's `add_`; `native_dropout`, which dropout picks on a backend device, with the
    CPU's `bernoulli_` inside it);
  - overloads: of the OpOverloads the CPU dispatch saw whose op the report lists, the
    share the report lists with the same overload (an overload the report spells
    differently is printed, with a first guess at why). Overloads are counted once inside
    and once outside `torch/optim`; optimizer-only ones a foreach route row covers are
    left out (the CPU's single-tensor optimizer path).

    python benchmarks/torch_profiler_recall.py benchmarks/models/hf_gpt2_tiny.py ...

Prints one row per model and each miss; exits 1 when any model has a miss.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_CHILD = r'''
import json, sys
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from analyzer.trace.entry import load_entry

entry = load_entry(sys.argv[1], "torch")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                            record_shapes=True) as prof:
    entry.run_step()
events = []
for e in prof.events():
    if not e.name.startswith("aten::"):
        continue
    chain, p = [], e.cpu_parent
    while p is not None:
        chain.append(p.name)
        p = p.cpu_parent
    events.append([e.name, chain])

seen = {}


def in_optimizer():
    f = sys._getframe(2)
    while f is not None:
        if "/torch/optim/" in f.f_code.co_filename:
            return True
        f = f.f_back
    return False


class Spy(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name + ("" if func._overloadname == "default"
                                    else "." + func._overloadname)
        key = name + (" optimizer" if in_optimizer() else "")
        seen[key] = seen.get(key, 0) + 1
        return func(*args, **(kwargs or {}))


entry = load_entry(sys.argv[1], "torch")
with Spy():
    entry.run_step()
json.dump({"events": events, "dispatch": seen}, sys.stdout)
'''


def base(name: str) -> str:
    ns, _, rest = name.partition("::")
    return f"{ns}::{rest.split('.', 1)[0]}" if rest else name


def fold(name: str) -> str:
    n = base(name)
    return n[:-1] if n.endswith("_") and not n.endswith("__") else n


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def scan(model: Path, out: Path) -> dict:
    cmd = [sys.executable, "-m", "analyzer.cli", str(model), "--framework", "torch",
           "--steps", "1", "-o", str(out), "--format", "json", "-q"]
    subprocess.run(cmd, check=True, env=_env(), cwd=ROOT)
    return json.loads((out / "report.json").read_text())


def profile(model: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(model)], check=True,
                          capture_output=True, text=True, env=_env(), cwd=ROOT)
    return json.loads(proc.stdout)


def score(report: dict, prof: dict) -> dict:
    """Recall, precision and overload agreement of one report against one CPU profile."""
    import torch

    from analyzer.trace.torch.derivatives import backward_kernels

    report_ops = {v["op"] for v in report["verdicts"]}
    folded = {fold(o) for o in report_ops}
    section = {fold(r["op"]) for r in report["cpu_route"]}
    composites = {fold(r["op"]) for r in report["cpu_route"]
                  if r["reason"] in ("composite", "view")}
    names, missed = set(), set()
    for name, chain in prof["events"]:
        n = fold(name)
        names.add(n)
        if n in folded or n in section:
            continue
        if not any(fold(p) in folded | composites or "AccumulateGrad" in p for p in chain):
            missed.add(n)
    npu_only = {fold(k) for ks in backward_kernels(torch.__version__).values() for k in ks}
    # a report op the CPU did not run is explained when the route names what ran instead
    # (the CPU's single-tensor optimizer ops, or CPU kernels that ran inside it)
    instead = {fold(r["under"].split(" ")[0]) for r in report["cpu_route"] if r["under"]}
    extra = sorted(folded - names - npu_only - instead)
    # overloads: CPU dispatch overloads whose op the report lists
    by_base: dict[str, set[str]] = {}
    for o in report_ops:
        by_base.setdefault(base(o), set()).add(o)
    foreach = {fold(r["op"]) for r in report["cpu_route"] if r["reason"] == "foreach"}
    same, differ = 0, []
    for key in sorted(prof["dispatch"]):
        o, _, where = key.partition(" ")
        got = by_base.get(base(o))
        if not got:
            continue
        if o in got:
            same += 1
        elif where == "optimizer" and fold(o) in foreach:
            continue  # the CPU's single-tensor optimizer path; the NPU runs foreach kernels
        else:
            why = ("the adapter registers only out=" if f"{base(o)}.out" in got
                   else "another overload on the device")
            differ.append(f"{o}{' (optimizer)' if where else ''} -> report "
                          f"{', '.join(sorted(got))}: {why}")
    return {"profiler_ops": len(names), "missed": sorted(missed),
            "recall": 1 - len(missed) / max(len(names), 1),
            "report_ops": len(folded), "extra": extra,
            "precision": 1 - len(extra) / max(len(folded), 1),
            "overloads_same": same, "overloads_differ": differ,
            "calls": report["summary"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    args = ap.parse_args(argv)
    bad = 0
    print("| model | profiler ops | recall | report ops | precision | overloads same / differ |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = []
    for model in args.models:
        with tempfile.TemporaryDirectory() as tmp:
            s = score(scan(model, Path(tmp) / "out"), profile(model))
        rows.append((model, s))
        print(f"| {model.name} | {s['profiler_ops']} | {s['recall']:.3f} | {s['report_ops']} "
              f"| {s['precision']:.3f} | {s['overloads_same']} / {len(s['overloads_differ'])} |",
              flush=True)
    for model, s in rows:
        for m in s["missed"]:
            print(f"{model.name}: missed {m}")
        for m in s["extra"]:
            print(f"{model.name}: report-only {m}")
        for m in s["overloads_differ"]:
            print(f"{model.name}: overload {m}")
        bad += bool(s["missed"] or s["extra"])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
