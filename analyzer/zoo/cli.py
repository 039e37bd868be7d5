"""`opscan zoo SOURCES...`: argument parsing and output for the zoo (the work is in
analyzer.zoo.{entries,runner,backlog,render})."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from opdb import clikit
from opdb.errors import OpscanError


def parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(
        prog="opscan zoo",
        description="Scan a whole model zoo (one process per model) and rank which kernels "
                    "unblock the most models.")
    p.add_argument("sources", nargs="+", type=clikit.path_arg,
                   help="model files, directories of model files, list files (.txt/.yaml), "
                        "or generators hf:MODEL_TYPE, timm:NAME, paddle.vision:NAME")
    clikit.add_framework(p, required=True)
    p.add_argument("--target", action="append", default=None, type=clikit.text_arg,
                   help="provider release (repeat to compare releases; default: the newest in opdb)")
    clikit.add_soc(p)
    p.add_argument("--mode", choices=("auto", "real", "meta"), default="auto",
                   help="scan mode for entries that do not set one (default auto)")
    p.add_argument("--steps", type=clikit.steps_int, default=1, help="training steps per model (default 1)")
    p.add_argument("--jobs", "-j", type=clikit.positive_int, default=1, help="models scanned at once (default 1)")
    p.add_argument("--timeout", type=clikit.positive_float, default=600.0,
                   help="seconds per model before it is stopped (default 600)")
    p.add_argument("--memory", type=clikit.positive_float, default=8.0,
                   help="GiB of resident memory per model before it is stopped (default 8)")
    p.add_argument("--ray", default=None, metavar="ADDRESS", type=clikit.text_arg,
                   help="run the scans on a Ray cluster (`local` starts one on this machine)")
    p.add_argument("--cache", default=None, type=clikit.path_arg,
                   help="result cache directory (default $OPSCAN_CACHE/zoo)")
    clikit.add_output(p)
    p.add_argument("--format", default="md,html,csv,xlsx,json", type=clikit.text_arg,
                   help="comma-separated formats (default md,html,csv,xlsx,json)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


class _Progress:
    """A rich bar on a terminal, plain lines otherwise, nothing with -q."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bar = None
        if not quiet and sys.stderr.isatty():
            try:
                from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                           TimeRemainingColumn)

                self.bar = Progress(TextColumn("opscan zoo"), BarColumn(), MofNCompleteColumn(),
                                    TimeRemainingColumn(), TextColumn("{task.description}"),
                                    transient=True)
            except ImportError:
                self.bar = None
        self.task = None

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()

    def __call__(self, line: str, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.bar:
            if self.task is None:
                self.task = self.bar.add_task(line, total=total)
            self.bar.update(self.task, completed=done, description=line[:60])
            self.bar.console.print(f"[{done}/{total}] {line}", markup=False, highlight=False)
        else:
            sys.stderr.write(f"opscan zoo: [{done}/{total}] {line}\n")
            sys.stderr.flush()


def _check_args(args) -> tuple[str, ...]:
    from analyzer.zoo.render import FORMATS

    formats = tuple(dict.fromkeys(f.strip() for f in args.format.split(",") if f.strip()))
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise OpscanError(f"unknown --format {', '.join(bad) or '(empty)'}",
                          hint=f"use one or more of {','.join(FORMATS)}")
    if args.steps < 1:
        raise OpscanError(f"--steps must be at least 1, got {args.steps}", hint="e.g. --steps 1")
    if args.jobs < 1:
        raise OpscanError(f"--jobs must be at least 1, got {args.jobs}", hint="e.g. --jobs 2")
    if not args.timeout > 0:
        raise OpscanError(f"--timeout must be positive, got {args.timeout:g}", hint="e.g. --timeout 600")
    if not args.memory > 0:
        raise OpscanError(f"--memory must be positive, got {args.memory:g}", hint="e.g. --memory 8")
    return formats


def _outputs(outdir: Path, formats, force: bool) -> Path:
    """Check the output directory and the files the zoo will write, before any scan."""
    from opdb.fsio import check_files

    return check_files(outdir, [f"zoo.{f}" for f in formats] + ["zoo-run.json"], force)


def _resolve_targets(framework: str, targets, soc) -> list[str]:
    from analyzer.classify import ClassifyContext
    from opdb.query import OpDB

    db = OpDB.open()
    out = []
    for t in targets or [None]:
        name = str(ClassifyContext.create(db, framework, t, soc).target)
        if name not in out:
            out.append(name)
    return out


def run(args) -> int:
    from opdb.fsio import write_files
    from analyzer.zoo.backlog import build_backlog
    from analyzer.zoo.entries import expand_sources
    from analyzer.zoo.render import render_all, zoo_json
    from analyzer.zoo.runner import TOOL, ZooOptions, run_zoo

    formats = _check_args(args)
    shown = Path(args.output or f"opscan-out/zoo-{args.framework}")
    outdir = _outputs(shown, formats, args.force)
    entries = expand_sources(args.sources)
    if not entries:
        raise OpscanError(f"{' '.join(args.sources)[:200]}: lists no model",
                          hint="put one model file, directory or hf:/timm: name per line")
    from analyzer.zoo.cache import default_cache_dir
    from opdb.fsio import check_out_dir

    check_out_dir(args.cache or default_cache_dir(), "--cache")  # before any model runs
    targets = _resolve_targets(args.framework, args.target, args.soc)
    if args.ray:
        from analyzer.zoo.runner import check_ray_address

        check_ray_address(args.ray)  # before any model runs
    soc = args.soc or "ascend910b"
    start = time.monotonic()
    with _Progress(args.quiet) as progress:
        opts = ZooOptions(framework=args.framework, targets=targets, soc=args.soc, mode=args.mode,
                          steps=args.steps, jobs=args.jobs, timeout=args.timeout,
                          memory_gb=args.memory, ray=args.ray,
                          cache_dir=Path(args.cache) if args.cache else None, progress=progress)
        results = run_zoo(entries, opts)
    wall = time.monotonic() - start
    bl = build_backlog([(r.task.target, r.task.entry.name, r.task.entry.kind, r.result)
                        for r in results])
    doc = zoo_json(bl, {"tool": TOOL, "framework": args.framework, "mode": args.mode,
                        "soc": soc, "steps": args.steps})
    files = render_all(doc, formats)
    run_log = {"wall_seconds": round(wall, 1), "jobs": args.jobs, "ray": args.ray,
               "scans": [{"model": r.task.entry.name, "target": r.task.target,
                          "status": r.result.get("status"), "cached": r.cached,
                          "seconds": r.result.get("seconds"),
                          "peak_rss_mb": r.result.get("peak_rss_mb")} for r in results]}
    files["zoo-run.json"] = (json.dumps(run_log, indent=2, sort_keys=True) + "\n").encode()
    _outputs(outdir, formats, args.force)  # again: nothing appeared while the zoo ran
    write_files(outdir, files, force=args.force)
    for line in doc["summary"]:
        sys.stdout.write(line + "\n")
    fresh = sum(1 for r in results if not r.cached)
    sys.stdout.write(f"  {len(results)} scans ({fresh} run, {len(results) - fresh} from the cache) "
                     f"in {wall:.0f} s\n")
    for name in files:
        sys.stdout.write(f"  wrote {shown / name}\n")
    return 0


def main_zoo(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return clikit.run(lambda: run(args), "opscan zoo")
