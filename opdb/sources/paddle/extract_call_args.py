"""Extract the arguments PaddleCustomDevice passes to each aclnn API, with opdb's C++ lexer.

    python -m opdb.sources.paddle.extract_call_args --repo GIT_DIR [--ref develop] [--check]

For every `EXEC_NPU_CMD(aclnnXxx, dev_ctx, a1, a2, ...)` in `backends/npu/kernels/**.cc`
of the bare git mirror (`fetch github:PaddlePaddle/PaddleCustomDevice`) at REF, one row:
the file, line, enclosing function, the API, each argument as spelled (comments and
string contents blanked, whitespace squeezed), the enclosing function's parameter names,
and whether that function is registered as a kernel (`PD_REGISTER_PLUGIN_KERNEL`). Written
to `npu_aclnn_call_args.<ref>.jsonl` (sorted, one JSON object a line) next to this file;
the commit is in every row. No upstream code is copied beyond argument spellings (mostly
single identifiers), names, paths and lines.

`codegen.paddle_synonyms` reads it to measure whether upstream's call sites could teach
which phi value feeds each aclnn parameter name (docs/opgen.md "Batch G": not adopted).
`--check` re-extracts and fails unless the committed file is byte-identical.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from opdb.fsio import write_or_check
from opdb.git_read import GitError, git_text

HERE = Path(__file__).resolve().parent
_EXEC = re.compile(r"\bEXEC_NPU_CMD\s*\(")


def _git(repo: Path, *args: str) -> str:
    try:
        return git_text(repo, *args)
    except GitError as e:
        raise SystemExit(f"extract_call_args: {e}") from None


_LOCAL = re.compile(r"^[*&]?\s*([A-Za-z_]\w*)$")


def _derived(arg: str, body: str, params: list[str]) -> list[str]:
    """The enclosing function's parameters a local argument is computed from: the ones named
    in the statements that define or assign it before the call (`phi::Scalar f = factor;`,
    `mode_to_int = find_it->second` after `find_it = map.find(mode)`, one level of locals
    followed). [] for a parameter passed as it is, a literal or an expression."""
    m = _LOCAL.match(arg)
    if not m or m.group(1) in params:
        return []
    seen, found, todo = set(), set(), [m.group(1)]
    for _ in range(2):  # the local, then the locals its definition reads
        nxt = []
        for var in todo:
            if var in seen:
                continue
            seen.add(var)
            for st in re.finditer(r"(?:^|[;{}])([^;{}]*\b" + re.escape(var) +
                                  r"\s*(?:=(?!=)|\(|\{)[^;]*);", body):
                text = st.group(1)
                lhs = text.split("=", 1)[0] if "=" in text else text
                if not re.search(r"\b" + re.escape(var) + r"\b", lhs):
                    continue
                for ident in re.findall(r"\b[A-Za-z_]\w*\b", text):
                    if ident in params and ident != "dev_ctx":
                        found.add(ident)
                    elif ident != var:
                        nxt.append(ident)
        todo = nxt
    return sorted(found)


def rows_for_text(text: str, rel: str, commit: str) -> list[dict]:
    """The EXEC_NPU_CMD call rows of one source file."""
    from opdb.ingest.paddle_custom_device import (line_of, match_close, parse_cpp_params,
                                                  registrations, scan_text, split_top_level)
    fs = scan_text(text, rel)
    registered = {r.function.split("::")[-1].split("<")[0] for r in registrations(fs)}
    rows = []
    for name, fns in fs.functions.items():
        for fn in fns:
            try:
                params = [p.name for p in parse_cpp_params(fn.params_text) if p.name]
            except ValueError:
                params = []
            lo, hi = fn.body
            for m in _EXEC.finditer(fs.masked, lo, hi):
                close = match_close(fs.masked, m.end() - 1)
                if close < 0 or close > hi:
                    continue
                args = [re.sub(r"\s+", " ", a).strip()
                        for _, a in split_top_level(fs.masked[m.end():close])]
                if not args or not args[0].startswith("aclnn"):
                    continue
                body = fs.masked[lo:m.start()]
                rows.append({"path": rel, "line": line_of(fs.masked, m.start()),
                             "function": name, "registered": name in registered,
                             "api": args[0], "args": args[2:], "params": params,
                             "derived": [_derived(a, body, params) for a in args[2:]],
                             "commit": commit})
    return rows


def extract(repo: Path, ref: str) -> str:
    commit = _git(repo, "rev-parse", f"{ref}^{{commit}}").strip()
    files = [f for f in _git(repo, "ls-tree", "-r", "--name-only", commit,
                             "backends/npu/kernels").splitlines() if f.endswith(".cc")]
    rows = []
    for rel in sorted(files):
        rows += rows_for_text(_git(repo, "show", f"{commit}:{rel}"), rel, commit)
    rows.sort(key=lambda r: (r["path"], r["line"]))
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--ref", default="develop")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    out = HERE / f"npu_aclnn_call_args.{args.ref.replace('/', '-')}.jsonl"
    text = extract(args.repo, args.ref)
    return write_or_check(out, text, args.check, "extract_call_args", "calls")


if __name__ == "__main__":
    raise SystemExit(main())
