"""`opscan blacklist MODEL.py --framework paddle [scan options] [--suspect OPS] [--current LIST]`:
trace and classify like `opscan`, then print the CUSTOM_DEVICE_BLACK_LIST suggestion
(analyzer.blacklist) with each entry's reason, severity, modes and cost; `--json` prints
the same record the report's `blacklist` field holds; `-o DIR` also writes the scan reports."""
from __future__ import annotations

import sys

from opdb import clikit


def _parser():
    from analyzer.cli import _scan_parser

    p = _scan_parser()
    p.prog = "opscan blacklist"
    p.description = ("Suggest a CUSTOM_DEVICE_BLACK_LIST for a Paddle model on a "
                     "PaddleCustomDevice target: reasons, severity, modes, CPU-kernel check "
                     "and cost per step.")
    p.add_argument("--suspect", default="",
                   help="comma-separated kernels to blacklist as precision suspects (phi, fluid "
                        "or API names; their grad kernels the model runs are added)")
    p.add_argument("--current", default=None,
                   help='your present value, e.g. --current "$CUSTOM_DEVICE_BLACK_LIST": says '
                        "which entries this model and target no longer need")
    clikit.add_json(p)
    return p


def main(argv: list[str]) -> int:
    script_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, script_args = argv[:i], argv[i + 1:]
    args = _parser().parse_args(argv)

    def go() -> int:
        from analyzer.progress import make_progress
        from analyzer.scan import ScanOptions, scan
        from opdb.errors import OpscanError

        if args.framework is None:
            args.framework = "paddle"
        if args.framework != "paddle":
            raise OpscanError("CUSTOM_DEVICE_BLACK_LIST is read by Paddle's custom-device "
                              "runtime only", hint="use --framework paddle (torch_npu falls "
                                                   "back per op by itself: see `opscan log`)")
        suspects = tuple(s for s in args.suspect.split(",") if s.strip())
        bad = [s for s in suspects if s != s.strip()]
        if bad:
            raise OpscanError(f"--suspect entry {bad[0]!r} has spaces",
                              hint="write the list as op1,op2 without spaces")
        from analyzer.scan_checks import check_model, refuse_early

        if args.output:  # refused before the user's code runs
            outs = refuse_early(args.model, "paddle", args.output, args.format, args.force,
                                args.steps, args.script)
        else:
            check_model(args.model, "paddle", args.script)
        progress = make_progress(quiet=args.quiet)
        try:
            result = scan(ScanOptions(model=args.model, framework="paddle", mode=args.mode,
                                      target=args.target, soc=args.soc, steps=args.steps,
                                      script=args.script, script_args=script_args,
                                      progress=progress, suspects=suspects,
                                      current_blacklist=args.current))
        finally:
            if progress:
                progress.close()
        bl = result.report.blacklist
        if args.output:
            from analyzer.report.writer import write_reports

            for p in write_reports(result.report.to_json(), outs.outdir, formats=outs.formats,
                                   force=args.force, graphml=result.graphml):
                sys.stderr.write(f"opscan: wrote {p}\n")
        if args.json:
            clikit.print_json(bl.to_json())
        else:
            sys.stdout.write(bl.text())
        if result.report.partial:
            sys.stderr.write(f"opscan: partial trace: {result.report.error}\n")
            return 2
        return 0

    return clikit.run(go, "opscan blacklist")
