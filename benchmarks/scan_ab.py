"""A/B of two opscan trees on the same scans: CPU time, wall time and report bytes.

For each model and step count, in one run: the plain training steps (`scan_cost.py`'s
plain child), the scan with the base revision (a `git archive` of it in a temporary
directory) and the scan with the working tree, alternating base and working tree on
every repeat so that both meet the same load; the fastest of each counts (CPU time and
wall separately). Then every report file the two trees wrote for that scan is compared
byte for byte (the determinism rule: a speed change must not change a report).

    python benchmarks/scan_ab.py [--base main] [--only NAME] [--steps 1,4] [--repeat 5]
                                 [--threads N]

Prints, per scan: plain / base / work CPU and wall, the scan/plain ratios of both trees
and "reports identical" or the files that differ. When the working tree lists repeated
steps once (analyzer.step_repeats) and the base tree does not, the differing files are
checked to differ by that alone (`explain`): every report re-rendered from the working
tree's report.json without its repeated-steps note must be base's bytes, and every listed
GraphML element base's. Exit code 1 when any report differs otherwise or a run fails. Both trees run with the same Python and packages; only the repository's own
code differs (bytecode compiled first in both, as `scan_cost.py` does).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scan_cost import MODELS, Run, plain  # noqa: E402  (the same plain child and models)

ROOT = Path(__file__).resolve().parents[1]


def archive(rev: str, dest: Path) -> Path:
    """`git archive REV` unpacked into dest (the base tree)."""
    dest.mkdir(parents=True, exist_ok=True)
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                          capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=data, check=True)
    return dest


def compile_tree(tree: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", "analyzer", "opdb", "codegen"],
                   cwd=tree, stdout=subprocess.DEVNULL, check=False)


def scan_with(tree: Path, m, steps: int, out: Path, env_extra: dict) -> Run:
    """`python -m analyzer.cli MODEL ...` with `tree`'s code (the model file is the same)."""
    cmd = [sys.executable, "-m", "analyzer.cli", str(m.path), "--framework", m.framework,
           "--mode", "real", "--steps", str(steps), "-o", str(out), "--force", "-q"]
    if m.script_args:
        cmd += ["--script", "--", *m.script_args, m.steps_flag, str(steps + 100)]
    env = dict(os.environ, PYTHONPATH=str(tree), TORCH_DEVICE_BACKEND_AUTOLOAD="0",
               **env_extra)
    import time

    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Run(seconds, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
               cpu_seconds=usage.ru_utime + usage.ru_stime, stderr=text[-2000:])


def differing(a: Path, b: Path) -> list[str]:
    """Report files present in either directory whose bytes differ (or that one lacks)."""
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    return [n for n in names if not ((a / n).is_file() and (b / n).is_file()
                                     and (a / n).read_bytes() == (b / n).read_bytes())]


REPEAT_NOTE = "call for call (ops, dtypes, shapes, tensor flow)"  # analyzer.scan's note


def graphml_elements(text: str) -> dict[str, str]:
    """A GraphML file's `<node>`/`<edge>` elements by their opening line."""
    out: dict[str, str] = {}
    head, lines = None, []
    for line in text.splitlines():
        if line.startswith(("    <node ", "    <edge ")):
            head, lines = line, [line]
            if line.endswith("/>"):
                out[head], head = line, None
        elif head is not None:
            lines.append(line)
            if line.startswith(("    </node>", "    </edge>")):
                out[head], head = "\n".join(lines), None
    return out


