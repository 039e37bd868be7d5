"""Registration dtypes of the paddle renders of HELD_OUT_PADDLE and the 12 against upstream's npu.

    python benchmarks/opgen_paddle_dtype_gap.py [--list FILE]

Renders every paddle row of `opgen_twelve.py` (the 12 and HELD_OUT_PADDLE) in-tree, reads
every `PD_REGISTER_PLUGIN_KERNEL` of the rendered sources, and compares each kernel's dtype
set with PaddleCustomDevice's npu registration of the same kernel (the shipped extract
`opdb/sources/paddle/custom_npu_kernels.develop.jsonl`, `77090b64`). Prints, over the
kernels upstream registers: (kernel, dtype) pairs upstream has and ours lacks, the kernels
with such a gap, and the pairs ours has beyond upstream (docs/opgen.md, third audit's
count). `--list FILE` writes each rendered registration (kernel: dtypes), sorted, to diff
two runs.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _upstream() -> dict[str, set[str]]:
    from opdb.ingest.paddle_custom_device import dtype_name
    path = HERE.parent / "opdb" / "sources" / "paddle" / "custom_npu_kernels.develop.jsonl"
    up: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        up.setdefault(r["kernel"], set()).update(dtype_name(d) for d in r.get("dtypes", []))
    return up


def rendered_registrations() -> dict[str, list[str]]:
    from opdb.ingest.paddle_custom_device import dtype_name
    from opdb.query import OpDB
    from opgen_twelve import HELD_OUT_PADDLE, TWELVE

    from codegen.api import prepare
    db = OpDB.open()
    rows = [(api, op) for api, _t, op in TWELVE] + list(HELD_OUT_PADDLE)
    regs: dict[str, list[str]] = {}
    for api, op in dict.fromkeys(rows):
        try:
            r = prepare(db, api, "paddle", op=op, layout="in-tree")
        except Exception as exc:  # one line per row, as opgen_twelve
            print(f"{api} {op}: render failed: {exc}", file=sys.stderr)
            continue
        for text in r.files.values():
            for m in re.finditer(r"PD_REGISTER_PLUGIN_KERNEL\(\s*(\w+)\s*,[^,]*,[^,]*,[^,]*,"
                                 r"([^)]*)\)", text):
                regs[m.group(1)] = [dtype_name(d) for d in m.group(2).split(",") if d.strip()]
    return regs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", type=Path, help="write each kernel's rendered dtypes here")
    args = ap.parse_args(argv)
    regs, up = rendered_registrations(), _upstream()
    missing, extra = {}, {}
    for k, ds in sorted(regs.items()):
        if k not in up:
            continue
        if up[k] - set(ds):
            missing[k] = sorted(up[k] - set(ds))
        if set(ds) - up[k]:
            extra[k] = sorted(set(ds) - up[k])
    both = sum(1 for k in regs if k in up)
    print(f"{len(regs)} kernels rendered, {both} of them registered upstream")
    print(f"missing (upstream has, ours lacks): {sum(map(len, missing.values()))} pairs over "
          f"{len(missing)} kernels")
    for k, ds in missing.items():
        print(f"  {k}: {', '.join(ds)}")
    print(f"beyond upstream: {sum(map(len, extra.values()))} pairs over {len(extra)} kernels")
    if args.list:
        args.list.write_text("".join(f"{k}: {' '.join(ds)}\n" for k, ds in sorted(regs.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
