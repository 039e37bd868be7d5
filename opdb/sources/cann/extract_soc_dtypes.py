"""Extract per-product dtype restrictions of aclnn APIs from the CANN ops repositories'
docs into `aclnn_soc_dtypes.jsonl` (facts only: API, products, dtype names, doc path and
line; no doc text).

The docs state the restrictions as bullet lines after (or inside) the parameter table:
  - <term>Atlas 推理系列产品</term>、<term>Atlas 训练系列产品</term>：数据类型支持FLOAT、FLOAT16。
  - <term>Atlas 训练系列产品</term>：不支持BFLOAT16数据类型。
  - <term>Atlas A2 训练系列产品/...</term>：参数`indicesOut`的数据类型不支持INT64，
The first form is an allow-list for the products named, the second and third deny-lists. A doc that
documents several APIs (`aclnnAdd&aclnnInplaceAdd.md`) applies its lines to each of them.
Which doc belongs to which API comes from `aclnn_apis.jsonl` (`doc_path`, `doc_repo`).

    python opdb/sources/cann/extract_soc_dtypes.py --mirror-root DIR

DIR holds `owner+name/repo` bare git mirrors (hicann/ops-nn, ops-math, ops-cv,
ops-transformer, mirror-cann/ops-transformer). Standard library only.
"""
from __future__ import annotations

import argparse
import re
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


def _dtypes(text: str) -> list[str]:
    return [d for d in re.split(r"[、，,\s]+", text.strip()) if re.fullmatch(DTYPE, d)]


def restrictions(text: str) -> list[dict]:
    """Every restriction line of one doc: {line, products, allow|deny, param}."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        m = TERMS.match(line)
        if not m:
            continue
        products = [p.strip() for p in TERM.findall(m.group(1))]
        rest = m.group(2).strip()
        a, d = ALLOW.match(rest), DENY.match(rest) or DENY_OF.match(rest)
        if a:
            out.append({"line": no, "products": products, "allow": _dtypes(a.group(2)),
                        "param": a.group(1) or None})
        elif d:
            out.append({"line": no, "products": products, "deny": _dtypes(d.group(2)),
                        "param": d.group(1) or None})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_soc_dtypes.jsonl")
    args = ap.parse_args(argv)
    from api_docs import iter_api_docs, write_rows  # the sibling module: these run as scripts

    rows = []
    for rec, repo, commit, doc in iter_api_docs(args.mirror_root):
        for r in restrictions(doc):
            rows.append({"api": rec["api"], **{k: r[k] for k in ("products", "allow", "deny",
                                                                  "param") if k in r},
                         "source": {"repo": repo, "commit": commit, "path": rec["doc_path"],
                                    "line": r["line"]}})
    write_rows(rows, args.o)
    print(f"{len(rows)} restrictions for {len({r['api'] for r in rows})} APIs -> {args.o}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
