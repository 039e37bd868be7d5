"""`opdb` command line: stats, show, search, sql, build, sync. Thin over opdb's library."""
from __future__ import annotations

import argparse
import sys

from opdb import clikit


def _parser() -> argparse.ArgumentParser:
    p = clikit.ArgumentParser(prog="opdb", description="Ascend operator database")
    sub = p.add_subparsers(dest="cmd", required=True,
                           metavar="{stats,show,search,diff,sql,build,sync}")

    s = sub.add_parser("stats", help="row counts per source and version")
    clikit.add_json(s)

    s = sub.add_parser("show", help="everything known about an op or aclnn API")
    s.add_argument("name", type=clikit.text_arg, help="aten::erfinv, adam, conv2d_grad, aclnnAdd, ...")
    clikit.add_framework(s)
    clikit.add_soc(s)
    clikit.add_json(s)

    s = sub.add_parser("search", help="fuzzy search over APIs and ops")
    s.add_argument("text", type=clikit.text_arg)
    s.add_argument("--limit", type=clikit.positive_int, default=20, help="most hits to show (default 20)")
    clikit.add_json(s)

    s = sub.add_parser("diff", help="what changed between two provider releases")
    s.add_argument("a", type=clikit.text_arg, help="torch_npu==2.13.0, PaddleCustomDevice@release-2.6, ...")
    s.add_argument("b", type=clikit.text_arg, help="the release to compare it with")
    clikit.add_json(s)

    s = sub.add_parser("sql", help="run a read-only SQL query")
    s.add_argument("query")
    clikit.add_json(s)

    s = sub.add_parser("build", help="regenerate the shipped snapshot from the sources")
    s.add_argument("--sources", type=clikit.path_type, default=None,
                   help="opdb-sources directory (default: opdb/sources in the repository, or $OPSCAN_SOURCES)")
    s.add_argument("-o", "--output", "--out", dest="out", type=clikit.path_type, default=None,
                   help="snapshot directory (default: opdb/snapshot, the shipped snapshot, rebuilt "
                        "in place); another existing one needs --force")
    s.add_argument("--force", action="store_true",
                   help="overwrite the snapshot files in an existing -o/--output")

    s = sub.add_parser("sync", help="add facts from a real install to your local overlay")
    ss = s.add_subparsers(dest="what", required=True,
                          metavar="{cann,torch-npu,op-plugin,paddle-custom-device,paddle-live}")
    x = ss.add_parser("cann", help="aclnn headers of a CANN install")
    x.add_argument("--home", type=clikit.path_type, required=True, help="$ASCEND_HOME_PATH")
    x = ss.add_parser("torch-npu", help="a torch_npu wheel or installed package directory")
    g = x.add_mutually_exclusive_group(required=True)
    g.add_argument("--wheel", type=clikit.path_type, help="torch_npu-*.whl")
    g.add_argument("--installed", type=clikit.path_type, help="site-packages/torch_npu directory")
    x = ss.add_parser("op-plugin", help="an op-plugin checkout, into torch_npu releases")
    x.add_argument("--src", type=clikit.path_type, required=True)
    x.add_argument("--release", action="append", metavar="VERSION", type=clikit.text_arg,
                   help="torch_npu release to sync it into (repeatable; default: every committed "
                        "release whose torch version the checkout's all_version lists)")
    x = ss.add_parser("paddle-custom-device", help="a PaddleCustomDevice checkout")
    x.add_argument("--src", type=clikit.path_type, required=True)
    ss.add_parser("paddle-live", help="the live kernel registry (needs the NPU plugin loaded)")
    for x in ss.choices.values():
        x.add_argument("--force", action="store_true",
                       help="replace a release's rows even when the sync would lose facts it has")
    return p


def _cmd_stats(db, args) -> None:
    rows = db.stats()
    if args.json:
        clikit.print_json({"headline": db.headline(), "rows": rows})
        return
    sys.stdout.write("\n".join(db.headline()) + "\n\n")
    sys.stdout.write(clikit.table(
        ("table", "framework", "provider", "source", "version", "origin", "rows"),
        [(r["table"], r["framework"], r["provider"], r["source"], (r["version"] or "")[:16],
          r["origin"], r["rows"]) for r in rows]))


def _cmd_show(db, args) -> None:
    from opdb.show import describe, render_text

    desc = describe(db, args.name, args.framework, args.soc)
    if args.json:
        clikit.print_json(desc.to_json())
    else:
        sys.stdout.write(render_text(desc))


def _cmd_search(db, args) -> None:
    hits = db.search(args.text, args.limit)
    if args.json:
        clikit.print_json([h.__dict__ for h in hits])
        return
    if not hits:
        sys.stdout.write(f"no match for {args.text!r}\n")
        return
    sys.stdout.write(clikit.table(("score", "kind", "name", "detail"),
                                  [(f"{h.score:.2f}", h.kind, h.name, h.detail) for h in hits]))


def _cmd_diff(db, args) -> None:
    from opdb.diff import diff_releases

    d = diff_releases(db, args.a, args.b)
    if args.json:
        clikit.print_json(d.to_json())
    else:
        sys.stdout.write(d.render_text())


def _cmd_sql(db, args) -> None:
    cols, rows = db.sql(args.query)
    if args.json:
        clikit.print_json([dict(zip(cols, r)) for r in rows])
    else:
        sys.stdout.write(clikit.table(cols, rows))


def _cmd_build(args) -> None:
    from opdb import snapshot
    from opdb.build import build

    from opdb.build import default_sources_dir
    from opdb.fsio import check_outside

    out = snapshot.check_out_dir(args.out, force=args.force)
    check_outside(out, {"the sources (--sources)": args.sources or default_sources_dir()})
    manifest = build(args.sources, out, log=lambda m: sys.stderr.write(m + "\n"))
    for table, info in sorted(manifest["tables"].items()):
        sys.stdout.write(f"{table}: {info['rows']} rows\n")


def _cmd_sync(args) -> None:
    from opdb import sync

    path, counts = sync.run_sync(args.what, vars(args), force=args.force,
                                 warn=lambda line: sys.stderr.write(f"opdb: warning: {line}\n"))
    sys.stdout.write(f"synced {args.what} into {path}: "
                     + ", ".join(f"{k} {v}" for k, v in counts.items()) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    def go() -> None:
        if args.cmd == "build":
            return _cmd_build(args)
        if args.cmd == "sync":
            return _cmd_sync(args)
        from opdb.query import OpDB

        db = OpDB.open()
        {"stats": _cmd_stats, "show": _cmd_show, "search": _cmd_search, "sql": _cmd_sql,
         "diff": _cmd_diff}[args.cmd](db, args)

    return clikit.run(go, "opdb")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
