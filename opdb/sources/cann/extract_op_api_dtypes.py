"""Extract per-chip dtype restrictions of aclnn APIs from their op_api C++ into
`aclnn_op_api_dtypes.jsonl` (facts only: API, parameter, chips, the dtypes allowed there,
source path and line; no source text).

Some APIs check a parameter's dtype against a list chosen by the chip, and their doc does
not say so. ops-nn `aclnn_max_pool3d_with_argmax.cpp`:
    static const std::initializer_list<op::DataType> INDICES_DTYPE_SUPPORT_LIST = {op::DataType::DT_INT32};
    ...
    if (Ops::NN::AclnnUtil::IsRegbase()) {
        OP_CHECK_DTYPE_NOT_SUPPORT(indices, INDICES_DTYPE_SUPPORT_LIST_REGBASE, return false);
    } else {
        OP_CHECK_DTYPE_NOT_SUPPORT(indices, INDICES_DTYPE_SUPPORT_LIST, return false);
    }
so `indices` takes only INT32 on A2/A3. For every `OP_CHECK_DTYPE_NOT_SUPPORT(param, LIST,
...)` of the `.cpp` defining an API's `GetWorkspaceSize`, this reads the path condition
(the enclosing `if`/`else if`/`else` conditions, and earlier sibling `if (C) {... return
...}` blocks) and the list (a file-level `initializer_list`/`vector` of `DataType`, a
brace list, a local assigned from one, a ternary, or a call to a function of the file
whose `return LIST;` statements have path conditions of their own), and evaluates both
on each chip `opdb.soc` knows. A condition is read only when it is made of chip tests
(`IsRegbase(...)`, `... == / != NpuArch::DAV_n`, `... == / != SocVersion::X`, a bool
local assigned from those) with `&&`, `||`, `!` and parentheses; a check under any other
condition (a dtype, a shape, an attribute) is skipped. Per (API, parameter, chip) the
lists that apply are intersected; a row is written only where the result differs between
chips (an unconditional check is the doc's union, not a per-chip fact), one row per group
of chips with the same list. A check names a parameter of a helper; it is taken for the
API's parameter of the same name, for every API the file defines. `if (!CheckType(p->
GetDataType(), LIST)) {` is a check too when it is the whole condition and its block logs
an error (OP_LOGE...; without one it picks a route, aclnn_index.cpp check_index_aicore).

For the tensor parameters the catalog has no dtypes for (no doc table), the one list the
`.cpp` checks on every chip, and the list of the parameter an `OP_CHECK_DTYPE_NOT_MATCH(
dy, x->GetDataType(), ...)` ties each other one to, go to
`aclnn_op_api_undocumented_dtypes.jsonl` (aclnnAtanGrad: FLOAT16, FLOAT, BF16).

Every `OP_CHECK_DTYPE_NOT_MATCH(a, b->GetDataType(), ...)` between two parameters of an API
goes to `aclnn_op_api_dtype_ties.jsonl` with the chips its path condition holds on (chip
tests evaluated as above; any other condition, `if (gamma != nullptr)`, is taken as met:
the tie binds whenever the check is reached): `a` must have `b`'s dtype there.
aclnn_group_norm.cpp:84-85: `meanOut`, `rstdOut` in `self`'s dtype on every chip;
aclnn_group_norm_backward.cpp:157-158: `mean`, `rstd` in `gradOut`'s outside regbase.

    python opdb/sources/cann/extract_op_api_dtypes.py --mirror-root DIR [--check]

DIR holds `owner+name/repo` bare git mirrors at the commits of `aclnn_apis.jsonl`.
Standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "aclnn_op_api_dtypes.jsonl"
# the chips of opdb.soc, by the C++ names that test them
SOCS = ("ascend910b", "ascend910_93", "ascend950", "ascend910", "ascend310p", "ascend310b")
ARCH = {"DAV_2201": {"ascend910b", "ascend910_93"}, "DAV_3510": {"ascend950"},
        "DAV_2002": {"ascend310p"}, "DAV_1001": {"ascend910"}, "DAV_3002": {"ascend310b"}}
SOCVER = {"ASCEND910B": {"ascend910b"}, "ASCEND910_93": {"ascend910_93"},
          "ASCEND950": {"ascend950"}, "ASCEND910": {"ascend910"}, "ASCEND310P": {"ascend310p"},
          "ASCEND310B": {"ascend310b"}}
REGBASE = {"ascend950"}
LISTDEF = re.compile(r"(?:static\s+)?(?:const\s+)?std::(?:initializer_list|vector)\s*<\s*(?:op::|ge::)?"
                     r"DataType\s*>\s*&?\s*(\w+)\s*=\s*\{([^{}]*)\}\s*;")
CHECK = re.compile(r"OP_CHECK_DTYPE_NOT_SUPPORT\s*\(\s*(\w+)\s*,"
                   # `if (!CheckType(x->GetDataType(), LIST)) {`, the whole condition (a
                   # conjunct of a longer one is a check under another condition: skipped)
                   r"|\bif\s*\(\s*!\s*(?:[\w:]+::)?CheckType\s*\(\s*(\w+)\s*->\s*GetDataType"
                   r"\s*\(\s*\)\s*,")
# `OP_CHECK_DTYPE_NOT_MATCH(dy, x->GetDataType(), ...)`: dy takes x's dtype
TIE = re.compile(r"OP_CHECK_DTYPE_NOT_MATCH\s*\(\s*(\w+)\s*,\s*(\w+)\s*->\s*GetDataType\s*\(")
UNDOC_OUT = HERE / "aclnn_op_api_undocumented_dtypes.jsonl"
TIES_OUT = HERE / "aclnn_op_api_dtype_ties.jsonl"
DT = re.compile(r"\bDT_([A-Z0-9_]+)")
SKIP = "skip"  # a check not applied on the chip (its path condition fails there)


def _mask(text: str) -> str:
    """Comments and string/char literals blanked (newlines kept), same length."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(q + " " * (min(j, n) - i - 1) + (q if j < n else ""))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)[:n]


