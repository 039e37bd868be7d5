"""opgen sweep: render an adapter for every aclnn API in opdb for both targets and
compile a sample of the standalone projects; print render and compile success rates.

    python benchmarks/opgen_sweep.py [--snapshot DIR] [--sample N] [--seed S] [--json OUT]

The framework op of an API is its best opdb mapping; APIs no framework op maps to
get a "mirror" op (one framework param per aclnn param, same name and kind), so
every API's parameter types go through the renderer. Rendering counts as a success
when every file renders; compiling is measured on `--sample` APIs per target
(chosen with a fixed seed) in one CMake harness with `-k 0`.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codegen.argmap import snake  # noqa: E402
from codegen.kinds import aclnn_kind, aclnn_optional  # noqa: E402
from opdb.model import FrameworkOp, Param, Source  # noqa: E402

_TORCH_TYPES = {"tensor": "Tensor", "tensor_list": "Tensor[]", "scalar": "Scalar",
                "scalar_list": "Scalar[]", "int_array": "int[]", "bool_array": "bool[3]",
                "float_array": "float[]", "int": "int", "float": "float", "bool": "bool",
                "string": "str", "dtype": "ScalarType", "other": "Tensor"}
_PADDLE_TYPES = {"tensor": "const phi::DenseTensor&", "tensor_list": "const std::vector<const phi::DenseTensor*>&",
                 "scalar": "const phi::Scalar&", "scalar_list": "const std::vector<phi::Scalar>&",
                 "int_array": "const phi::IntArray&", "bool_array": "const std::vector<bool>&",
                 "float_array": "const std::vector<float>&", "int": "int64_t", "float": "float",
                 "bool": "bool", "string": "const std::string&", "dtype": "phi::DataType",
                 "other": "const phi::DenseTensor&"}


def mirror_op(api, framework: str) -> FrameworkOp:
    """A framework op shaped exactly like the aclnn API (for APIs nothing maps to)."""
    src = Source("opgen-sweep-mirror")
    base = snake(api.name[5:]).strip("_") or "op"
    if framework == "torch":
        args, outs = [], []
        for p in api.params:
            kind = aclnn_kind(p.ctype)
            name = snake(p.name)
            if p.role in ("output", "inout") and kind == "tensor":
                outs.append(f"Tensor({chr(97 + len(outs))}!) {name}")
                continue
            t = _TORCH_TYPES[kind]
            if aclnn_optional(p.name) and kind in ("tensor", "scalar", "int_array"):
                t += "?"
            args.append(f"{t} {name}")
        ret = ", ".join(o.split(" ")[0] for o in outs)
        ret = f"({ret})" if len(outs) != 1 else ret
        sig = ", ".join(args + (["*"] + outs if outs else []))
        schema = f"opgen::{base}.out({sig}) -> {ret or '()'}"
        return FrameworkOp("torch", f"opgen::{base}.out", src, schema=schema)
    params = []
    for p in api.params:
        kind = aclnn_kind(p.ctype)
        name = snake(p.name)
        if p.role in ("output", "inout") and kind in ("tensor", "tensor_list"):
            ctype = "phi::DenseTensor*" if kind == "tensor" else "std::vector<phi::DenseTensor*>"
            params.append(Param(name, ctype, "output"))
            continue
        ctype = _PADDLE_TYPES[kind]
        if kind == "float" and "double" in p.ctype:
            ctype = "double"
        if kind == "tensor" and aclnn_optional(p.name):
            ctype = "const paddle::optional<phi::DenseTensor>&"
        params.append(Param(name, ctype, "input"))
    # phi kernels take inputs, then attributes, then outputs (kernel_utils.h asserts both)
    params.sort(key=lambda p: (p.role == "output", "DenseTensor" not in p.ctype))
    return FrameworkOp("paddle", base, src, params=tuple(params))


def choose_op(db, api, framework):
    from codegen.resolve import _best_op_for_api

    op, how = _best_op_for_api(db, framework, api)
    if op is not None and (framework == "paddle" or op.schema):
        return op, "mapped"
    return mirror_op(api, framework), "mirror"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", type=Path, help="opdb snapshot dir (default: shipped)")
    ap.add_argument("--sample", type=int, default=12, help="APIs per target to compile")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument("--keep", type=Path, help="build in this dir instead of a temp dir")
    ap.add_argument("--targets", default="torch,paddle", help="comma-separated targets")
    args = ap.parse_args(argv)

    from codegen.api import render_adapter, render_context, sanitize, write_tree
    from codegen.build import build_projects, check_module
    from opdb.query import OpDB

    db = OpDB.open(snapshot_dir=args.snapshot) if args.snapshot else OpDB.open()
    apis = [a for a in db.aclnn_apis() if not a.internal]
    figures: dict = {"apis": len(apis), "targets": {}}
    rng = random.Random(args.seed)
    work = args.keep or Path(tempfile.mkdtemp(prefix="opgen_sweep_"))
    for target in args.targets.split(","):
        t0 = time.monotonic()
        ok, failures, how_count, todo_count = [], [], Counter(), 0
        rendered = {}
        for api in apis:
            try:
                op, how = choose_op(db, api, target)
                r = render_adapter(api, op, target, "standalone",
                                   **render_context(db, api, op, target))
            except Exception as exc:  # a failure is a figure here, not a crash
                failures.append((api.name, f"{type(exc).__name__}: {exc}"))
                continue
            ok.append(api.name)
            how_count[how] += 1
            todo_count += len(r.todos)
            rendered[api.name] = r
        render_s = time.monotonic() - t0
        order = ok[:]
        rng.shuffle(order)
        sample, seen_modules = [], set()
        for name in order:  # one project per module name (several APIs can map to one op)
            if rendered[name].module_name not in seen_modules and len(sample) < args.sample:
                seen_modules.add(rendered[name].module_name)
                sample.append(name)
        sample.sort()
        dirs, mods = [], {}
        for name in sample:
            r = rendered[name]
            d = write_tree(r.files, work / target / sanitize(name), force=True)
            dirs.append(d / "standalone")
            mods[name] = r.module_name
        res = build_projects(dirs, work / f"harness_{target}", keep_going=True)
        compiled, imported = [], []
        for name in sample:
            stem = rendered[name].module_name
            failed = any(f"{stem}_adapter.dir" in line or f"{stem}.dir" in line
                         for line in res.failed_targets)
            info = check_module(res.module_dir, stem, target)
            if not failed:
                compiled.append(name)
            if info.get("ok") and info.get("is_available") is False:
                imported.append(name)
        figures["targets"][target] = {
            "rendered": len(ok), "render_failures": failures[:20],
            "render_rate": round(len(ok) / len(apis), 4), "render_seconds": round(render_s, 1),
            "framework_op": dict(how_count), "todos_per_adapter": round(todo_count / max(len(ok), 1), 2),
            "sample": sample, "compiled": len(compiled),
            "compile_rate": round(len(compiled) / max(len(sample), 1), 4),
            "import_ok": len(imported), "build_seconds": round(res.build_seconds, 1),
            "failed_targets": res.failed_targets,
        }
        f = figures["targets"][target]
        print(f"{target}: rendered {f['rendered']}/{len(apis)} ({100 * f['render_rate']:.1f}%) "
              f"in {f['render_seconds']}s [{dict(how_count)}], {f['todos_per_adapter']} TODOs/adapter; "
              f"compiled {f['compiled']}/{len(sample)} sample projects ({100 * f['compile_rate']:.0f}%) "
              f"in {f['build_seconds']}s, modules imported {f['import_ok']}/{len(sample)}")
        for name, err in failures[:5]:
            print(f"  render failure {name}: {err}")
        for t in res.failed_targets[:10]:
            print(f"  compile failure: {t}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
