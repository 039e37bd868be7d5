"""Extract which aclnn parameters must have the dtype of another one from the CANN ops
repositories' docs into `aclnn_dtype_ties.jsonl` (facts only: API, parameter, the
parameter it follows, doc path and line; no doc text).

The docs' parameter tables give a tied parameter's dtype as a reference to another row:
  <td>mRef（aclTensor*）</td> ... <td>与“varRef”参数一致。</td>   (数据类型 column)
(aclnnApplyAdamWV2: varRef, mRef, vRef, grad in one dtype). A doc that documents several
APIs applies its rows to each API that has both parameters. Which doc belongs to which API
comes from `aclnn_apis.jsonl` (`doc_path`, `doc_repo`), as for extract_soc_dtypes.py.

    python opdb/sources/cann/extract_dtype_ties.py --mirror-root DIR

Standard library only.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
CELL = re.compile(r"<t([dh])[^>]*>(.*?)</t[dh]>", re.S)
NAME = re.compile(r"^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*[（(]")
TIE = re.compile(r"^\s*与\s*(?:输入)?\s*[“\"`]?([A-Za-z_][A-Za-z0-9_]*)[”\"`]?\s*(?:参数)?(?:的数据类型)?\s*(?:保持)?一致")


def ties(text: str) -> list[dict]:
    """Every tie of one doc: {line, param, same_as} from tables whose header has a
    数据类型 column."""
    out = []
    dtype_col = None
    for m in re.finditer(r"<tr[^>]*>(.*?)</tr>", text, re.S):
        cells = CELL.findall(m.group(1))
        if cells and all(kind == "h" for kind, _ in cells):
            heads = [re.sub(r"<[^>]+>", "", c).strip() for _, c in cells]
            dtype_col = heads.index("数据类型") if "数据类型" in heads else None
            continue
        if dtype_col is None or len(cells) <= dtype_col:
            continue
        name = NAME.match(re.sub(r"<[^>]+>", "", cells[0][1]))
        tie = TIE.match(re.sub(r"<[^>]+>", "", cells[dtype_col][1]))
        if name and tie and name.group(1) != tie.group(1):
            out.append({"line": text.count("\n", 0, m.start()) + 1, "param": name.group(1),
                        "same_as": tie.group(1)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_dtype_ties.jsonl")
    args = ap.parse_args(argv)
    from api_docs import iter_api_docs, write_rows  # the sibling module: these run as scripts

    rows = []
    for rec, repo, commit, doc in iter_api_docs(args.mirror_root):
        names = {p["name"] for p in rec.get("params", [])}
        seen = set()
        for t in ties(doc):
            if t["param"] in names and t["same_as"] in names and t["param"] not in seen:
                seen.add(t["param"])
                rows.append({"api": rec["api"], "param": t["param"], "same_as": t["same_as"],
                             "source": {"repo": repo, "commit": commit, "path": rec["doc_path"],
                                        "line": t["line"]}})
    write_rows(rows, args.o)
    print(f"{len(rows)} ties for {len({r['api'] for r in rows})} APIs -> {args.o}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
