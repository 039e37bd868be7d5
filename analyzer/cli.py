"""`opscan` command line. Thin over analyzer.scan / analyzer.classify.

    opscan MODEL.py [--framework torch|paddle] [--mode auto|real|meta] [--target T] [--soc S]
                    [--steps N] [-o OUTDIR] [--format md,html,csv,xlsx,json] [--force] [-q]
                    [--script] [-- script args]
    opscan classify OP [OP ...] --framework F [--dtype D] [--target T] [--soc S] [--json]
    opscan blacklist MODEL.py --framework paddle [scan options] [--suspect OPS] [--current LIST]
    opscan log FILE... --framework paddle|torch [--scan report.json] [-o OUTDIR]
    opscan align dump|compare ...   (analyzer/align/cli.py)
    opscan zoo SOURCES... --framework F [--target T ...] [--jobs N] [--ray ADDRESS] [-o DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from opdb import clikit

FORMATS = ("md", "html", "csv", "xlsx", "json")


def _scan_parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(
        prog="opscan",
        description="Trace a training step on CPU, classify every op against opdb for an "
                    "Ascend target, and write reports. (`opscan classify OP ...` checks ops "
                    "without a model.)")
    p.add_argument("model", type=clikit.path_arg, help="model file defining build(), or a training script with --script")
    clikit.add_framework(p)  # default: the one framework the model file imports
    p.add_argument("--mode", choices=("auto", "real", "meta"), default="auto",
                   help="auto (default): real when a meta trace estimates the step fits "
                        "comfortably in free memory, else meta; real: execute on CPU; "
                        "meta: no storage (scan models larger than RAM)")
    p.add_argument("--target", default=None, type=clikit.text_arg,
                   help="provider release, e.g. torch_npu==2.13.0 or PaddleCustomDevice@develop "
                        "(default: the newest in opdb)")
    clikit.add_soc(p)
    p.add_argument("--steps", type=clikit.steps_int, default=1,
                   help="training steps to trace (default 1)")
    p.add_argument("--script", action="store_true",
                   help="run MODEL as __main__ with the args after --, stop after --steps optimizer steps")
    clikit.add_output(p)
    p.add_argument("--format", default=",".join(FORMATS), type=clikit.text_arg,
                   help=f"comma-separated report formats (default {','.join(FORMATS)})")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (the summary line still goes to stdout)")
    return p


def _classify_parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(prog="opscan classify",
                                description="Is this op covered on the target, and if not, what now?")
    p.add_argument("ops", nargs="+", type=clikit.text_arg, help="aten::erfinv, aten::add.Tensor, adam, conv2d_grad, ...")
    clikit.add_framework(p, required=True)
    p.add_argument("--dtype", action="append", default=[], type=clikit.dtype_arg, help="traced dtype (repeatable)")
    p.add_argument("--target", default=None, type=clikit.text_arg)
    clikit.add_soc(p)
    clikit.add_json(p)
    return p


def main_classify(argv: list[str]) -> int:
    args = _classify_parser().parse_args(argv)

    def go() -> None:
        import dataclasses

        from analyzer.classify import ClassifyContext, check_op_name, classify_op
        from opdb.query import OpDB

        dtypes = tuple(args.dtype)  # canonical: clikit.dtype_arg refused typos at parse time
        ctx = ClassifyContext.create(OpDB.open(), args.framework, args.target, args.soc)
        for op in args.ops:
            check_op_name(ctx, op)  # unknown names exit 2 with the closest matches
        verdicts = [classify_op(ctx, op, dtypes) for op in args.ops]
        pairing = ctx.db.pairing(args.framework, ctx.target if args.target else None).lines()
        if args.json:
            clikit.print_json({"target": str(ctx.target), "soc": ctx.soc, "target_notes": pairing,
                               "verdicts": [dataclasses.asdict(v) for v in verdicts]})
            return
        for line in pairing:
            sys.stdout.write(f"note: {line}\n")
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


def _shown(path: Path, start: str) -> str:
    """A written path as the user named it: relative to where opscan started, if inside."""
    rel = os.path.relpath(path, start)
    return str(path) if rel.startswith("..") else rel


def main_scan(argv: list[str]) -> int:
    script_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, script_args = argv[:i], argv[i + 1:]
    parser = _scan_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        from analyzer.scan_checks import script_args_hint
        parser.error(script_args_hint(unknown, args.script))

    def go() -> None:
        from analyzer.progress import make_progress
        from analyzer.scan_checks import as_model_error, refuse_early, steps_shortfall

        if args.framework is None and Path(args.model).is_file():
            from analyzer.trace.entry import detect_framework  # reads the file, runs nothing

            args.framework = detect_framework(Path(args.model))
        # every check on arguments and outputs, before any user code runs
        outs = refuse_early(args.model, args.framework, args.output, args.format, args.force,
                            args.steps, args.script)
        db = None
        if args.target is not None:  # an unknown release is refused before any user code runs
            from opdb.query import OpDB

            db = OpDB.open()
            db.parse_target(args.framework, args.target)
        start = os.getcwd()  # a model may os.chdir: outputs are absolute, shown from here
        from analyzer.report.writer import write_reports
        from analyzer.scan import ScanOptions, scan

        progress = make_progress(quiet=args.quiet)  # stderr; the summary stays on stdout
        try:
            if progress:
                progress(f"scanning {args.model} ({args.framework}, {args.mode} mode, "
                         f"{args.steps} step{'s' if args.steps != 1 else ''})")
            try:
                result = scan(ScanOptions(model=args.model, framework=args.framework,
                                          mode=args.mode, target=args.target, soc=args.soc,
                                          steps=args.steps, script=args.script,
                                          script_args=script_args, progress=progress), db=db)
            except BaseException as exc:  # noqa: BLE001 - user code raising past the tracer
                err = as_model_error(exc, args.model)
                if err is None:
                    raise
                raise err from None
            if progress:
                progress(f"writing reports to {outs.outdir}")
            paths = write_reports(result.report.to_json(), outs.outdir, formats=outs.formats,
                                  force=args.force, graphml=result.graphml)
        finally:
            if progress:
                progress.close()  # clears a live line before the summary
        sys.stdout.write(result.report.summary + "\n")
        for line in result.pairing:
            sys.stdout.write(f"  note: {line}\n")
        bl = result.report.blacklist
        if bl is not None and (bl.export or bl.refused):
            sys.stdout.write(f"  {bl.summary}\n" + (f"  {bl.export}\n" if bl.export else ""))
        for p in paths:
            sys.stdout.write(f"  wrote {_shown(p, start)}\n")
        if result.report.partial:
            sys.stderr.write(f"opscan: partial report: {result.report.error}\n")
            return 2
        short = steps_shortfall(result.report.notes) if args.script else None
        if short:
            sys.stderr.write(f"opscan: {short}\n")
            return 2

    return clikit.run(go, "opscan")


def _skip_exit_collection() -> None:
    """At exit, move every object out of the collector's reach (gc.freeze): the
    interpreter's final collections walk the whole heap, ~1.5 s of CPU after a 70B-class
    meta scan (torch, the trace, the graph); memory is handed back to the OS either way."""
    import gc

    gc.freeze()


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program itself (console script, python -m), not a library call
        import atexit

        from analyzer.trace import heap

        atexit.register(_skip_exit_collection)
        heap.enable()  # the process ends after this command (analyzer.trace.heap)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "classify":
        return main_classify(argv[1:])
    if argv and argv[0] == "blacklist":
        from analyzer.cli_blacklist import main as main_blacklist
        return main_blacklist(argv[1:])
    if argv and argv[0] == "log":
        from analyzer.logscan.cli import main as main_log
        return main_log(argv[1:])
    if argv and argv[0] == "align":
        from analyzer.align.cli import main as main_align
        return main_align(argv[1:])
    if argv and argv[0] == "zoo":
        from analyzer.zoo.cli import main_zoo

        return main_zoo(argv[1:])
    return main_scan(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
