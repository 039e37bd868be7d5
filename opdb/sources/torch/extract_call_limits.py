"""Extract op-plugin's per-API call limits on tensor lists into `op_plugin_call_limits.jsonl`
(facts only: API, the most tensors one call takes in place and out of place, whether the
adapter guards the API with torch's `can_use_fast_route`, source path and line; no
source text).

op-plugin's `_foreach_` adapters (`op_plugin/ops/opapi/Foreach*KernelNpuOpApi.cpp`) send
a list to their aclnn API in calls of at most N tensors (`size_t max_tensor_count =
is_inplace ? 48 : 24;`, N by the number of dynamic list arguments of the call,
`op_plugin/utils/custom_functions/opapi/ForeachConstants.h`), and send a list that
torch's `at::native::can_use_fast_route` rejects (mixed dtypes or devices, overlapping or
non-dense tensors, scalars the dtype cannot hold) to torch's own slow kernel. The limits
hold on every SoC the API runs on (the adapters take the same N on each chip); the
per-SoC part of the route is the API's dtypes on the chip (`opdb/soc_dtypes.py`).

For each top-level function of each opapi `.cpp` that assigns `max_tensor_count` (the
ternary on `is_inplace`, the same choice as an `if (is_inplace) ... else ...`
statement, or one value for both; constant names resolved from
ForeachConstants.h or from the file's own `constexpr int`/`size_t`), or that slices a list
at a constant stride (`list.data() + i * N, N`, one N in place and out of place), every
aclnn API it runs through `EXEC_NPU_CMD` (itself, or else through a file-local helper it
calls: ForeachCopyKernelOpApi.cpp's `exec_npu_cmd_copy`) gets one row; the line recorded is the
assignment's (the slice's). `fast_route` is true when the same file calls
`can_use_fast_route`; `integral_slow` (present only when true) when it also sends a list
`at::native::has_integral_tensor(list, true)` finds integral or bool tensors in to torch's
kernel, whatever torch's result dtype (ForeachAddcmulTensorKernelNpuOpApi.cpp: the API's
`scalars` must have the list's dtype, an integral list with float scalars has no call).
`scalar_values` (present only when found) lists the values of the op's Scalar argument
upstream lets reach the API, in a file that guards with `can_use_fast_route`: each
negated set of equalities of one `double` local, `!(p == static_cast<double>(L1_NORM) || p
== static_cast<double>(L2_NORM))` (ForeachNormKernelOpApi.cpp `checkData`, the local read
from the Scalar by `scalarProcess`), constants resolved as above; a set with a value that is
no constant (`std::numeric_limits<double>::infinity()`, the regbase chips' branch) is left
out, and the values are those every remaining set shares (the ones that reach the API on
every chip and torch version), `scalar_values_line` the first set's line.

The same file also gets op-plugin's **counter reservation** of each random API
(`"limit": "philox_counter_offset"`): a function that draws the generator's pair with a
constant, `gen->philox_engine_inputs(1 << 28)` (RReluWithNoiseKernelNpuOpApi.cpp) or a
named constant (BernoulliKernelNpuOpApi.cpp `PHILOX_DEFAULT_NUM`), and runs an aclnn API
gives that API a row with `offset` N. An API one of whose upstream draws is computed
(`calc_final_counter_offset(self)`, a variable) gets no row, nor one drawn with two
different constants: the generic rule (arg_rules.yaml `seed`) stays.

    python opdb/sources/torch/extract_call_limits.py --repo DIR [--check]   # DIR: a bare git clone of Ascend/op-plugin

Standard library only.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from opdb.git_read import git_text

HERE = Path(__file__).resolve().parent
OUT = HERE / "op_plugin_call_limits.jsonl"
COMMIT = "517f2e7d0f202f38b76310706cb977ca2388ad21"
CONSTANTS = "op_plugin/utils/custom_functions/opapi/ForeachConstants.h"
ASSIGN = re.compile(r"size_t\s+max_tensor_count\s*=\s*(?:is_inplace\s*\?\s*(\w+)\s*:\s*(\w+)|(\w+))\s*;")
# the same choice as a statement (ForeachAbs): `size_t max_tensor_count = 1; if (is_inplace)
# { max_tensor_count = 48; } else { max_tensor_count = 24; }`; the first value is overwritten
IFELSE = re.compile(r"size_t\s+max_tensor_count\s*=\s*\w+\s*;\s*if\s*\(\s*is_inplace\s*\)\s*\{?\s*"
                    r"max_tensor_count\s*=\s*(\w+)\s*;\s*\}?\s*else\s*\{?\s*"
                    r"max_tensor_count\s*=\s*(\w+)\s*;")
EXEC = re.compile(r"EXEC_NPU_CMD\(\s*(aclnn\w+)\s*,")
NAME = re.compile(r"(\w+)\s*\([^()]*\)\s*(?:const\s*)?$")  # a function's name before its body
CONST = re.compile(r"constexpr\s+(?:int|size_t|std::size_t|int64_t|uint64_t)\s+(\w+)\s*=\s*(\d+)\s*;")
# a slice of a list at a constant stride: `at::TensorList part(list.data() + i * N, N)`
# (AmpForeachNonFiniteCheckAndUnscaleKernelNpuOpApi.cpp's `_split_and_exec_npu_cmd_`,
# which names no `max_tensor_count`)
STRIDE = re.compile(r"\w+\.data\(\)\s*\+\s*\w+\s*\*\s*(\w+)\s*,\s*(\w+)\s*\)")
# a negated set of equalities, `!(p == static_cast<double>(L1_NORM) || p == 2)`: its inside
# (one level of nested parentheses)
NEGATED = re.compile(r"!\(((?:[^()]|\([^()]*\))*)\)")
EQUALS = re.compile(r"(\w+)\s*==\s*(?:static_cast<double>\(\s*(\w+)\s*\)|(\w+))")


def scalar_values_of_file(text: str, consts: dict[str, int]) -> tuple[list[int], int] | None:
    """The Scalar values upstream lets reach the API and the line of the first set that
    says so (see the module docstring), or None."""
    doubles = set(re.findall(r"\bdouble\s+(\w+)\s*=", text))
    shared, first = None, None
    for m in NEGATED.finditer(text):
        terms = [t.strip() for t in m.group(1).split("||")]
        got = [EQUALS.fullmatch(t) for t in terms]
        if not terms or any(g is None for g in got) or len({g.group(1) for g in got}) != 1 \
                or got[0].group(1) not in doubles:
            continue
        vals = []
        for g in got:
            tok = g.group(2) or g.group(3)
            v = int(tok) if tok.isdigit() else consts.get(tok)
            if v is None:
                break
            vals.append(v)
        else:
            shared = set(vals) if shared is None else shared & set(vals)
            first = first if first is not None else text.count("\n", 0, m.start()) + 1
    if not shared:
        return None
    return sorted(shared), first


def _functions(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost brace block opened right after `)`: the bodies of
    top-level functions (namespaces and classes open after a name, not a `)`)."""
    spans, depth, start, i = [], 0, None, 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            if start is None and text[:i].rstrip().endswith(")"):
                start, depth = i, 0
            if start is not None:
                depth += 1
        elif c == "}" and start is not None:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
                start = None
        i += 1
    return spans


