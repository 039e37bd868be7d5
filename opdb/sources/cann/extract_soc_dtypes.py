"""Extract per-product dtype restrictions of aclnn APIs from the CANN ops repositories'
docs into `aclnn_soc_dtypes.jsonl` (facts only: API, products, dtype names, doc path and
line; no doc text).

The docs state the restrictions as bullet lines after (or inside) the parameter table:
  - <term>Atlas 推理系列产品</term>、<term>Atlas 训练系列产品</term>：数据类型支持FLOAT、FLOAT16。
  - <term>Atlas 训练系列产品</term>：不支持BFLOAT16数据类型。
  - <term>Atlas A2 训练系列产品/...</term>：参数`indicesOut`的数据类型不支持INT64，
The first form is an allow-list for the products named, the second and third deny-lists. A doc that
documents several APIs (`aclnnAdd&aclnnInplaceAdd.md`) applies its lines to each of them.

A product line that states no restriction itself ("- <term>Atlas A2 ...</term>、<term>Atlas A3
...</term>：") heads nested bullets, each read for the same forms and for a list of parameters
first, one row per parameter (aclnnMaxPool2dWithIndicesBackward):
  - <term>Atlas A2 训练系列产品/Atlas A2 推理系列产品</term>、<term>...</term>：
    - gradOutput和self数据类型支持FLOAT。
    - indices数据类型支持INT32。仅支持dilation为（1，1）。
    - query数据类型支持FLOAT16、BFLOAT16，attentionOut、key和value数据类型支持FLOAT16、INT8。
    - 参数`x1`、`x2`、`gamma`的数据类型不支持BFLOAT16。
A nested bullet of any other shape (a condition first: "当...时", "mode为1或2时", "当前场景";
"额外支持"; a grand-child list) is not read. Such rows carry `"nested": true` and are kept only
where the API's op_api C++ confirms them: the per-chip list of `aclnn_op_api_dtypes.jsonl` on
every chip the row names holds none of the dtypes it cuts (deny) or nothing outside its list
(allow), or `soc_dtypes_review.json` names the C++ lines that confirm it (a list chosen in a
switch on the chip, which the op_api extractor does not read). The others go to
`aclnn_soc_dtypes_rejected.jsonl` with the reason.
Which doc belongs to which API comes from `aclnn_apis.jsonl` (`doc_path`, `doc_repo`).

    python opdb/sources/cann/extract_soc_dtypes.py --mirror-root DIR

DIR holds `owner+name/repo` bare git mirrors (hicann/ops-nn, ops-math, ops-cv,
ops-transformer, mirror-cann/ops-transformer). Standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TERMS = re.compile(r"^\s*-\s*(<term>[^<]+</term>(?:\s*[、，,和]?\s*<term>[^<]+</term>)*)\s*[:：]\s*(.*)$")
TERM = re.compile(r"<term>([^<]+)</term>")
DTYPE = r"[A-Z][A-Z0-9_]*"
LIST = DTYPE + r"(?:\s*[、，,]\s*" + DTYPE + r")*"  # one separator between names: no backtracking
ALLOW = re.compile(r"^(?:`?([A-Za-z_][A-Za-z0-9_]*)`?\s*(?:的)?)?数据类型(?:仅)?支持(" + LIST + ")")
DENY = re.compile(r"^(?:`?([A-Za-z_][A-Za-z0-9_]*)`?\s*(?:的)?)?不支持(" + LIST + r")\s*(?:数据类型|类型)")
# the same with the parameter first: "参数`indicesOut`的数据类型不支持INT64" (aclnnAdaptiveMaxPool3d),
# "`indices`数据类型不支持INT64" (aclnnMaxPool3dWithArgmaxBackward)
DENY_OF = re.compile(r"^(?:参数)?`([A-Za-z_][A-Za-z0-9_]*)`\s*(?:的)?数据类型不支持(" + LIST + ")")


# nested bullets: parameter names first, one or more, then 数据类型支持/不支持 (one clause; clauses
# of a bullet are joined by "，" or "；")
NAME = r"`?[A-Za-z_][A-Za-z0-9_]*`?"
NAMES = r"(?:(?:参数|入参|出参|输入参数|输出参数|输入|输出)\s*)?(" + NAME + r"(?:\s*(?:、|，|,|和|及)\s*" + NAME + r")*)"
PARAMS_ALLOW = re.compile(NAMES + r"\s*(?:的)?数据类型(?:仅)?支持(" + LIST + ")")
PARAMS_DENY = re.compile(NAMES + r"\s*(?:的)?(?:数据类型(?:均)?不支持(" + LIST + r")|(?:均)?不支持("
                         + LIST + r")\s*(?:数据类型|类型))")
BARE_ALLOW = re.compile(r"数据类型(?:仅)?支持(" + LIST + ")")
BARE_DENY = re.compile(r"不支持(" + LIST + r")\s*(?:数据类型|类型)")
CLAUSE_SEP = re.compile(r"\s*[，；,;]\s*")
BULLET = re.compile(r"^(\s*)-\s+(.*)$")


def _clauses(text: str) -> list[tuple[str | None, str, list[str]]]:
    """(param or None, "allow"|"deny", dtypes) per clause of one nested bullet, read from its
    start; reading stops at the first clause of another shape."""
    out, pos = [], 0
    while pos < len(text):
        m = None
        for rx, kind in ((PARAMS_ALLOW, "allow"), (PARAMS_DENY, "deny"), (BARE_ALLOW, "allow"),
                         (BARE_DENY, "deny")):
            m = rx.match(text, pos)
            if m:
                break
        if not m:
            break
        if rx in (BARE_ALLOW, BARE_DENY):
            out.append((None, kind, _dtypes(m.group(1))))
        else:
            names = [n.strip("`") for n in re.split(r"\s*(?:、|，|,|和|及)\s*", m.group(1))]
            dt = next(g for g in m.groups()[1:] if g)
            out.extend((n, kind, _dtypes(dt)) for n in names)
        sep = CLAUSE_SEP.match(text, m.end())
        if not sep:
            break
        pos = sep.end()
    return out


def _children(lines: list[str], i: int) -> list[tuple[int, str]]:
    """(line number, text) of the bullets nested one level under line `i` (0-based)."""
    indent = len(lines[i]) - len(lines[i].lstrip())
    kids, level = [], None
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if not line.strip() or line.lstrip().startswith("<!--"):
            continue
        m = BULLET.match(line)
        ind = len(line) - len(line.lstrip())
        if ind <= indent:
            break
        if m and (level is None or ind == level):
            level = ind
            kids.append((j + 1, m.group(2).strip()))
    return kids


def _dtypes(text: str) -> list[str]:
    return [d for d in re.split(r"[、，,\s]+", text.strip()) if re.fullmatch(DTYPE, d)]


def restrictions(text: str) -> list[dict]:
    """Every restriction line of one doc: {line, products, allow|deny, param}."""
    out = []
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        m = TERMS.match(line)
        if not m:
            continue
        products = [p.strip() for p in TERM.findall(m.group(1))]
        rest = m.group(2).strip()
        if not rest:  # a heading: its nested bullets carry the restrictions
            for kno, kid in _children(lines, no - 1):
                for param, kind, dts in _clauses(kid):
                    if dts:
                        out.append({"line": kno, "products": products, kind: dts,
                                    "param": param, "nested": True})
            continue
        a, d = ALLOW.match(rest), DENY.match(rest) or DENY_OF.match(rest)
        if a:
            out.append({"line": no, "products": products, "allow": _dtypes(a.group(2)),
                        "param": a.group(1) or None})
        elif d:
            out.append({"line": no, "products": products, "deny": _dtypes(d.group(2)),
                        "param": d.group(1) or None})
    return out


def review(row: dict, code: dict, manual: dict, socs_of) -> str | None:
    """None when the op_api C++ confirms a nested row, else why not."""
    key = (row["api"], row["param"], row["source"]["line"])
    if key in manual:
        row["confirmed_by"] = manual[key]
        return None
    if row["param"] is None:
        return "no parameter named: not checked against the C++"
    lists = code.get((row["api"], row["param"]))
    if not lists:
        return "aclnn_op_api_dtypes.jsonl has no per-chip list for this parameter"
    chips = sorted({s for p in row["products"] for s in socs_of(p)})
    for chip in chips:
        if chip not in lists:
            return f"no C++ list for {chip}"
        cpp = lists[chip][0]
        if "deny" in row and set(row["deny"]) & set(cpp):
            return f"C++ accepts {sorted(set(row['deny']) & set(cpp))} on {chip} ({lists[chip][1]})"
        if "allow" in row and set(cpp) - {_norm(d) for d in row["allow"]}:
            return (f"C++ accepts {sorted(set(cpp) - {_norm(d) for d in row['allow']})} on "
                    f"{chip} ({lists[chip][1]})")
    row["confirmed_by"] = "; ".join(sorted({lists[c][1] for c in chips}))
    return None


def _norm(d: str) -> str:
    return {"FLOAT32": "FLOAT", "BF16": "BFLOAT16"}.get(d, d)


def _code_lists() -> dict:
    """(api, param) -> chip -> (allowed dtypes, "path:line") from aclnn_op_api_dtypes.jsonl."""
    out: dict = {}
    path = HERE / "aclnn_op_api_dtypes.jsonl"
    for line in path.read_text().splitlines():
        r = json.loads(line)
        for chip in r["socs"]:
            out.setdefault((r["api"], r["param"]), {})[chip] = (
                [_norm(d) for d in r["allow"]], f"{r['source']['path']}:{r['source']['line']}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_soc_dtypes.jsonl")
    args = ap.parse_args(argv)
    if not args.mirror_root.is_dir():
        ap.exit(2, f"error: --mirror-root {args.mirror_root} is not a directory; pass the folder "
                   "holding owner+name/repo mirrors\n")
    from api_docs import iter_api_docs, write_rows  # the sibling module: these run as scripts

    rows = []
    for rec, repo, commit, doc in iter_api_docs(args.mirror_root):
        for r in restrictions(doc):
            rows.append({"api": rec["api"], **{k: r[k] for k in ("products", "allow", "deny",
                                                                  "param", "nested") if k in r},
                         "source": {"repo": repo, "commit": commit, "path": rec["doc_path"],
                                    "line": r["line"]}})
    sys.path.insert(0, str(HERE.parents[2]))
    from opdb.soc import product_socs

    code = _code_lists()
    manual = {(m["api"], m["param"], m["line"]): m["cpp"] for m in json.loads(
        (HERE / "soc_dtypes_review.json").read_text())["confirmed"]}
    kept, rejected = [], []
    for r in rows:
        why = review(r, code, manual, product_socs) if r.get("nested") else None
        if why is None:
            kept.append(r)
        else:
            rejected.append({**r, "why": why})
    write_rows(kept, args.o)
    write_rows(rejected, args.o.with_name(args.o.stem + "_rejected.jsonl"))
    nested = sum(1 for r in rows if r.get("nested"))
    print(f"{len(kept)} restrictions for {len({r['api'] for r in kept})} APIs -> {args.o}; "
          f"nested bullets: {nested} read, {nested - len(rejected)} confirmed by the C++, "
          f"{len(rejected)} rejected")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
