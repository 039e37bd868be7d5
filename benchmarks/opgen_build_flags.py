"""Compiler CPU of test_build.py's harness build for some of its cases, under given
CMake arguments (docs/benchmarks.md, "Test suite").

    python benchmarks/opgen_build_flags.py OUT add_torch,add_paddle
    python benchmarks/opgen_build_flags.py OUT add_torch,add_paddle -DCMAKE_BUILD_TYPE=None

OUT must not exist. Builds the cases' standalone projects (tests/codegen/conftest.py
CASES, over the same opdb subset) in one harness as the test does, prints the children's
CPU, then import-checks each module as the test does.
"""
from __future__ import annotations

import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from codegen.api import prepare, write_tree
    from codegen.build import build_projects, check_module
    from opdb import store
    from opdb.query import OpDB
    from tests.codegen.conftest import CASES, load_subset

    if len(argv) < 2:
        print("usage: opgen_build_flags.py OUT CASE[,CASE...]|all [cmake args]", file=sys.stderr)
        return 2
    out, ids, args = Path(argv[0]), argv[1], argv[2:]
    out.mkdir(parents=True)
    store.create(out / "opdb.sqlite", load_subset(), {"snapshot_sha256": "codegen-fixture"})
    db = OpDB(store.connect(out / "opdb.sqlite", None), "codegen-fixture")
    dirs, mods = [], {}
    for cid, _cat, target, name, op in CASES:
        if ids != "all" and cid not in ids.split(","):
            continue
        r = prepare(db, name, target, op=op, layout="standalone")
        dirs.append(write_tree(r.files, out / cid) / "standalone")
        mods[cid] = (r.module_name, target)
    res = build_projects(dirs, out / "harness", keep_going=True, cmake_args=args)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{len(dirs)} projects, failed {res.failed_targets}: compiler CPU "
          f"{c.ru_utime + c.ru_stime:.1f} s (wall: configure {res.configure_seconds:.1f} s, "
          f"build {res.build_seconds:.1f} s)")
    bad = 0
    for cid, (module, target) in mods.items():
        info = check_module(res.module_dir, module, target)
        ok = info["ok"] and info["is_available"] is False and "libopapi.so" in info["reason"]
        bad += not ok
        print(f"{cid}: {'ok' if ok else info}")
    return 1 if bad or res.failed_targets else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