def extract(repo: Path, commit: str = COMMIT) -> list[dict]:
    consts = {m.group(1): int(m.group(2))
              for m in CONST.finditer(git_text(repo, "show", f"{commit}:{CONSTANTS}"))}

    rows: dict[str, dict] = {}
    draws: dict[str, list[dict | None]] = {}
    paths = [p for p in git_text(repo, "ls-tree", "-r", "--name-only", commit,
                             "op_plugin/ops/opapi/").splitlines() if p.endswith(".cpp")]
    for path in sorted(paths):
        text = git_text(repo, "show", f"{commit}:{path}")
        for row in rows_of_file(text, path, consts, commit):
            rows.setdefault(row["api"], row)
        for api, row in philox_draws_of_file(text, path, commit):
            draws.setdefault(api, []).append(row)
    out = [rows[k] for k in sorted(rows)]
    return out + philox_rows(draws)


# a draw of the generator's (seed, offset) pair or its graph state: the argument is the
# counter reservation
DRAW = re.compile(r"(?:philox_engine_inputs|philox_npu_state)\(\s*([^;]*?)\)\s*;")
# `static const uint64_t PHILOX_DEFAULT_NUM = 10;`, `constexpr int64_t N = 1 << 28;`
NAMED = re.compile(r"(?:static\s+)?(?:const|constexpr)\s+(?:u?int(?:64_t|32_t)?|size_t|std::size_t)"
                   r"\s+(\w+)\s*=\s*([0-9<\s()]+?)\s*;")


def _constant(expr: str, named: dict[str, str]) -> int | None:
    """The value of a constant counter expression (`10`, `1 << 28`, a named constant of
    the file), or None for anything computed."""
    expr = named.get(expr.strip(), expr).strip()
    m = re.fullmatch(r"\(?\s*(\d+)\s*(?:<<\s*(\d+))?\s*\)?", expr)
    if m is None:
        return None
    return int(m.group(1)) << int(m.group(2) or 0)


