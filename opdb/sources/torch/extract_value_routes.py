"""Extract op-plugin's value-limit CPU routes into `op_plugin_value_routes.jsonl` (facts
only: the adapter function, the aclnn API, the condition and the CPU call as C++ over the
framework op's argument names, source path and line; no source text beyond those).

Some opapi adapters send a call to torch's CPU kernel when argument values exceed what
the aclnn API handles: UpsampleBilinear2dAAKernelNpuOpApi.cpp tests
`if (!checkBilinearUseFast(self, output_size, align_corners, scales_h_attr, scales_w_attr,
result)) { return upsample_bilinear2d_aa_slow(...); }` right before
`EXEC_NPU_CMD(aclnnUpsampleBilinear2dAA, ...)`, and the slow function moves `self` to the
CPU (`self.cpu().to(at::ScalarType::Float)`), calls `at::_upsample_bilinear2d_aa` and
copies the result back in `self`'s dtype.

For each top-level function of each opapi `.cpp` that runs `EXEC_NPU_CMD(api, ...)`, every
`if (!HELPER(ARGS)) { return SLOW(SARGS); }` before it, where HELPER is a `bool` function
of the same file and SLOW one whose body moves tensors to the CPU (`X.cpu()`), calls one
`at::NAME(...)` and copies its result into the adapter's output (`R.copy_(...)`), gives a
row. HELPER is inlined into one expression: its parameters become the caller's arguments
(a caller's local number `double a = EXPR;` becomes EXPR; the adapter's returned tensor,
its output, becomes `{out}`), its locals their initialisers, `if (C) { return false; }`
the conjunct `!(C)`, a final `return E;` the conjunct E, calls of other `bool` functions of
the file are inlined the same way, and `constexpr` constants of the file and the op_plugin
headers it includes (`UpsampleConstants.h`) become their values. Typed parameters keep
their conversion (`static_cast<float>(...)`). Anything else (a loop, a statement of
another form, an argument that is neither a parameter, a local number nor the output)
gives no row. Fields: `function`, `api`, `cond` (C++ true where upstream runs the CPU
route), `cpu_call` (the `at::` call on the CPU copies), `result_dtype` (the dtype the CPU
result is cast to before the copy, C++), `helper`, `slow`, `source` (repo, commit, path,
line of the `if`).

A second form: `if (HELPER(ARGS)) { BODY }` before the call, BODY the CPU route written in
the adapter (`at::Tensor X = Y.cpu();` copies, one `at::Tensor R = at::NAME(...);`, then
`return R.to(Z.device());`), HELPER returning true for the CPU: its `if (C) { [a
TORCH_NPU_WARN_ONCE;] return true; }` tests fold into `C || (...)`, and op-plugin's
`check_aclnn_kernel_available("aclnnX")` (the CANN-version switch; the adapter calls the
API) is true, so a test on it alone drops out (MaskedSoftMaxKernelNpuOpApi.cpp
`_masked_softmax_fallback_condition`). `cond` is HELPER itself, `slow` empty, and `params`
lists the adapter's parameter names in order (they may differ from the op's: `self_`).

    python opdb/sources/torch/extract_value_routes.py --repo DIR [--check]   # DIR: a bare git clone of Ascend/op-plugin

Standard library only.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from opdb.git_read import git_text
from opdb.sources.torch.extract_call_limits import COMMIT, _functions
from opdb.sources.torch.extract_mode_routes import _balanced

HERE = Path(__file__).resolve().parent
OUT = HERE / "op_plugin_value_routes.jsonl"
SIG = re.compile(r"([\w:<>&*\s,]+?)\b(\w+)\s*\(([^()]*)\)\s*(?:const\s*)?$")
CONST = re.compile(r"constexpr\s+[\w:]+\s+(\w+)\s*=\s*([-+0-9.eE]+)\s*;")
INCLUDE = re.compile(r'#include\s+"(op_plugin/[^"]+\.h)"')
EXEC = re.compile(r"\bEXEC_NPU_CMD\(\s*(aclnn\w+)\s*,")
GATE = re.compile(r"\bif\s*\(\s*!\s*(\w+)\s*\(([^()]*)\)\s*\)\s*\{\s*return\s+(\w+)\s*\(([^()]*)\)\s*;\s*\}")
LOCAL = re.compile(r"^(?:static\s+)?(?:const\s+)?(double|float|int|int64_t|bool|auto)\s+(\w+)\s*=\s*(.+)$",
                   re.S)
NUMERIC = ("double", "float", "int", "int64_t")
# an early return of a helper: `if (C) { [a warning;] return true|false; }`
EARLY = re.compile(r"if\s*\((.*)\)\s*\{?\s*(?:TORCH_(?:NPU_)?WARN(?:_ONCE)?\s*\((?:[^;]|\"[^\"]*\")*\)\s*;\s*)*"
                   r"return\s+(true|false)\s*;\s*\}?", re.S)
# op-plugin's test that the CANN has an aclnn API (op_plugin/utils): the adapter calls the
# API, so it holds (the CANN-version switch, as DO_COMPATIBILITY)
AVAILABLE = re.compile(r"\bcheck_aclnn_kernel_available\s*\(\s*\"\w+\"\s*\)")
# a CPU route written in the adapter: `if (HELPER(ARGS)) { ... return R.to(X.device()); }`
POS_GATE = re.compile(r"\bif\s*\(\s*(\w+)\s*\(([^()]*)\)\s*\)\s*\{")
IDENT = re.compile(r"(?<![\w.:>])([A-Za-z_]\w*)\b(?!\s*::)")


class _No(Exception):
    """No row: a form the inliner does not read."""


def _split_args(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for c in s:
        depth += {"(": 1, "<": 1, ")": -1, ">": -1}.get(c, 0)
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def _params(sig: str) -> list[tuple[str, str]]:
    """(type, name) of each parameter."""
    out = []
    for p in _split_args(sig):
        m = re.match(r"(.*?)(\w+)$", p.strip())
        if not m:
            raise _No(p)
        out.append((" ".join(m.group(1).split()), m.group(2)))
    return out


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n") or " ", text,
                  flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _funcs(text: str) -> dict[str, dict]:
    """name -> {ret, params, body, start} of each top-level function; a name defined more
    than once (overloads) is dropped."""
    out: dict[str, dict] = {}
    seen: dict[str, int] = {}
    for a, b in _functions(text):
        head = text[:a].rstrip()
        head = head[max(head.rfind("}"), head.rfind(";"), head.rfind("{")) + 1:].strip()
        head = re.sub(r"^(?:#[^\n]*\n\s*)+", "", head)
        m = SIG.search(" ".join(head.split()))
        if not m:
            continue
        name = m.group(2)
        seen[name] = seen.get(name, 0) + 1
        try:
            params = _params(m.group(3))
        except _No:
            continue
        out[name] = {"ret": m.group(1).strip(), "params": params, "body": text[a + 1:b],
                     "start": a}
    return {k: v for k, v in out.items() if seen[k] == 1}


def _sub(expr: str, names: dict[str, str]) -> str:
    return IDENT.sub(lambda m: names.get(m.group(1), m.group(1)), expr)


def _statements(body: str) -> list[str]:
    """Top-level statements; an `if (...) { ... }` / `if (...) stmt;` is one statement."""
    out, i, n = [], 0, len(body)
    while i < n:
        while i < n and body[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        if re.match(r"if\s*\(", body[i:]):
            k = _balanced_end(body, body.index("(", i))
            while body[k] in " \t\r\n":
                k += 1
            if body[k] == "{":
                k = _balanced_end(body, k, "{", "}")
            else:
                k = body.index(";", k) + 1
            if re.match(r"\s*else\b", body[k:]):
                raise _No("else")
            out.append(body[i:k].strip())
            i = k
            continue
        j = body.find(";", i)
        if j < 0:
            raise _No("trailing")
        if "{" in body[i:j]:
            raise _No("block")
        out.append(body[i:j].strip())
        i = j + 1
    return out


def _inline(fn: dict, args: list[str], funcs: dict, consts: dict[str, str], depth: int = 0) -> str:
    """The expression HELPER(args) returns, per the module docstring."""
    if depth > 4 or len(args) != len(fn["params"]):
        raise _No("arity")
    names = dict(consts)
    for (ptype, pname), arg in zip(fn["params"], args):
        base = ptype.replace("const", "").replace("&", "").strip()
        names[pname] = f"static_cast<{base}>({arg})" if base in NUMERIC else f"({arg})" \
            if not re.fullmatch(r"[\w{}]+", arg) else arg
    conj: list[str] = []
    early: list[tuple[bool, str]] = []  # (returned value, condition) of each early return

    def expr(e: str) -> str:  # the file's bool calls first: their arguments are plain names
        return _sub(_calls(AVAILABLE.sub("true", " ".join(e.split())), funcs, consts, depth),
                    names)

    for st in _statements(fn["body"]):
        m = LOCAL.match(st)
        if m:
            typ, name, init = m.groups()
            v = expr(init)
            names[name] = f"static_cast<{typ}>({v})" if typ in NUMERIC else f"({v})"
            continue
        m = EARLY.fullmatch(st)
        if m:
            c = expr(m.group(1))
            early.append((m.group(2) == "true", c))
            conj.append(f"!({c})")
            continue
        m = re.fullmatch(r"return\s+(.*)", st, re.S)
        if m:
            v = expr(m.group(1))
            if not any(r for r, _ in early):  # only `return false` before: a conjunction
                if v != "true":
                    conj.append(f"({v})" if conj else v)
                break
            # `if (C) { return true; }` too: fold from the last statement back
            for ret, c in reversed(early):
                if _constant(c) == (not ret):  # a test that never holds (an API that is
                    continue                   # there: the availability switch) drops out
                if ret:
                    v = c if v == "false" else f"{c} || ({v})"
                else:
                    v = f"!({c})" if v == "true" else f"!({c}) && ({v})"
            return v
        raise _No(st)
    else:
        raise _No("no return")
    return " && ".join(conj) if conj else "true"


def _top_terms(e: str, op: str) -> list[str]:
    """`e` split at its top-level `op` (`||` or `&&`)."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(e):
        c = e[i]
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and e.startswith(op, i):
            out.append(cur.strip())
            cur, i = "", i + len(op)
            continue
        cur += c
        i += 1
    return out + [cur.strip()]


