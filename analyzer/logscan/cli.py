"""`opscan log FILE... --framework paddle|torch [--scan report.json] [-o OUTDIR]`: thin over
`analyzer.logscan.scan_logs` and `render.write_log_reports`."""
from __future__ import annotations

import argparse
import sys

from opdb import clikit


def _parser() -> argparse.ArgumentParser:
    from analyzer.logscan.render import FORMATS

    p = clikit.ArgumentParser(
        prog="opscan log",
        description="Read logs of real NPU runs (plain or gzip, any size) and report every op "
                    "that fell back to the CPU or failed; with --scan, join them with a scan.")
    p.add_argument("files", nargs="+", type=clikit.path_arg, help="log files (GLOG_v=3 Paddle logs, torch_npu stderr)")
    clikit.add_framework(p, required=True)
    p.add_argument("--scan", default=None, type=clikit.path_arg, help="report.json of an earlier `opscan` scan")
    clikit.add_output(p)
    p.add_argument("--format", default=",".join(FORMATS), type=clikit.text_arg,
                   help=f"comma-separated formats (default {','.join(FORMATS)})")
    clikit.add_json(p)
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def go() -> int:
        from analyzer.logscan.model import scan_logs
        from analyzer.logscan.render import write_log_reports
        from analyzer.report.writer import check_formats

        formats = check_formats(args.format)  # a typo is refused with or without -o
        if args.output:  # a file in the way or an existing report is refused before reading
            from analyzer.logscan.render import RENDER
            from opdb.fsio import check_files

            check_files(args.output, [RENDER[f][0] for f in formats], args.force)
        rep = scan_logs(args.files, args.framework, scan_report=args.scan)
        if args.json:
            clikit.print_json(rep.to_json())
        else:
            sys.stdout.write(rep.summary + "\n")
            for o in rep.ops:
                extra = f" [{', '.join(o.dtypes)}]" if o.dtypes else ""
                sys.stdout.write(f"  {o.kind:<16} {o.op}{extra} x{o.count} first at {o.first}\n")
            if rep.join is not None:
                for m in rep.join.missed:
                    sys.stdout.write(f"  missed by the scan: {m}\n")
            for n in rep.notes:
                sys.stdout.write(f"  note: {n}\n")
        if args.output:
            for p in write_log_reports(rep.to_json(), args.output, formats, force=args.force):
                sys.stderr.write(f"opscan: wrote {p}\n")
        return 0

    return clikit.run(go, "opscan log")