def _dtypes(body: str) -> tuple[str, ...]:
    return tuple(sorted({"BFLOAT16" if d == "BF16" else d for d in DT.findall(body)}))


def _pairs(text: str) -> dict[int, int]:
    """Matching braces: {open: close}."""
    stack, pairs = [], {}
    for i, c in enumerate(text):
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            pairs[stack.pop()] = i
    return pairs


def _paren_back(text: str, close: int) -> int:
    """The index of the `(` matching the `)` at `close`, or -1."""
    depth = 0
    for i in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


class File:
    """One masked op_api `.cpp`: its lists, functions and brace structure."""

    def __init__(self, text: str):
        self.text = _mask(text)
        self.pairs = _pairs(self.text)
        self.lists = {m.group(1): _dtypes(m.group(2)) for m in LISTDEF.finditer(self.text)}
        self.funcs: dict[str, tuple[int, int]] = {}
        for o, c in self.pairs.items():
            head = self.text[:o].rstrip()
            if head.endswith("const"):
                head = head[:-5].rstrip()
            if not head.endswith(")"):
                continue
            p = _paren_back(head, len(head) - 1)
            m = re.search(r"(\w+)\s*$", head[:p])
            if m and m.group(1) not in ("if", "for", "while", "switch", "catch") and \
                    not any(a < o < b for a, b in self.funcs.values()):
                self.funcs.setdefault(m.group(1), (o, c))
        self.bools: dict[str, str] = {}
        for m in re.finditer(r"\b(?:const\s+)?(?:bool|auto)\s+(\w+)\s*=\s*([^;{}]+);", self.text):
            if _cond(m.group(2), {}) is not None:
                self.bools.setdefault(m.group(1), m.group(2))

    def line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def path(self, pos: int) -> list[tuple[str, bool]] | None:
        """(condition, holds) of the blocks around `pos`, inside its function; None when a
        block opens after something other than `if`/`else`/a function/a loop."""
        text, out = self.text, []
        encl = sorted((o, c) for o, c in self.pairs.items() if o < pos < c)
        inner = encl[-1] if encl else None
        for o, c in reversed(encl):
            head = text[:o].rstrip()
            if head.endswith("else"):
                out += self._chain(len(head) - 4)
                continue
            if not head.endswith(")"):
                if head.endswith(("do", "=", "return", ":")):  # a `case X: {` block too
                    return None
                break  # extern "C", a namespace: outside any function
            p = _paren_back(head, len(head) - 1)
            word = re.search(r"(\w+)\s*$", head[:p])
            w = word.group(1) if word else ""
            if w == "if":
                out.append((head[p + 1:-1], True))
                before = head[:word.start()].rstrip()
                if before.endswith("else"):
                    out += self._chain(len(before) - 4)
            elif w in ("for", "while"):
                continue
            elif w in ("switch", "catch"):
                return None
            else:
                break  # the function
        if inner is not None:  # earlier `if (C) { ... return ...; }` of the same block
            for o, c in self.pairs.items():
                if not (inner[0] < o and c < pos) or \
                        any(a < o < b and (a, b) != inner and a > inner[0] for a, b in self.pairs.items()):
                    continue
                head = text[:o].rstrip()
                if not head.endswith(")") or re.match(r"\s*else\b", text[c + 1:]):
                    continue
                p = _paren_back(head, len(head) - 1)
                word = re.search(r"(\w+)\s*$", head[:p])
                if word and word.group(1) == "if" and re.search(r"\breturn\b", text[o:c]) \
                        and not head[:word.start()].rstrip().endswith("else") \
                        and _cond(head[p + 1:-1], self.bools) is not None:
                    out.append((head[p + 1:-1], False))
        return out

    def _chain(self, else_at: int) -> list[tuple[str, bool]]:
        """The negated conditions of the `if`/`else if` chain before the `else` at `else_at`."""
        text, out = self.text, []
        close = text[:else_at].rstrip()
        if not close.endswith("}"):
            return [("?", True)]
        c = len(close) - 1
        o = next((a for a, b in self.pairs.items() if b == c), None)
        if o is None:
            return [("?", True)]
        head = text[:o].rstrip()
        if not head.endswith(")"):
            return [("?", True)]
        p = _paren_back(head, len(head) - 1)
        word = re.search(r"(\w+)\s*$", head[:p])
        if not word or word.group(1) != "if":
            return [("?", True)]
        out.append((head[p + 1:-1], False))
        before = head[:word.start()].rstrip()
        if before.endswith("else"):
            out += self._chain(len(before) - 4)
        return out

    def holds(self, path, soc: str) -> bool | None:
        for cond, want in path:
            v = _cond(cond, self.bools, soc)
            if v is None:
                return None
            if v != want:
                return False
        return True

    def arch_dependent(self, path) -> bool:
        return any(_cond(c, self.bools) is not None for c, _ in path)

    def list_of(self, expr: str, pos: int, soc: str, depth: int = 0) -> tuple[str, ...] | None:
        """The dtypes of a list expression at `pos` on `soc`, or None (unknown)."""
        expr = expr.strip()
        if depth > 4:
            return None
        if expr.startswith("{"):
            return _dtypes(expr)
        m = re.fullmatch(r"(.+?)\?(.+):(.+)", expr, re.S)
        if m:
            v = _cond(m.group(1), self.bools, soc)
            return None if v is None else self.list_of(m.group(2) if v else m.group(3), pos, soc, depth + 1)
        m = re.fullmatch(r"(?:[\w:]+::)?(\w+)\s*\([^;]*\)", expr, re.S)
        if m:
            return self._returns(m.group(1), soc, depth)
        m = re.fullmatch(r"(?:[\w:]+::)?(\w+)", expr)
        if not m:
            return None
        name = m.group(1)
        # a local assigned before `pos` in the same function
        fn = next(((o, c) for o, c in self.funcs.values() if o < pos < c), None)
        if fn is not None:
            found = None
            for a in re.finditer(r"[\s(&]" + re.escape(name) + r"\s*=\s*([^;=][^;]*);", self.text[fn[0]:pos]):
                found = (a.group(1), fn[0] + a.start())
            if found is not None:
                path = self.path(found[1] + 1)
                if path is None or self.holds(path, soc) is None:
                    return None
                return self.list_of(found[0], found[1], soc, depth + 1)
        return self.lists.get(name)

    def _returns(self, fname: str, soc: str, depth: int) -> tuple[str, ...] | None:
        span = self.funcs.get(fname)
        if span is None:
            return None
        for m in re.finditer(r"\breturn\s+([^;]+);", self.text[span[0]:span[1]]):
            at = span[0] + m.start()
            path = self.path(at)
            h = None if path is None else self.holds(path, soc)
            if h is None:
                return None
            if h:
                return self.list_of(m.group(1), at, soc, depth + 1)
        return None

    def checks(self) -> list[tuple[str, int, dict[str, tuple[str, ...] | None], bool]]:
        """(param, line, {chip: allowed dtypes or None}, depends on the chip) per check
        whose path condition is made of chip tests."""
        out = []
        for m in CHECK.finditer(self.text):
            start = m.end()
            depth, i = 1, m.end() - len(m.group(0)) + m.group(0).index("(", m.group(0).find(
                "CheckType") + 1 if m.group(2) else 0) + 1
            args, last = [], i
            while i < len(self.text) and depth:
                ch = self.text[i]
                if ch in "({":
                    depth += 1
                elif ch in ")}":
                    depth -= 1
                elif ch == "," and depth == 1:
                    args.append(self.text[last:i])
                    last = i + 1
                i += 1
            args.append(self.text[last:i - 1])  # the last: CheckType(x->GetDataType(), LIST)
            if m.group(2):
                rest = self.text[i:].lstrip()
                if not rest.startswith(")"):
                    continue  # `if (!CheckType(...) && ...)`: under another condition
                o = self.text.find("{", i)
                if o < 0 or self.text[i:o].strip() != ")" or "OP_LOGE" not in \
                        self.text[o:self.pairs.get(o, o)]:
                    continue  # no error logged: a route choice (aclnn_index.cpp:264), no check
            if len(args) < 2:
                continue
            path = self.path(m.start())
            if path is None:
                continue
            per = {}
            for soc in SOCS:
                h = self.holds(path, soc)
                if h is None:
                    break
                per[soc] = self.list_of(args[1], start, soc) if h else SKIP
            else:
                out.append((m.group(1) or m.group(2), self.line(m.start()), per,
                            self.arch_dependent(path)))
        return out

    def chip_ties(self) -> list[tuple[str, str, int, list[str]]]:
        """(param, the param whose dtype it must have, line, chips the check is reached
        on) per OP_CHECK_DTYPE_NOT_MATCH; a condition that is no chip test counts as met."""
        out = []
        for m in TIE.finditer(self.text):
            path = self.path(m.start())
            if path is None:
                continue
            socs = [soc for soc in SOCS
                    if all(v is None or v == want
                           for v, want in ((_cond(c, self.bools, soc), w) for c, w in path))]
            out.append((m.group(1), m.group(2), self.line(m.start()), socs))
        return out

    def ties(self) -> dict[str, str]:
        """{param: the param whose dtype it must have}, from checks on every path."""
        out = {}
        for m in TIE.finditer(self.text):
            if self.path(m.start()) == []:
                out.setdefault(m.group(1), m.group(2))
        return out