def _drop_constants(e: str) -> str:
    """`e` without its top-level `||` terms that never hold (`!(true)`: the availability
    switch inside a longer test), or `true` when one always holds."""
    terms = _top_terms(e, "||")
    if len(terms) < 2 or len(_top_terms(e, "?")) > 1:  # `||` binds looser but for `?:`
        return e
    if any(_constant(t) is True for t in terms):
        return "true"
    kept = [t for t in terms if _constant(t) is not False]
    return " || ".join(kept) if kept else "false"


def _constant(c: str) -> bool | None:
    """True or False when `c` is a literal truth value up to `!` and parentheses."""
    t = c.replace(" ", "")
    neg = False
    while True:
        if t.startswith("(") and t.endswith(")") and _balanced(t, 0, "(", ")") == len(t):
            t = t[1:-1]
        elif t.startswith("!"):
            neg, t = not neg, t[1:]
        else:
            break
    if t in ("true", "false"):
        return (t == "true") != neg
    return None


UTILS: dict[str, dict] = {}  # op_plugin/utils/*.cpp functions (extract() fills it)
TERNARY = re.compile(r"if\s*\((.*)\)\s*\{\s*return\s+([^;]+);\s*\}\s*else\s*\{\s*return\s+([^;]+);\s*\}",
                     re.S)


