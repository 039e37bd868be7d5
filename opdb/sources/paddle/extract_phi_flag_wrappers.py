"""Extract the phi kernels that are another kernel with a bool flag fixed.

    python -m opdb.sources.paddle.extract_phi_flag_wrappers [--include DIR] [--check]

Paddle defines some kernels as a call of a more general kernel with one bool parameter
set to a literal: `paddle/phi/kernels/impl/tril_triu_kernel_impl.h` has `TrilKernel`
calling `TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, true, out)` and `TriuKernel`
the same with `false`. So kernel `tril` is `tril_triu` with `lower` true. Read from the
installed wheel's `paddle/include/paddle/phi/kernels/**/*.h` (DIR: the wheel's include
dir, default the installed paddle's). A definition qualifies when its body calls exactly
one other `...Kernel<...>(...)`, every argument of that call is `dev_ctx`, one of the
wrapper's own parameter names, or `true`/`false`, and every wrapper parameter is passed:
the wrapper adds nothing but the literal. One row per (wrapper, flag): wrapper and target
functions, the target's parameter name at the literal's position (from its declaration),
the value, header and line, the Paddle version. Sorted; written to
`phi_flag_wrappers.jsonl` next to this file. `--check` re-extracts and fails unless the
committed file is byte-identical.

`codegen.paddle_flag_siblings` reads it: when the target kernel's primary aclnn API leaves
the flag unused and the wrappers' primary APIs are two same-signature siblings, the flag
picks between them (docs/opgen.md "Batch J").
"""
from __future__ import annotations

import json
import re
from pathlib import Path


HERE = Path(__file__).resolve().parent
OUT = HERE / "phi_flag_wrappers.jsonl"
_DEF = re.compile(r"\bvoid\s+([A-Z]\w*Kernel)\s*\(")
_CALL = re.compile(r"\b([A-Z]\w*Kernel)\s*<[^<>;{}()]*>\s*\(")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _wrappers_in(text: str, rel: str) -> list[dict]:
    from opdb.ingest.paddle_custom_device import (line_of, mask_cpp, match_close,
                                                  parse_cpp_params, split_top_level)

    _, masked = mask_cpp(text)
    found = []
    for m in _DEF.finditer(masked):
        close = match_close(masked, m.end() - 1)
        if close < 0:
            continue
        rest = masked[close + 1:]
        if not rest.lstrip().startswith("{"):
            continue
        open_ = close + 1 + (len(rest) - len(rest.lstrip()))
        end = match_close(masked, open_)
        if end < 0:
            continue
        try:
            params = parse_cpp_params(masked[m.end():close])
        except ValueError:
            continue
        if not params or "Context" not in params[0].ctype:
            continue
        own = [p.name for p in params]
        body = masked[open_ + 1:end]
        calls = []
        for c in _CALL.finditer(body):
            po = c.end() - 1
            pc = match_close(body, po)
            if pc < 0:
                continue
            calls.append((c.group(1), [a.strip() for _, a in split_top_level(body[po + 1:pc])]))
        if len(calls) != 1 or calls[0][0] == m.group(1):
            continue
        target, args = calls[0]
        if not all(_NAME.match(a) for a in args) or args[:1] != [own[0]]:
            continue
        literals = [i for i, a in enumerate(args) if a in ("true", "false")]
        names = [a for a in args if a not in ("true", "false")]
        if not literals or sorted(names) != sorted(own):
            continue
        found.append({"wrapper": m.group(1), "target": target, "args": args,
                      "header": rel, "line": line_of(masked, m.start())})
    return found


def extract(include_dir: Path, version: str) -> str:
    from opdb.ingest.paddle_catalog import parse_phi_headers

    kdir = include_dir / "paddle" / "phi" / "kernels"
    if not kdir.is_dir():
        raise SystemExit(f"extract_phi_flag_wrappers: {kdir} is not a directory "
                         "(pass --include: the paddle wheel's include dir)")
    decls: dict[str, list] = {}
    for d in parse_phi_headers(include_dir):
        decls.setdefault(d.function, []).append(d)
    rows = []
    for path in sorted(kdir.rglob("*.h")):
        rel = path.relative_to(include_dir).as_posix()
        for w in _wrappers_in(path.read_text(encoding="utf-8", errors="replace"), rel):
            # the target's declaration with one parameter per argument after dev_ctx
            fit = [d for d in decls.get(w["target"], []) if len(d.params) == len(w["args"]) - 1]
            if len(fit) != 1:
                continue
            tparams = fit[0].params
            for i, a in enumerate(w["args"]):
                if a not in ("true", "false"):
                    continue
                p = tparams[i - 1]
                if p.ctype.replace("const", "").strip() != "bool":
                    continue
                rows.append({"flag": p.name, "header": w["header"], "line": w["line"],
                             "paddle": version, "target": w["target"], "value": a == "true",
                             "wrapper": w["wrapper"]})
    rows.sort(key=lambda r: (r["target"], r["flag"], r["wrapper"]))
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


def main(argv=None) -> int:
    from opdb.sources.paddle.wheel_headers import main as headers_main
    return headers_main(argv, __doc__.split("\n\n")[0], extract, OUT, "extract_phi_flag_wrappers", "flag wrappers")


if __name__ == "__main__":
    raise SystemExit(main())
