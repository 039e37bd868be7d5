"""Extract which aclnn APIs write one of their read-only (`const aclTensor*`) inputs in
place from the CANN ops repositories' op_api sources into `aclnn_input_updates.jsonl`
(facts only: API, parameter, the in-place l0op, source path and line; no source text).

aclnnIndexAdd(self, dim, index, source, alpha, out) declares `self` an input, but its
op_api source runs `selfContiguous = l0op::Contiguous(self, ...)` (the tensor itself when
it is already contiguous) and then `l0op::InplaceIndexAddAiCore(selfContiguous, ...)`,
an l0op whose launch lists its first input as its output (`OP_OUTPUT(indexAddOut)` with
`indexAddOut = const_cast<aclTensor*>(self)`), before copying the result into `out`.
So a contiguous `self` is overwritten: op-plugin IndexAddKernelNpuOpApi.cpp copies
`self` into the result first and passes the result as both `self` and `out`.

Two steps, on the op_api sources of every repository the catalog names:
1. in-place l0op functions: `const aclTensor* Name(const aclTensor* p, ...)` whose body
   passes `p` (or `const_cast<aclTensor*>(p)`) to `OP_OUTPUT(...)`;
2. for each catalog API, the `.cpp` next to its header: `<v> = l0op::Contiguous(<p>, ...)`
   with `<p>` a `const aclTensor*` input of the API, then `l0op::<in-place>(<v>, ...)`.
Only direct uses count (a Cast or a copy in between makes a new tensor), and only in a
function that does not test whether it runs in place (`isInplace`) or whether `out` is
`self` (`GetData()` compared): aclnnScatter and aclnnIndexFill write `self` only then.

    python opdb/sources/cann/extract_input_updates.py --mirror-root DIR

Standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
FUNC = re.compile(r"const\s+aclTensor\s*\*\s*(\w+)\s*\(\s*const\s+aclTensor\s*\*\s*(\w+)\s*,[^)]*\)\s*\{")
CONTIG = re.compile(r"(\w+)\s*=\s*l0op::Contiguous\(\s*(\w+)\s*,")
CALL = re.compile(r"l0op::(\w+)\(\s*(\w+)\s*,")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True,
                          capture_output=True, text=True).stdout


def _body(text: str, start: int) -> str:
    """The brace-balanced body that opens at text[start - 1] == '{'."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start:i]


def inplace_l0ops(text: str) -> set[str]:
    """Names of the l0op functions in `text` that launch with their first tensor as output."""
    out = set()
    for m in FUNC.finditer(text):
        name, first = m.group(1), m.group(2)
        body = _body(text, m.end())
        alias = {first} | set(re.findall(
            r"(\w+)\s*=\s*const_cast<\s*aclTensor\s*\*\s*>\(\s*%s\s*\)" % re.escape(first), body))
        outs = re.findall(r"OP_OUTPUT\(([^)]*)\)", body)
        if any(a.strip() in alias for o in outs for a in o.split(",")):
            out.add(name)
    return out


# a function that tests whether it runs in place (the Inplace API sharing the source:
# aclnn_index_fill.cpp `isInplace`) or whether `out` is `self` (aclnn_scatter.cpp
# `self->GetData() != out->GetData()`) writes `self` only when asked to
GUARD = re.compile(r"[iI]s_?[iI]nplace|GetData\(\)\s*[!=]=")
DEF = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:aclnnStatus|const\s+aclTensor\s*\*|aclTensor\s*\*|"
                 r"bool|void|int64_t)\s*\w+\s*\(", re.M)


def _enclosing(text: str, pos: int) -> str:
    """The text of the function definition that holds `pos` (from its head to `pos`)."""
    heads = [m.start() for m in DEF.finditer(text, 0, pos)]
    return text[heads[-1]:pos] if heads else text[:pos]


def updates(text: str, inputs: set[str], inplace: set[str]) -> list[dict]:
    """[{param, l0op, line}] of one aclnn source: an input's direct contiguous view passed
    first to an in-place l0op, in a function that does not test for the in-place case."""
    out, seen = [], set()
    for m in CALL.finditer(text):
        fn, arg = m.group(1), m.group(2)
        if fn not in inplace:
            continue
        body = _enclosing(text, m.start())
        if GUARD.search(body):
            continue
        # the view must be made in the same function (names repeat across helpers)
        views = {v.group(1): v.group(2) for v in CONTIG.finditer(body) if v.group(2) in inputs}
        if arg in views and views[arg] not in seen:
            seen.add(views[arg])
            out.append({"param": views[arg], "l0op": fn,
                        "line": text.count("\n", 0, m.start()) + 1})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_input_updates.jsonl")
    args = ap.parse_args(argv)
    from api_docs import write_rows  # the sibling module: these run as scripts

    recs = [json.loads(line) for line in (HERE / "aclnn_apis.jsonl").read_text().splitlines()]
    inplace: set[str] = set()
    files: dict[tuple[str, str], str | None] = {}
    repos = sorted({r["source"]["repo"] for r in recs})
    commits = {}
    for repo in repos:
        mirror = args.mirror_root / repo.replace("/", "+") / "repo"
        commit = next(r["source"]["commit"] for r in recs if r["source"]["repo"] == repo)
        if not mirror.is_dir():
            continue
        try:
            names = _git(mirror, "ls-tree", "-r", "--name-only", commit).splitlines()
        except subprocess.CalledProcessError:
            continue
        commits[repo] = commit
        for path in names:
            if "op_api" in path and path.endswith(".cpp") and "/tests/" not in path:
                files[(repo, path)] = _git(mirror, "show", f"{commit}:{path}")
                inplace |= inplace_l0ops(files[(repo, path)])
    rows = []
    for r in recs:
        if r["api"].startswith("aclnnInplace"):
            continue
        src = r["source"]
        cpp = src["path"][:-2] + ".cpp" if src["path"].endswith(".h") else ""
        text = files.get((src["repo"], cpp))
        if text is None:
            continue
        inputs = {p["name"] for p in r.get("params", [])
                  if p.get("role") == "input" and p["type"].replace(" ", "") == "constaclTensor*"}
        for u in updates(text, inputs, inplace):
            rows.append({"api": r["api"], "param": u["param"], "l0op": u["l0op"],
                         "source": {"repo": src["repo"], "commit": src["commit"], "path": cpp,
                                    "line": u["line"]}})
    write_rows(rows, args.o)
    print(f"{len(rows)} input updates for {len({r['api'] for r in rows})} APIs "
          f"({len(inplace)} in-place l0ops) -> {args.o}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