def _value_fn(fn: dict, args: list[str]) -> str:
    """A utils function whose body is `return E;` or `if (C) { return A; } else { return
    B; }`, as an expression of `args`."""
    if len(args) != len(fn["params"]):
        raise _No("arity")
    names = {}
    for (ptype, pname), arg in zip(fn["params"], args):
        base = ptype.replace("const", "").replace("&", "").strip()
        names[pname] = f"static_cast<{base}>({arg})" if base in NUMERIC else f"({arg})"
    body = " ".join(fn["body"].split())
    m = TERNARY.fullmatch(body)
    if m:
        return "(" + " ? ".join(f"({_sub(x.strip(), names)})" for x in m.groups()[:2]) \
            + f" : ({_sub(m.group(3).strip(), names)}))"
    m = re.fullmatch(r"return\s+([^;]+);", body)
    if m:
        return f"({_sub(m.group(1).strip(), names)})"
    raise _No("utils form")


def _balanced_end(e: str, j: int, open_: str = "(", close: str = ")") -> int:
    """Index just past the `close` matching e[j] (extract_mode_routes._balanced)."""
    k = _balanced(e, j, open_, close)
    if k < 0:
        raise _No("parentheses")
    return k


def _calls(e: str, funcs: dict, consts: dict[str, str], depth: int) -> str:
    """Inline the calls of the file's own `bool` functions in `e`, and of op_plugin's
    utils functions (`op_plugin::utils::NAME(...)`) of one expression."""
    pat = re.compile(r"\bop_plugin::utils::(\w+)\s*\(")
    m = pat.search(e)
    while m and m.group(1) in UTILS:
        j = _balanced_end(e, m.end() - 1)
        e = e[:m.start()] + _value_fn(UTILS[m.group(1)], _split_args(e[m.end():j - 1])) + e[j:]
        m = pat.search(e)
    for name, fn in funcs.items():
        if fn["ret"].split()[-1] != "bool":
            continue
        pat = re.compile(rf"(?<![\w.:>]){name}\s*\(")
        m = pat.search(e)
        while m:
            j = _balanced_end(e, m.end() - 1)
            v = _inline(fn, _split_args(e[m.end():j - 1]), funcs, consts, depth + 1)
            e = e[:m.start()] + f"({v})" + e[j:]
            m = pat.search(e)
    return e


