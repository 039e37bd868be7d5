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
2. in the `.cpp` that defines each catalog API's `GetWorkspaceSize`, the functions that
   pass a parameter, or its contiguous view (`l0op::Contiguous(p, ...)`, or a helper that
   returns one, as aclnn_scatter.cpp's `InitializeTensor`), first to an in-place l0op or
   to a function of the file that writes that parameter (to a fixpoint); the API writes
   the `const aclTensor*` inputs its `GetWorkspaceSize` writes.
A Cast or a copy in between makes a new tensor and does not count; nor do calls after a
test for the in-place case (`isInplace`, or `GetData()` of `self` and `out` compared):
aclnnIndexFill and aclnnScatter's no-transpose path write `self` only when asked to.
The line recorded is the in-place l0op call's.

    python opdb/sources/cann/extract_input_updates.py --mirror-root DIR

Standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


HERE = Path(__file__).resolve().parent
FUNC = re.compile(r"const\s+aclTensor\s*\*\s*(\w+)\s*\(\s*const\s+aclTensor\s*\*\s*(\w+)\s*,[^)]*\)\s*\{")
CONTIG = re.compile(r"(\w+)\s*=\s*l0op::Contiguous\(\s*(\w+)\s*,")
CALL = re.compile(r"l0op::(\w+)\(\s*(\w+)\s*,")


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
DEF = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?[\w:<>]+(?:\s*\*)?\s+(\w+)\s*"
                 r"\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*\{", re.M)
CALLS = re.compile(r"\b(?:l0op::)?(\w+)\s*\(([^;{}]*?)\)\s*[;,)]")


def _params(sig: str) -> list[str]:
    """Parameter names of a C++ parameter list (defaults dropped)."""
    out = []
    for part in sig.split(","):
        part = part.split("=")[0].strip()
        m = re.search(r"(\w+)\s*$", part)
        if m and part:
            out.append(m.group(1))
    return out


def _args(text: str) -> list[str]:
    return [a.strip() for a in re.split(r",(?![^()]*\))", text)]


def functions(text: str) -> dict[str, tuple[list[str], str, int]]:
    """{name: (parameter names, body, line where the body opens)} of the definitions in `text`."""
    out = {}
    for m in DEF.finditer(text):
        if m.group(1) in ("if", "for", "while", "switch", "return"):
            continue
        out.setdefault(m.group(1), (_params(m.group(2)), _body(text, m.end()),
                                    text.count("\n", 0, m.end()) + 1))
    return out


def view_helpers(funcs: dict) -> set[str]:
    """Functions that return a contiguous view of their first parameter (aclnn_scatter.cpp
    `InitializeTensor`: `xContiguous = l0op::Contiguous(x, ...)`, then returned)."""
    out = set()
    for name, (params, body, _) in funcs.items():
        if not params:
            continue
        m = re.search(r"(\w+)\s*=\s*l0op::Contiguous\(\s*%s\s*," % re.escape(params[0]), body)
        if m and re.search(r"return\s+%s\s*;" % re.escape(m.group(1)), body):
            out.add(name)
    return out


def writes(funcs: dict, inplace: set[str]) -> dict[str, dict[int, tuple[str, int]]]:
    """{function: {parameter position: (in-place l0op, line)}} of the functions of one file
    that write a parameter in place: an in-place l0op (or a function of the file that
    writes its parameter there) gets the parameter itself or its contiguous view as that
    argument. Calls after a test for the in-place case (GUARD, or such a parameter) do
    not count: aclnn_scatter.cpp ExecScatterNoTranspose writes `self` only when `out` is
    `self`, while ExecScatterBase's scatter-add paths run before its test."""
    helpers = view_helpers(funcs)
    found: dict[str, dict[int, tuple[str, int]]] = {}
    changed = True
    while changed:
        changed = False
        for name, (params, body, line) in funcs.items():
            views = {p: p for p in params}
            for m in re.finditer(r"(\w+)\s*=\s*(?:l0op::Contiguous|(\w+))\(\s*(\w+)\s*,", body):
                if m.group(3) in params and (m.group(2) is None or m.group(2) in helpers):
                    views[m.group(1)] = m.group(3)
            for c in CALLS.finditer(body):
                if GUARD.search(" ".join(params) + " " + body[:c.start()]):
                    break  # from here on the function knows whether it runs in place
                callee, args = c.group(1), _args(c.group(2))
                here = line + body.count("\n", 0, c.start())
                if callee in inplace:
                    hits = {0: (callee, here)}  # the line of the in-place l0op call
                else:
                    hits = found.get(callee, {})
                for pos, (l0, where) in hits.items():
                    if pos < len(args) and args[pos] in views:
                        k = params.index(views[args[pos]])
                        if k not in found.setdefault(name, {}):
                            found[name][k] = (l0, where)
                            changed = True
    return found


def updates(text: str, api: str, inputs: set[str], inplace: set[str]) -> list[dict]:
    """[{param, l0op, line}] of `api` defined in `text`: the read-only inputs its
    `<api>GetWorkspaceSize` writes in place, directly or through the file's helpers."""
    funcs = functions(text)
    entry = funcs.get(f"{api}GetWorkspaceSize")
    if entry is None:
        return []
    params = entry[0]
    out = []
    for pos, (l0, line) in sorted(writes(funcs, inplace).get(f"{api}GetWorkspaceSize", {}).items()):
        if params[pos] in inputs:
            out.append({"param": params[pos], "l0op": l0, "line": line})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_input_updates.jsonl")
    args = ap.parse_args(argv)
    from api_docs import GWS_DEFINITION, op_api_sources, write_rows  # the sibling module: these run as scripts

    recs = [json.loads(line) for line in (HERE / "aclnn_apis.jsonl").read_text().splitlines()]
    inplace: set[str] = set()
    files: dict[tuple[str, str], str | None] = {}
    commits = {}
    for repo, commit, sources in op_api_sources(args.mirror_root, recs):
        commits[repo] = commit
        for path, text in sources:
            files[(repo, path)] = text
            inplace |= inplace_l0ops(text)
    # the file defining each API's GetWorkspaceSize (aclnnScatterAdd is defined in
    # aclnn_scatter.cpp, next to another header)
    defs: dict[tuple[str, str], str] = {}
    for (repo, path), text in sorted(files.items()):
        for m in GWS_DEFINITION.finditer(text):
            defs.setdefault((repo, m.group(1)), path)
    rows = []
    for r in recs:
        if r["api"].startswith("aclnnInplace"):
            continue
        src = r["source"]
        cpp = defs.get((src["repo"], r["api"]))
        if cpp is None:
            continue
        text = files[(src["repo"], cpp)]
        inputs = {p["name"] for p in r.get("params", [])
                  if p.get("role") == "input" and p["type"].replace(" ", "") == "constaclTensor*"}
        for u in updates(text, r["api"], inputs, inplace):
            rows.append({"api": r["api"], "param": u["param"], "l0op": u["l0op"],
                         "source": {"repo": src["repo"], "commit": src["commit"], "path": cpp,
                                    "line": u["line"]}})
    write_rows(rows, args.o)
    print(f"{len(rows)} input updates for {len({r['api'] for r in rows})} APIs "
          f"({len(inplace)} in-place l0ops) -> {args.o}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