def explain(base: Path, work: Path, diff: list[str]) -> tuple[str, bool]:
    """(what differs, whether it is only the repeated-steps listing) when the work tree
    collapses repeated steps (analyzer.step_repeats): every differing report file must be
    what the work tree renders from its own report.json without the repeated-steps note,
    byte for byte base's file; in the GraphML every listed element must be base's, except
    the template step's `unconsumed_outputs` (nothing reads them once the repeats are not
    listed, as in base's last step)."""
    import json

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from analyzer.report.json_report import validate
    from analyzer.report.writer import COMPANIONS, FORMATS

    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    notes = [n for n in report.get("notes", []) if REPEAT_NOTE in n]
    if not notes:
        return "DIFFER: " + ", ".join(diff), False
    report["notes"] = [n for n in report["notes"] if REPEAT_NOTE not in n]
    renders = {name: r for name, r in [*FORMATS.values(), *(c for cs in COMPANIONS.values()
                                                           for c in cs)]}
    parts, ok = [], True
    for name in diff:
        if name.endswith(".graphml"):
            b = graphml_elements((base / name).read_text(encoding="utf-8"))
            w = graphml_elements((work / name).read_text(encoding="utf-8"))
            outputs_only = other = 0
            for head, text in w.items():
                if b.get(head) == text:
                    continue
                strip = [x for x in text.splitlines() if 'key="unconsumed_outputs"' not in x]
                if head in b and strip == [x for x in b[head].splitlines()
                                           if 'key="unconsumed_outputs"' not in x]:
                    outputs_only += 1
                else:
                    other += 1
            nodes = sum(h.startswith("    <node ") for h in w)
            all_nodes = sum(h.startswith("    <node ") for h in b)
            parts.append(f"{name}: {nodes} of {all_nodes} calls listed, {outputs_only} "
                         f"differ in unconsumed_outputs only, {other} otherwise")
            ok = ok and other == 0
        elif name in renders:
            same = renders[name](validate(report)) == (base / name).read_bytes()
            ok = ok and same
            if not same:
                parts.append(f"{name} DIFFERS beyond the note")
        else:
            ok = False
            parts.append(f"{name} DIFFERS")
    head = notes[0].split(" call for call")[0]
    return (f"{head}: the rest identical but the note; " + "; ".join(parts)), ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="main", help="git revision to compare with (default main)")
    ap.add_argument("--only", default="paddle_mobilenetv3,torch_shufflenetv2",
                    help="comma-separated parts of model names (default: the two at the line)")
    ap.add_argument("--steps", default="1,4", help="comma-separated step counts")
    ap.add_argument("--repeat", type=int, default=5, help="runs per tree, alternating")
    ap.add_argument("--threads", type=int, default=None,
                    help="intra-op threads of every child (default: the frameworks' own)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    env_extra = {}
    if args.threads:
        env_extra = dict(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
        os.environ.update(env_extra)  # the plain child reads os.environ
    wanted = [w for w in args.only.split(",") if w]
    models = [m for m in MODELS if not wanted or any(w in m.name for w in wanted)]
    if not models:
        ap.error(f"--only {args.only!r} matches no model; names: "
                 + ", ".join(m.name for m in MODELS))
    try:
        step_list = [int(x) for x in args.steps.split(",")]
    except ValueError:
        ap.error(f"--steps {args.steps!r}: give comma-separated whole numbers, e.g. 1,4")
    if any(n < 1 for n in step_list):
        ap.error(f"--steps {args.steps!r}: every step count must be at least 1")
    bad = 0
    print("| model | steps | plain CPU / wall | base CPU / wall | work CPU / wall | "
          "base ratio CPU / wall | work ratio CPU / wall | reports |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            base = archive(args.base, Path(tmp) / "base")
        except subprocess.CalledProcessError as e:
            why = (e.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
            ap.error(f"--base {args.base!r}: git archive failed ({' '.join(why) or e}); "
                     "name a commit, branch or tag of this repository")
        for tree in (base, ROOT):
            compile_tree(tree)
        trees = {"base": base, "work": ROOT}
        for m in models:
            for n in step_list:
                runs: dict[str, list[Run]] = {"plain": [], "base": [], "work": []}
                outs = {k: Path(tmp) / f"{m.name}-{n}-{k}".replace(" ", "_") for k in trees}
                for i in range(args.repeat):
                    runs["plain"].append(plain(m, n))
                    order = ("base", "work") if i % 2 == 0 else ("work", "base")
                    for k in order:
                        runs[k].append(scan_with(trees[k], m, n, outs[k], env_extra))
                failed = [k for k, rs in runs.items() if any(r.rc != 0 for r in rs)]
                if failed:
                    bad += 1
                    print(f"| {m.name} | {n} | failed: {', '.join(failed)} |||||||")
                    continue
                cpu = {k: min(r.cpu_seconds for r in rs) for k, rs in runs.items()}
                wall = {k: min(r.seconds for r in rs) for k, rs in runs.items()}
                diff = differing(outs["base"], outs["work"])
                cell, explained = ("identical", True) if not diff else explain(
                    outs["base"], outs["work"], diff)
                bad += not explained
                print(f"| {m.name} | {n} | {cpu['plain']:.2f} / {wall['plain']:.2f} s | "
                      f"{cpu['base']:.2f} / {wall['base']:.2f} s | "
                      f"{cpu['work']:.2f} / {wall['work']:.2f} s | "
                      f"{cpu['base'] / cpu['plain']:.2f} / {wall['base'] / wall['plain']:.2f} | "
                      f"{cpu['work'] / cpu['plain']:.2f} / {wall['work'] / wall['plain']:.2f} | "
                      f"{cell} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