def philox_draws_of_file(text: str, path: str, commit: str = COMMIT
                         ) -> list[tuple[str, dict | None]]:
    """(API, row or None) for every function of one adapter source that draws the
    generator's pair and runs aclnn APIs: a row when the draw's counter is a constant,
    None when it is computed (see the module docstring)."""
    if "philox_" not in text:
        return []
    named = {m.group(1): m.group(2) for m in NAMED.finditer(text)}
    out = []
    for a, b in _functions(text):
        body = text[a:b]
        found = list(DRAW.finditer(body))
        if not found:
            continue
        values = {_constant(m.group(1), named) for m in found}
        value = values.pop() if len(values) == 1 else None
        line = text.count("\n", 0, a + found[0].start()) + 1
        for api in dict.fromkeys(EXEC.findall(body)):
            out.append((api, None if value is None else {
                "api": api, "limit": "philox_counter_offset", "offset": value, "socs": "all",
                "source": {"repo": "Ascend/op-plugin", "commit": commit, "path": path,
                           "line": line}}))
    return out


def philox_rows(draws: dict[str, list[dict | None]]) -> list[dict]:
    """One row per API whose every upstream draw reserves the same constant."""
    rows = []
    for api in sorted(draws):
        got = draws[api]
        if any(r is None for r in got) or len({r["offset"] for r in got}) != 1:
            continue
        rows.append(got[0])
    return rows


def rows_of_file(text: str, path: str, consts: dict[str, int], commit: str = COMMIT
                 ) -> list[dict]:
    """The limit rows of one adapter source (see the module docstring)."""
    # the file's own `constexpr int NAME = N;` (ForeachNorm's FOREACH_NORM_MAX_TENSOR_COUNT)
    # count as well as ForeachConstants.h's; the file's own win on a clash, as in C++
    consts = {**consts, **{m.group(1): int(m.group(2)) for m in CONST.finditer(text)}}

    def value(tok: str) -> int | None:
        return int(tok) if tok.isdigit() else consts.get(tok)

    rows = []
    if "max_tensor_count" not in text and ".data() +" not in text:
        return rows
    fast = "can_use_fast_route" in text
    integral = fast and "has_integral_tensor(" in text
    values = scalar_values_of_file(text, consts) if fast else None
    spans = _functions(text)
    # file-local helpers by name: a limit function that runs its API through one
    # (ForeachCopyKernelOpApi.cpp `exec_npu_cmd_copy`) counts that helper's API
    helpers: dict[str, str] = {}
    for a, b in spans:
        n = NAME.search(text[max(0, a - 400):a])
        if n is not None:
            helpers.setdefault(n.group(1), text[a:b])
    for a, b in spans:
        body = text[a:b]
        m = IFELSE.search(body) or ASSIGN.search(body)
        if m is not None:
            if m.re is IFELSE or m.group(1):
                inplace, out = m.group(1), m.group(2)
            else:
                inplace, out = m.group(3), m.group(3)
        else:
            # no `max_tensor_count`: a stride that is a constant, the same for the
            # slice's length (one limit in place and out of place)
            m = next((s for s in STRIDE.finditer(body)
                      if s.group(1) == s.group(2) and value(s.group(1)) is not None), None)
            if m is None:
                continue
            inplace = out = m.group(1)
        inplace, out = value(inplace), value(out)
        if inplace is None or out is None or min(inplace, out) < 2:
            continue  # an unknown constant, or one tensor per call (a norm's loop)
        line = text.count("\n", 0, a + m.start()) + 1
        apis = EXEC.findall(body) or [
            api for name, hb in helpers.items() if hb != body
            and re.search(rf"\b{re.escape(name)}\s*\(", body) for api in EXEC.findall(hb)]
        for api in dict.fromkeys(apis):
            row = {
                "api": api, "limit": "tensors_per_call", "inplace": inplace,
                "out_of_place": out, "fast_route": fast, "socs": "all",
                "source": {"repo": "Ascend/op-plugin", "commit": commit,
                           "path": path, "line": line}}
            if integral:
                row["integral_slow"] = True
            if values is not None:
                row["scalar_values"], row["scalar_values_line"] = values
            rows.append(row)
    return rows


def main(argv=None) -> int:
    from opdb.sources.torch.op_plugin_cli import main as cli_main
    return cli_main(argv, __doc__.split("\n\n")[0], extract, COMMIT, OUT, "extract_call_limits", "APIs")


if __name__ == "__main__":
    sys.exit(main())