def _cond(text: str, bools: dict[str, str], soc: str | None = None) -> bool | None:
    """A chip test evaluated on `soc` (any chip when None: only whether it parses); None
    when it tests anything else."""
    s = " ".join(text.split())
    for _ in range(3):
        s = re.sub(r"\b(\w+)\b", lambda m: f"({bools[m.group(1)]})" if m.group(1) in bools else m.group(1), s)
    atoms: list[bool] = []

    def put(v: bool) -> str:
        atoms.append(v)
        return f" A{len(atoms) - 1} "

    probe = soc or SOCS[0]
    s = re.sub(r"(?:[\w:]+::)?IsRegbase\s*\([^()]*\)", lambda m: put(probe in REGBASE), s)
    cmp = r"[\w.:]+(?:\(\))?(?:\s*(?:\.|->)\s*\w+\(\))*\s*(==|!=)\s*(?:op::|platform_ascendc::)?"

    def arch(table):
        def f(m):
            v = probe in table.get(m.group(2), set())
            return put(v if m.group(1) == "==" else not v)
        return f
    s = re.sub(cmp + r"NpuArch::(\w+)", arch(ARCH), s)
    s = re.sub(cmp + r"SocVersion::(\w+)", arch(SOCVER), s)
    if not atoms:
        return None
    py = s.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    tokens = re.findall(r"A\d+|and|or|not|\(|\)|\S+", py)
    if any(t not in ("and", "or", "not", "(", ")") and not re.fullmatch(r"A\d+", t) for t in tokens):
        return None
    try:
        v = eval(" ".join(f"atoms[{t[1:]}]" if t.startswith("A") else t for t in tokens),
                 {"__builtins__": {}}, {"atoms": atoms})
    except SyntaxError:
        return None
    return bool(v)


