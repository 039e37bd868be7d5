"""`opscan` command line. Thin over analyzer.scan / analyzer.classify.

    opscan MODEL.py [--framework torch|paddle] [--mode auto|real|meta] [--target T] [--soc S]
                    [--steps N] [-o OUTDIR] [--format md,html,csv,xlsx,json] [--force] [-q]
                    [--script] [-- script args]
    opscan classify OP [OP ...] --framework F [--dtype D] [--target T] [--soc S] [--json]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opdb import clikit

FORMATS = ("md", "html", "csv", "xlsx", "json")


def _scan_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="opscan",
        description="Trace a training step on CPU, classify every op against opdb for an "
                    "Ascend target, and write reports. (`opscan classify OP ...` checks ops "
                    "without a model.)")
    p.add_argument("model", help="model file defining build(), or a training script with --script")
    clikit.add_framework(p)  # default: the one framework the model file imports
    p.add_argument("--mode", choices=("auto", "real", "meta"), default="auto",
                   help="auto (default): real when a meta trace estimates the step fits "
                        "comfortably in free memory, else meta; real: execute on CPU; "
                        "meta: no storage (scan models larger than RAM)")
    p.add_argument("--target", default=None,
                   help="provider release, e.g. torch_npu==2.13.0 or PaddleCustomDevice@develop "
                        "(default: the newest in opdb)")
    clikit.add_soc(p)
    p.add_argument("--steps", type=int, default=1, help="training steps to trace (default 1)")
    p.add_argument("--script", action="store_true",
                   help="run MODEL as __main__ with the args after --, stop after --steps optimizer steps")
    clikit.add_output(p)
    p.add_argument("--format", default=",".join(FORMATS),
                   help=f"comma-separated report formats (default {','.join(FORMATS)})")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (the summary line still goes to stdout)")
    return p


def _classify_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="opscan classify",
                                description="Is this op covered on the target, and if not, what now?")
    p.add_argument("ops", nargs="+", help="aten::erfinv, aten::add.Tensor, adam, conv2d_grad, ...")
    clikit.add_framework(p, required=True)
    p.add_argument("--dtype", action="append", default=[], help="traced dtype (repeatable)")
    p.add_argument("--target", default=None)
    clikit.add_soc(p)
    clikit.add_json(p)
    return p


def main_classify(argv: list[str]) -> int:
    args = _classify_parser().parse_args(argv)

    def go() -> None:
        import dataclasses

        from analyzer.classify import ClassifyContext, classify_op
        from opdb.query import OpDB

        ctx = ClassifyContext.create(OpDB.open(), args.framework, args.target, args.soc)
        verdicts = [classify_op(ctx, op, tuple(args.dtype)) for op in args.ops]
        if args.json:
            clikit.print_json({"target": str(ctx.target), "soc": ctx.soc,
                               "verdicts": [dataclasses.asdict(v) for v in verdicts]})
            return
        for v in verdicts:
            dt = f" [{', '.join(v.dtypes)}]" if v.dtypes else ""
            sys.stdout.write(f"{v.op}{dt}: {v.category} on {ctx.target} ({ctx.soc})\n")
            if v.action:
                sys.stdout.write(f"  action: {v.action}\n")
            for c in v.candidates:
                sup = {True: "yes", False: "no", None: "unknown"}[c.supported_on_soc]
                sys.stdout.write(f"  candidate {c.api} ({c.evidence} {c.confidence:.2f}, on {ctx.soc}: {sup})\n"
                                 f"    {c.signature}\n")
            for e in v.evidence:
                sys.stdout.write(f"  evidence: {e}\n")
            for d in v.drift:
                sys.stdout.write(f"  differs: {d}\n")

    return clikit.run(go, "opscan classify")


def main_scan(argv: list[str]) -> int:
    script_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, script_args = argv[:i], argv[i + 1:]
    args = _scan_parser().parse_args(argv)

    def go() -> None:
        from analyzer.progress import make_progress
        from analyzer.report.writer import write_reports
        from analyzer.scan import ScanOptions, scan
        from opdb.errors import OpscanError

        formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
        bad = [f for f in formats if f not in FORMATS]
        if bad:
            raise OpscanError(f"unknown report format {', '.join(bad)}", hint=f"use {','.join(FORMATS)}")
        if args.steps < 1:
            raise OpscanError(f"--steps must be at least 1, got {args.steps}")
        model = Path(args.model)
        if args.framework is None:
            from analyzer.trace.entry import detect_framework

            args.framework = detect_framework(model)
        outdir = Path(args.output or f"opscan-out/{model.stem}-{args.framework}")
        progress = make_progress(quiet=args.quiet)  # stderr; the summary stays on stdout
        try:
            if progress:
                progress(f"scanning {args.model} ({args.framework}, {args.mode} mode, "
                         f"{args.steps} step{'s' if args.steps != 1 else ''})")
            result = scan(ScanOptions(model=args.model, framework=args.framework, mode=args.mode,
                                      target=args.target, soc=args.soc, steps=args.steps,
                                      script=args.script, script_args=script_args,
                                      progress=progress))
            if progress:
                progress(f"writing reports to {outdir}")
            paths = write_reports(result.report.to_json(), outdir, formats=formats, force=args.force,
                                  graphml=result.graphml)
        finally:
            if progress:
                progress.close()  # clears a live line before the summary
        sys.stdout.write(result.report.summary + "\n")
        for p in paths:
            sys.stdout.write(f"  wrote {p}\n")
        if result.report.partial:
            sys.stderr.write(f"opscan: partial report: {result.report.error}\n")
            return 2

    return clikit.run(go, "opscan")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "classify":
        return main_classify(argv[1:])
    return main_scan(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