def _negate(e: str) -> str:
    """`!(e)`, or X when e is `!(X)` with its own parentheses around all of X."""
    if e.startswith("!(") and e.endswith(")"):
        depth = 0
        for i, c in enumerate(e[1:], 1):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                if i == len(e) - 1:
                    return e[2:-1]
                break
    return f"!({e})"


def _caller_names(fn: dict, before: str) -> dict[str, str]:
    """The caller's values an argument may name: its parameters as themselves, its local
    numbers as their initialisers, its returned tensor as `{out}`."""
    names = {p: p for _, p in fn["params"]}
    ret = re.findall(r"\breturn\s+(\w+)\s*;", fn["body"])
    if ret:
        names[ret[-1]] = "{out}"
    for st in before.split(";"):
        m = LOCAL.match(st.strip())
        if m and m.group(1) in NUMERIC:
            names[m.group(2)] = f"({_sub(' '.join(m.group(3).split()), names)})"
    return names


def _arg(a: str, names: dict[str, str]) -> str:
    if a not in names:
        raise _No(f"argument {a}")
    return names[a]


def _slow(fn: dict, args: list[str]) -> tuple[str, str]:
    """(the at:: call over the caller's names, the result dtype) of a CPU route function."""
    if len(args) != len(fn["params"]):
        raise _No("slow arity")
    names = {p: a for (_, p), a in zip(fn["params"], args)}
    body = " ".join(fn["body"].split())
    for m in re.finditer(r"(?:at::Tensor|auto)\s+(\w+)\s*=\s*(\w+)\.cpu\(\)((?:\.to\([\w:]+\))?)\s*;", body):
        names[m.group(1)] = f"{names.get(m.group(2), m.group(2))}.cpu(){m.group(3)}"
    dt = {m.group(1): _sub(m.group(2), names) for m in
          re.finditer(r"auto\s+(\w+)\s*=\s*(\w+\.scalar_type\(\))\s*;", body)}
    calls = re.findall(r"\bat::(\w+)\s*\(([^()]*)\)", body)
    if len(calls) != 1 or ".copy_(" not in body or ".cpu()" not in body:
        raise _No("slow form")
    name, cargs = calls[0]
    out = []
    for a in _split_args(cargs):
        if a not in names:
            raise _No(f"slow argument {a}")
        out.append(names[a])
    m = re.search(r"\.copy_\(\s*\w+(?:\.to\((\w+)\))?\s*\)", body)
    if not m:
        raise _No("copy form")
    rdt = dt.get(m.group(1), "") if m.group(1) else ""
    if m.group(1) and not rdt:
        raise _No("dtype")
    return f"at::{name}({', '.join(out)})", rdt


def _inline_cpu(body: str, names: dict[str, str]) -> str:
    """The at:: call of a CPU route written in the adapter: `at::Tensor X = Y.cpu();`
    copies, one `at::Tensor R = at::NAME(ARGS);` and `return R.to(Z.device());` (the
    result moved back to the device, in its own dtype), nothing else."""
    names = dict(names)
    call = None
    for st in [t.strip() for t in " ".join(body.split()).split(";") if t.strip()]:
        m = re.fullmatch(r"(?:at::Tensor|auto)\s+(\w+)\s*=\s*(\w+)\.cpu\(\)", st)
        if m:
            names[m.group(1)] = f"{_arg(m.group(2), names)}.cpu()"
            continue
        m = re.fullmatch(r"(?:at::Tensor|auto)\s+(\w+)\s*=\s*at::(\w+)\s*\(([^()]*)\)", st)
        if m and call is None:
            call = (m.group(1), f"at::{m.group(2)}("
                    + ", ".join(_arg(a, names) for a in _split_args(m.group(3))) + ")")
            continue
        m = re.fullmatch(r"return\s+(\w+)\.to\(\s*(\w+)\.device\(\)\s*\)", st)
        if m and call is not None and m.group(1) == call[0] and m.group(2) in names:
            return call[1]
        raise _No(f"cpu body {st}")
    raise _No("cpu body")