def undocumented(text: str, params: set[str]) -> list[dict]:
    """For `params` the catalog has no dtypes for (no doc table: experimental APIs), the
    one list the `.cpp` checks on every chip, and the list of the param each of the
    others is tied to (OP_CHECK_DTYPE_NOT_MATCH): {param, allow, line}. aclnn_atan_grad.cpp:
    `x` FLOAT16/FLOAT/BF16 (CheckType), `dy` and `dx` tied to `x`."""
    f = File(text)
    found: dict[str, tuple[tuple[str, ...], int]] = {}
    for param, line, lists, _dep in f.checks():
        if param not in params or param in found:
            continue
        vals = set(lists.values())
        if len(vals) == 1 and None not in vals and SKIP not in vals:
            found[param] = (vals.pop(), line)
    for a, b in f.ties().items():
        if a in params and a not in found and b in found:
            found[a] = found[b]
    return [{"param": p, "allow": list(v[0]), "line": v[1]} for p, v in sorted(found.items())]


def restrictions(text: str, params: set[str]) -> list[dict]:
    """Per-chip restrictions of one `.cpp` for the parameters named: {param, socs, allow, line}."""
    f = File(text)
    per: dict[str, dict[str, tuple[set, int] | None]] = {}
    arch: set[str] = set()
    for param, line, lists, dep in f.checks():
        if param not in params:
            continue
        cur = per.setdefault(param, {})
        for soc, lst in lists.items():
            if soc in cur and cur[soc] is None:
                continue
            if lst is None:
                cur[soc] = None
                continue
            old = cur.get(soc)
            if lst == SKIP:
                continue
            cur[soc] = (set(lst) if old is None else old[0] & set(lst), line if old is None else old[1])
        if dep or len({lists[s] for s in SOCS}) > 1:
            arch.add(param)
    for param, cur in per.items():  # a chip no check reached accepts the union: unknown here
        for soc in SOCS:
            cur.setdefault(soc, None)
    out = []
    for param in sorted(arch):
        known = {s: v for s, v in per[param].items() if v is not None}
        if len({tuple(sorted(v[0])) for v in known.values()}) < 2 or len(known) < len(SOCS):
            continue
        groups: dict[tuple, list[str]] = {}
        for soc in SOCS:
            groups.setdefault((tuple(sorted(known[soc][0])), known[soc][1]), []).append(soc)
        for (allow, line), socs in sorted(groups.items(), key=lambda kv: SOCS.index(kv[1][0])):
            out.append({"param": param, "socs": socs, "allow": list(allow), "line": line})
    return out


