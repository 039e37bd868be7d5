"""`opscan align dump|compare`: thin over analyzer.align.runner / compare / report.

    opscan align dump MODEL.py --framework torch|paddle [--device cpu|gpu|npu] [--steps N]
                      [--level module|op] [--scope PATH ...] [--amp bf16|fp16] [--reference fp64]
                      [--save-inputs] [--inputs DUMP_A] -o DUMPDIR [--force]
    opscan align compare A B [-o OUT] [--map FILE] [--reference REF] [--floor DUMP ...]
                      [--format md,html,csv,xlsx,json] [--target T] [--soc S] [--no-repro] [--force]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opdb import clikit

USAGE = "opscan align {dump,compare} ... (see `opscan align dump -h`, `opscan align compare -h`)"


def _dump_parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(prog="opscan align dump",
                                description="Run training steps of MODEL.py with statistics hooks; "
                                            "write msprobe's dump layout.")
    p.add_argument("model", type=clikit.path_arg, help="model file defining build() (the same contract as `opscan`)")
    clikit.add_framework(p, required=True)
    p.add_argument("--device", choices=("cpu", "gpu", "npu"), default="cpu")
    p.add_argument("--steps", type=clikit.steps_int, default=1, help="training steps to dump (default 1)")
    p.add_argument("--level", choices=("module", "op"), default="module",
                   help="module: per module call (msprobe L0); op: also every framework op inside")
    p.add_argument("--scope", action="append", default=[], metavar="PATH", type=clikit.text_arg,
                   help="at --level op, only ops inside this module path (repeatable)")
    p.add_argument("--amp", choices=("bf16", "fp16"), default=None, help="autocast dtype")
    p.add_argument("--reference", choices=("fp64",), default=None,
                   help="the float64 CPU run that sets the noise floor of a comparison")
    p.add_argument("--save-inputs", action="store_true",
                   help="save weights and build() inputs so the other side can load them")
    p.add_argument("--inputs", default=None, metavar="DUMP_A", type=clikit.path_arg, help="load weights, inputs and seed from DUMP_A")
    p.add_argument("--seed", type=clikit.seed_arg, default=0)
    p.add_argument("--fault", default=None, metavar="KIND[:N[:REL]]", type=clikit.text_arg,
                   help="plant a fault for testing the localiser: scale the N-th forward call of "
                        "gelu|layer_norm|softmax|conv|matmul by 1+REL (default 1e-3)")
    p.add_argument("-o", "--output", required=True, type=clikit.path_arg, help="dump directory")
    p.add_argument("--force", action="store_true", help="write into a non-empty directory")
    return p


def _compare_parser() -> argparse.ArgumentParser:
    from analyzer.align.report import FORMATS

    p = clikit.ArgumentParser(prog="opscan align compare",
                                description="Compare two dumps (opscan's or msprobe's): first "
                                            "diverging module, then the op, its coverage verdict, a repro.")
    p.add_argument("a", type=clikit.path_arg, help="side A dump directory (the reference side, e.g. CPU)")
    p.add_argument("b", type=clikit.path_arg, help="side B dump directory (e.g. the NPU)")
    p.add_argument("-o", "--output", default=None, type=clikit.path_arg, help="report directory (default opscan-out/align)")
    p.add_argument("--map", default=None, metavar="FILE", type=clikit.path_arg,
                   help='JSON/YAML {"module.path.in.b": "module.path.in.a"} for renamed modules')
    p.add_argument("--reference", default=None, metavar="REF", type=clikit.path_arg, help="a --reference fp64 dump (noise floor)")
    p.add_argument("--floor", action="append", default=[], metavar="DUMP", type=clikit.path_arg,
                   help="a CPU run in the device side's dtype, for that side's floor (repeatable)")
    p.add_argument("--step", type=clikit.non_negative_int, default=None, help="step to compare (default the first)")
    p.add_argument("--format", default=",".join(FORMATS), type=clikit.text_arg, help=f"report formats (default {','.join(FORMATS)})")
    p.add_argument("--target", default=None, type=clikit.text_arg, help="provider release for the suspects' verdicts")
    clikit.add_soc(p)
    p.add_argument("--no-repro", action="store_true", help="do not re-run side A for a single-op repro")
    p.add_argument("--force", action="store_true", help="overwrite existing reports")
    return p


def main_dump(argv: list[str]) -> int:
    args = _dump_parser().parse_args(argv)

    def go() -> None:
        from analyzer.align.fault import Fault
        from analyzer.align.runner import DumpOptions, run_dump
        from opdb.errors import OpscanError

        fault = None
        if args.fault:
            try:
                fault = Fault.parse(args.fault)
            except ValueError as e:
                raise OpscanError(f"--fault {args.fault}: {e}", hint="use KIND[:N[:REL]], e.g. gelu:0") from None
        res = run_dump(DumpOptions(model=args.model, framework=args.framework, output=args.output,
                                   device=args.device, steps=args.steps, level=args.level,
                                   amp=args.amp, reference=args.reference, save_inputs=args.save_inputs,
                                   inputs_from=args.inputs, scope=tuple(args.scope), fault=fault,
                                   seed=args.seed, force=args.force))
        sys.stdout.write(res.summary + "\n")
        for p in res.steps:
            sys.stdout.write(f"  wrote {p}\n")
        for n in res.meta.get("notes", []):
            sys.stdout.write(f"  note: {n}\n")

    return clikit.run(go, "opscan align dump")


def main_compare(argv: list[str]) -> int:
    args = _compare_parser().parse_args(argv)

    def go() -> None:
        from analyzer.align.api import compare_and_report

        out = Path(args.output or "opscan-out/align")
        rep, paths = compare_and_report(args.a, args.b, out, reference=args.reference,
                                        floors=tuple(args.floor), mapping=args.map, step=args.step,
                                        formats=args.format, target=args.target, soc=args.soc,
                                        repro=not args.no_repro, force=args.force)
        sys.stdout.write(rep.summary + "\n")
        for d in rep.descent:
            sys.stdout.write(f"  {d}\n")
        for s in rep.suspects[:3]:
            sys.stdout.write(f"  suspect {s.rank}: {s.op} ({s.key}): {s.verdict.get('category', 'unknown')}\n")
        for n in rep.next_steps:
            sys.stdout.write(f"  next: {n}\n")
        for p in paths:
            sys.stdout.write(f"  wrote {p}\n")

    return clikit.run(go, "opscan align compare")


def main(argv: list[str]) -> int:
    if argv and argv[0] == "dump":
        return main_dump(argv[1:])
    if argv and argv[0] == "compare":
        return main_compare(argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(f"usage: {USAGE}\n")
        return 0
    got = f"unknown subcommand {argv[0]!r}: " if argv else ""
    sys.stderr.write(f"opscan align: error: {got}expected `dump` or `compare` (usage: {USAGE})\n")
    return 2