def rows_of_file(text: str, path: str, commit: str, headers: dict[str, str]) -> list[dict]:
    raw = text
    text = _strip_comments(text)
    consts: dict[str, str] = {}
    for inc in INCLUDE.findall(raw):
        consts.update(CONST.findall(_strip_comments(headers.get(inc, ""))))
    consts.update(CONST.findall(text))
    funcs = _funcs(text)
    rows = []
    for fname, fn in funcs.items():
        ex = EXEC.search(fn["body"])
        if not ex:
            continue
        for g in GATE.finditer(fn["body"], 0, ex.start()):
            helper, hargs, slow, sargs = g.groups()
            if helper not in funcs or slow not in funcs \
                    or funcs[helper]["ret"].split()[-1] != "bool":
                continue
            try:
                names = _caller_names(fn, fn["body"][:g.start()])
                fast = _inline(funcs[helper], [_arg(a, names) for a in _split_args(hargs)],
                               funcs, consts)
                call, rdt = _slow(funcs[slow], [_arg(a, names) for a in _split_args(sargs)])
            except (_No, ValueError, IndexError):
                continue
            line = text.count("\n", 0, fn["start"] + 1 + g.start()) + 1
            rows.append({"function": fname, "limit": "value_cpu_route", "api": ex.group(1),
                         "cond": _negate(fast), "cpu_call": call, "result_dtype": rdt,
                         "helper": helper, "slow": slow,
                         "source": {"repo": "Ascend/op-plugin", "commit": commit,
                                    "path": path, "line": line}})
        for g in POS_GATE.finditer(fn["body"], 0, ex.start()):
            helper, hargs = g.groups()
            if helper not in funcs or funcs[helper]["ret"].split()[-1] != "bool":
                continue
            end = _balanced(fn["body"], g.end() - 1, "{", "}")
            if end < 0 or end > ex.start():
                continue
            try:
                names = _caller_names(fn, fn["body"][:g.start()])
                cond = _drop_constants(_inline(funcs[helper],
                                               [_arg(a, names) for a in _split_args(hargs)],
                                               funcs, consts))
                call = _inline_cpu(fn["body"][g.end():end - 1], names)
            except (_No, ValueError, IndexError):
                continue
            line = text.count("\n", 0, fn["start"] + 1 + g.start()) + 1
            rows.append({"function": fname, "limit": "value_cpu_route", "api": ex.group(1),
                         "cond": cond, "cpu_call": call, "result_dtype": "",
                         "helper": helper, "slow": "",
                         "params": [p for _, p in fn["params"]],
                         "source": {"repo": "Ascend/op-plugin", "commit": commit,
                                    "path": path, "line": line}})
    return rows


def extract(repo: Path, commit: str = COMMIT) -> list[dict]:
    paths = [p for p in git_text(repo, "ls-tree", "-r", "--name-only", commit,
                                 "op_plugin/").splitlines()]
    headers = {p: git_text(repo, "show", f"{commit}:{p}") for p in paths
               if p.startswith("op_plugin/utils/") and p.endswith(".h")}
    UTILS.clear()
    for p in sorted(p for p in paths if p.startswith("op_plugin/utils/") and p.endswith(".cpp")):
        for name, fn in _funcs(_strip_comments(git_text(repo, "show", f"{commit}:{p}"))).items():
            UTILS.setdefault(name, fn)
    rows = []
    for path in sorted(p for p in paths if p.startswith("op_plugin/ops/opapi/")
                       and p.endswith(".cpp")):
        rows += rows_of_file(git_text(repo, "show", f"{commit}:{path}"), path, commit, headers)
    return rows


def main(argv=None) -> int:
    from opdb.sources.torch.op_plugin_cli import main as cli_main
    return cli_main(argv, __doc__.split("\n\n")[0], extract, COMMIT, OUT, "extract_value_routes", "rows")


if __name__ == "__main__":
    sys.exit(main())