def dtype_ties(text: str, params: set[str]) -> list[dict]:
    """The dtype ties between `params` of one `.cpp`: {param, same_as, socs, line}, one per
    check reached on some chip."""
    return [{"param": a, "same_as": b, "socs": socs, "line": line}
            for a, b, line, socs in File(text).chip_ties()
            if a in params and b in params and a != b and socs]


def extract(mirror_root: Path) -> tuple[list[dict], list[dict], list[dict]]:
    from api_docs import GWS_DEFINITION, op_api_sources  # the sibling module: these run as scripts

    recs = [json.loads(line) for line in (HERE / "aclnn_apis.jsonl").read_text().splitlines()]
    rows: list[dict] = []
    undoc: list[dict] = []
    tied: list[dict] = []
    for repo, commit, files in op_api_sources(mirror_root, recs):
        defs: dict[str, list[tuple[str, str]]] = {}
        tie_defs: dict[str, list[tuple[str, str]]] = {}
        for path, text in files:
            checks = "OP_CHECK_DTYPE_NOT_SUPPORT" in text or "CheckType" in text
            if not checks and "OP_CHECK_DTYPE_NOT_MATCH" not in text:
                continue
            for m in GWS_DEFINITION.finditer(text):
                if checks:
                    defs.setdefault(m.group(1), []).append((path, text))
                if "OP_CHECK_DTYPE_NOT_MATCH" in text:
                    tie_defs.setdefault(m.group(1), []).append((path, text))
        for r in recs:
            if r["source"]["repo"] != repo:
                continue
            # the .cpp next to the catalog's header, else one outside experimental/
            home = r["source"]["path"].rsplit("/", 1)[0]
            pick = lambda d: (d[0].rsplit("/", 1)[0] != home,  # noqa: E731
                              d[0].startswith("experimental/"), d[0])
            params = {p["name"] for p in r.get("params", [])}
            if r["api"] in tie_defs:
                path, text = min(tie_defs[r["api"]], key=pick)
                for x in dtype_ties(text, params):
                    tied.append({"api": r["api"], "param": x["param"], "same_as": x["same_as"],
                                 "socs": x["socs"],
                                 "source": {"repo": repo, "commit": commit, "path": path,
                                            "line": x["line"]}})
            if r["api"] not in defs:
                continue
            path, text = min(defs[r["api"]], key=pick)
            for x in restrictions(text, params):
                rows.append({"api": r["api"], "param": x["param"], "socs": x["socs"],
                             "allow": x["allow"],
                             "source": {"repo": repo, "commit": commit, "path": path,
                                        "line": x["line"]}})
            silent = {p["name"] for p in r.get("params", []) if p.get("type", "").rstrip(
                " *").endswith(("aclTensor", "aclTensorList")) and p["name"] not in (r.get("dtypes") or {})}
            for x in undocumented(text, silent):
                undoc.append({"api": r["api"], "param": x["param"], "allow": x["allow"],
                              "source": {"repo": repo, "commit": commit, "path": path,
                                         "line": x["line"]}})
    key = lambda r: (r["api"], r["param"], r["source"]["line"], r.get("socs", []))  # noqa: E731
    return sorted(rows, key=key), sorted(undoc, key=key), sorted(tied, key=key)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("--check", action="store_true", help="compare with the shipped file")
    args = ap.parse_args(argv)
    from opdb.fsio import write_or_check

    if not args.mirror_root.is_dir():
        print(f"extract_op_api_dtypes: no directory {args.mirror_root} (--mirror-root takes the "
              "folder holding owner+name/repo bare mirrors)", file=sys.stderr)
        return 2
    rows, undoc, tied = extract(args.mirror_root)
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)
    rc = write_or_check(OUT, text, args.check, "extract_op_api_dtypes", "restrictions")
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in undoc)
    rc = rc or write_or_check(UNDOC_OUT, text, args.check, "extract_op_api_dtypes",
                              "undocumented lists")
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in tied)
    return rc or write_or_check(TIES_OUT, text, args.check, "extract_op_api_dtypes", "dtype ties")


if __name__ == "__main__":
    raise SystemExit(main())
