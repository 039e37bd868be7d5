"""`opgen`: render PaddleCustomDevice / torch_npu adapter skeletons for aclnn APIs.

  opgen aclnn NAME --target paddle|torch [--op OP] [--layout in-tree|standalone|both]
        [-o DIR] [--force] [--pick N] [--build] [--check-in-tree TREE] [--soc CHIP]
  opgen --from-report report.json --target paddle|torch [-o DIR] [--force]

Thin layer over codegen.api; user errors are one line on stderr and exit 1
(2 for usage errors, 3 when NAME is ambiguous and --pick is missing).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opdb import clikit


def _parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(prog="opgen", description=__doc__.split("\n\n")[0])
    p.add_argument("--from-report", metavar="REPORT", type=clikit.path_type,
                   help="generate every cann-available gap of an opscan report.json")
    p.add_argument("--target", choices=("paddle", "torch"))
    p.add_argument("--layout", choices=("in-tree", "standalone", "both"), default=None,
                   help="in-tree, standalone or both (default)")
    # -o/--output as in every opscan command (--out: the spelling opgen had first, kept)
    p.add_argument("-o", "--output", "--out", dest="out", type=clikit.path_arg,
                   help="output directory (new or empty; --force replaces one opgen generated)")
    p.add_argument("--force", action="store_true", help="replace an output directory opgen generated (files you added are kept)")
    p.add_argument("--snapshot", type=clikit.path_type, help="opdb snapshot directory (default: shipped)")
    p.add_argument("--soc", type=clikit.soc_arg, help="chip whose aclnn dtypes to register and test (default "
                                 "ascend910b; same ids as opscan --soc)")
    sub = p.add_subparsers(dest="command")
    a = sub.add_parser("aclnn", help="adapter for one aclnn API")
    a.add_argument("name", type=clikit.text_arg, help="aclnnApplyAdamW, or loosely: Adam, adamw, layer_norm")
    a.add_argument("--target", dest="target_sub", choices=("paddle", "torch"))
    a.add_argument("--op", type=clikit.text_arg, help="framework op to adapt (adam, aten::_fused_adamw_)")
    a.add_argument("--layout", dest="layout_sub", choices=("in-tree", "standalone", "both"))
    a.add_argument("-o", "--output", "--out", dest="out_sub", type=clikit.path_arg,
                   help="output directory (new or empty; --force replaces one opgen generated)")
    a.add_argument("--force", dest="force_sub", action="store_true")
    a.add_argument("--pick", type=clikit.positive_int, help="choose candidate N when NAME is ambiguous")
    a.add_argument("--soc", dest="soc_sub", type=clikit.soc_arg, help="chip whose aclnn dtypes to register and test")
    a.add_argument("--build", action="store_true",
                   help="also configure+build the standalone project and import its module")
    a.add_argument("--check-in-tree", metavar="DIR", type=clikit.path_type,
                   help="compile the in-tree adapter with -fsyntax-only inside a "
                        "PaddleCustomDevice or op-plugin checkout and report the first error")
    return p


def _once(parser, args, option: str, top: str, sub: str):
    """An option `opgen` takes before and after `aclnn`: its one value (given on either side,
    or the same on both), else a usage error naming both."""
    a, b = getattr(args, top, None), getattr(args, sub, None)
    if a is not None and b is not None and a != b:
        parser.error(f"{option} given twice with different values ({a} before `aclnn`, {b} "
                     f"after): give it once")
    return b if b is not None else a


def main(argv=None, db=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    target = _once(parser, args, "--target", "target", "target_sub")
    layout = _once(parser, args, "--layout", "layout", "layout_sub") or "both"
    out = _once(parser, args, "-o/--output", "out", "out_sub")
    out = Path(out) if out is not None else None
    force = getattr(args, "force_sub", False) or args.force
    args.soc = _once(parser, args, "--soc", "soc", "soc_sub")
    if args.command != "aclnn" and args.from_report is None:
        print("opgen: error: give `aclnn NAME` or --from-report REPORT (see `opgen --help`)",
              file=sys.stderr)
        return 2
    if args.command == "aclnn" and args.from_report is not None:
        parser.error(f"--from-report and `aclnn {args.name}` exclude each other: give one")
    if getattr(args, "check_in_tree", None) is not None and layout == "standalone":
        parser.error("--check-in-tree compiles the in-tree adapter: use --layout in-tree or both")
    if target is None:
        print("opgen: error: --target paddle|torch is required", file=sys.stderr)
        return 2
    if args.command == "aclnn" and args.build and layout == "in-tree":
        print("opgen: error: --build needs the standalone layout (use --layout standalone or both)",
              file=sys.stderr)
        return 2
    from opdb import clikit

    return clikit.run(lambda: _run(args, argv, target, layout, out, force, db), "opgen")


def _run(args, argv, target, layout, out, force, db) -> int:
    from codegen import api
    from codegen.resolve import AmbiguousName

    if args.from_report is not None:
        out = out or Path("opgen-out")
    if out is not None:
        out = api.check_out(out, force)  # absolute, refused before anything is rendered
    from opdb.soc import resolve_soc
    soc = resolve_soc(args.soc).id  # one-line error first (args.soc: either side, main())
    if getattr(args, "check_in_tree", None) is not None:
        from codegen.intree import check_tree
        check_tree(args.check_in_tree, target)  # a wrong tree is refused before anything is written
    try:
        if db is None:
            from opdb.query import OpDB
            db = OpDB.open(snapshot_dir=args.snapshot) if args.snapshot else OpDB.open()
        if args.from_report is not None:
            done = api.generate_from_report(db, args.from_report, target, out, layout=layout,
                                            force=force, soc=soc)
            for r, path in done:
                print(f"{path}: {r.api.name} for {r.op.name} ({len(r.todos)} TODOs)")
            print(f"opgen: {len(done)} adapter(s) under {out}")
            return 0
        cmd = "opgen " + " ".join(argv if argv is not None else sys.argv[1:])
        r, path = api.generate(db, args.name, target, out, op=args.op, layout=layout,
                               force=force, pick=args.pick, command=cmd, soc=soc)
        print(f"opgen: {r.api.name} for {r.op.name} -> {path} ({len(r.files)} files, "
              f"{len(r.todos)} TODOs; see {path / 'README.md'})")
        if args.check_in_tree is not None:
            from codegen.intree import check_in_tree
            res_tree = check_in_tree(r, args.check_in_tree)
            print(f"opgen: {res_tree.summary()}", file=sys.stdout if res_tree.ok else sys.stderr)
            if not res_tree.ok:
                return 1
        if args.build:
            from codegen.build import build_projects, check_module
            res = build_projects([path / "standalone"], path / "build")
            info = check_module(res.module_dir, r.module_name, target)
            print(f"opgen: built in {res.configure_seconds + res.build_seconds:.1f}s; "
                  f"is_available()={info.get('is_available')} {info.get('reason', '')}")
        return 0
    except AmbiguousName as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
