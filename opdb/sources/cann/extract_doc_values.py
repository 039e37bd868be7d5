"""Extract, from the CANN ops repositories' aclnn docs, the value each number/bool/dtype
parameter takes for "not given" into `aclnn_doc_values.jsonl` (facts only: API, parameter,
C type, value, kind, a short matched phrase as evidence, doc path and line).

The docs' parameter tables say, for parameters the C API cannot leave out, which value
stands for "no such thing" or which value to pass when the caller has none:
  <td>dim（int64_t）</td> ... 传入1000表示不指定维度（展平模式…）   -> unset 1000
  <td>divisorOverride（int64_t）</td> ... 当值为0时，该属性不生效        -> unset 0
  <td>blockSize（int64_t）</td> ... 默认为0。                           -> default 0
  <td>useLocking（bool）</td> ... 仅支持传入false。                     -> only false
Three kinds, one row per (API, parameter, kind), the first statement of that kind in the
doc (by line):
  - `unset`: the value means "not given / none / no limit / no effect" (`V表示不…`,
    `V代表不使用`, `为V时…不生效`, `V(none)`, `ACL_DT_UNDEFINED`);
  - `default`: the doc's stated default or the value to pass when the caller specifies
    nothing (`默认为V`, `默认值：V`, `不特意指定时建议传入V`, `建议值为V`);
  - `only`: the only value the API accepts now (`仅支持传入V`, `必须传入V`).
A statement under a condition (a `…时`/`…场景`/`…情况下` before the value, other than the
parameter's own `为V时`) or whose phrase names another parameter is not read. The value is
written in the parameter's C type (`1.0` for a double, `false` for a bool); a value the
type cannot hold is dropped. Parameter rows are read from HTML tables (`<td>name（type）`),
markdown tables (`| name（type） |`) and old-style bullets (`- name（type，计算输入）：…`).
Which doc belongs to which API comes from `aclnn_apis.jsonl`, as for the other extracts.

    python opdb/sources/cann/extract_doc_values.py --mirror-root DIR

Standard library only.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# the C value types a doc value is written for (pointers and strings are not read)
INT_TYPES = {"int64_t", "int32_t", "int", "int8_t", "int16_t", "uint64_t", "uint32_t",
             "uint8_t", "size_t"}
FLOAT_TYPES = {"double", "float"}
VALUE_TYPES = INT_TYPES | FLOAT_TYPES | {"bool", "aclDataType"}

ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
CELL = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.S)
NAME = re.compile(r"^\s*\**`?([A-Za-z_][A-Za-z0-9_]*)`?\**\s*(?:[（(]|$)")
BULLET = re.compile(r"^(\s*)[-*]\s+\**`?([A-Za-z_][A-Za-z0-9_]*)`?\**\s*[（(](.*)$")

NUM = r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?"
VALUE = (rf"(?P<v>2\^63-1|2\^31-1|INT64_MAX|INT_MAX|ACL_DT_UNDEFINED|[Tt]rue|TRUE|[Ff]alse|FALSE"
         rf"|{NUM})")
END = r"(?![A-Za-z0-9_.^~/、])"  # the value ends here (not a fraction or the first of a range)
# ... and is no list's first member (`仅支持0（非量化）、2`, `仅支持0,1,2`, `32/64`, `16的整数倍`)
ALONE = (r"(?!\s*(?:[（(][^）)]*[）)])?\s*(?:[、/|~]|或|和|及|至|到|[,，]\s*-?\d)"
         r"|\s*(?:的|倍|个|次|位))")
SUBJECT = r"(?:当|若|如果)?\s*(?:该参数|此参数|参数)?(?:值|取值|配置|设置|传入)?"
# (not `UNDEFINED`: `28表示UNDEFINED` names one member of an enum of dtypes, and op-plugin
# passes 0, FLOAT, for aclnnGroupedMatmulSwigluQuantV2's unset `dequant_dtype`)
NEGATION = r"(?:不|无|未|非|任意|忽略|none\b|None\b|NONE\b|No\b)"
PATTERNS = [
    # unset: the value stands for "not given / none / no limit / no effect"
    ("unset", re.compile(rf"(?:传入|取值为|值为|设置为|配置为|为|传)?\s*{VALUE}{END}\s*时?\s*[，,]?\s*"
                         rf"(?:表示|代表|即表示|即)\s*(?:功能|该功能|此功能|该属性|该参数)?\s*{NEGATION}")),
    ("unset", re.compile(rf"[(（]\s*['\"]?(?:none|None|NONE)['\"]?\s*[,，]\s*{VALUE}{END}\s*[)）]")),
    ("unset", re.compile(rf"{VALUE}{END}\s*(?:[:：]|-?对应|\(|（)\s*['\"‘“]?(?:none|None|NONE)\b")),
    ("unset", re.compile(rf"{SUBJECT}为\s*{VALUE}{END}\s*时\s*[，,]?\s*(?:该属性|该参数|此参数|此属性)?"
                         rf"\s*(?:不生效|无效|不起作用)")),
    ("unset", re.compile(r"(?:为|传入|取值为)\s*(?P<v>ACL_DT_UNDEFINED)")),
    # only: the one value accepted now
    ("only", re.compile(rf"(?:仅|只)(?:支持|能)(?:默认值|传入|配置为|取值为|设置为|数值为|值为|传|输入|为|取)?"
                        rf"\s*{VALUE}{END}{ALONE}")),
    ("only", re.compile(rf"必须(?:传入|配置为|设置为|为)\s*{VALUE}{END}{ALONE}")),
    # default: the stated default / the value to pass when the caller has none
    ("default", re.compile(rf"默认(?:值)?(?:为|是|配置为|设置为|取)?\s*[:：]?\s*(?:[A-Za-z_]\w*\s*=\s*)?"
                           rf"{VALUE}{END}{ALONE}")),
    ("default", re.compile(rf"(?:不特意指定|未指定|不指定)时?(?:建议|可)?(?:传入|配置为|设置为)(?:默认值)?\s*"
                           rf"{VALUE}{END}{ALONE}")),
    ("default", re.compile(rf"建议(?:传入|值为|值|设置为|配置为|取值为)\s*{VALUE}{END}{ALONE}")),
]
# a condition before the value: the statement holds only in some case (or, for the value
# to pass, on some product: what a value means is not per product)
CONDITION = re.compile(r"时|场景|模式下|情况下")
PRODUCT = re.compile(r"产品")
# the value follows another (`0和1表示无TP域通信`): one member of a list
AFTER_ANOTHER = re.compile(r"\d\s*(?:和|、|或|及|/)\s*$")


def _plain(html: str) -> str:
    """Cell text with tags dropped; line breaks and list items become clause breaks."""
    html = re.sub(r"<br\s*/?>|</?li>|</?p>|</?ul>", "\n", html)
    return re.sub(r"<[^>]+>", "", html).replace("&nbsp;", " ")


def param_rows(text: str) -> list[tuple[int, str, str]]:
    """(doc line, parameter name, description text) of every parameter row: HTML table rows,
    markdown table rows and top-level bullets, in document order."""
    out = []
    for m in ROW.finditer(text):
        cells = CELL.findall(m.group(1))
        if len(cells) < 2:
            continue
        name = NAME.match(_plain(cells[0]).strip())
        if name:
            out.append((text.count("\n", 0, m.start()) + 1, name.group(1),
                        "\n".join(_plain(c) for c in cells[1:])))
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            name = NAME.match(_plain(cells[0])) if len(cells) > 1 else None
            if name and not set(cells[0]) <= set("-: "):
                out.append((i + 1, name.group(1), "\n".join(_plain(c) for c in cells[1:])))
            continue
        b = BULLET.match(line)
        if b:
            indent, body = len(b.group(1)), [b.group(3)]
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            out.append((i + 1, b.group(2), _plain("\n".join(body))))
    return sorted(out, key=lambda r: r[0])


def c_value(raw: str, ctype: str) -> str | None:
    """`raw` written as a literal of C type `ctype`, or None when the type cannot hold it."""
    t = re.sub(r"\bconst\b", "", ctype).strip()
    low = raw.lower()
    if t == "aclDataType":
        return "ACL_DT_UNDEFINED" if raw == "ACL_DT_UNDEFINED" else None
    if t == "bool":
        return low if low in ("true", "false") else None
    if low in ("true", "false", "acl_dt_undefined"):
        return None
    big = {"2^63-1": "9223372036854775807", "int64_max": "9223372036854775807",
           "2^31-1": "2147483647", "int_max": "2147483647"}
    if low in big:
        return big[low] if t in INT_TYPES else None
    if t in INT_TYPES:
        if not re.fullmatch(r"-?\d+", raw) or (t.startswith("u") or t == "size_t") and raw[0] == "-":
            return None
        return str(int(raw))
    if t in FLOAT_TYPES:
        return raw if re.search(r"[.eE]", raw) else raw + ".0"
    return None


def statements(name: str, desc: str, others: set[str], bool_type: bool = False
               ) -> list[tuple[str, str, str]]:
    """(kind, raw value, matched phrase and the next few characters) of one parameter
    row, the first per kind. A bool has no `unset` value."""
    found: dict[str, tuple[str, str, str]] = {}
    other = re.compile(r"(?<![A-Za-z0-9_])(?:%s)(?![A-Za-z0-9_])" % "|".join(
        re.escape(o) for o in sorted(others))) if others else None
    for clause in re.split(r"[。；;\n]", desc):
        for kind, pat in PATTERNS:
            if kind in found:
                continue
            for m in pat.finditer(clause):
                before = clause[:m.start()].replace(name, "")
                if CONDITION.search(before) or AFTER_ANOTHER.search(clause[:m.start("v")]) \
                        or (kind != "unset" and PRODUCT.search(before)) \
                        or (other is not None and other.search(m.group(0))):
                    continue  # under a condition, or about another parameter
                if kind == "unset" and re.search(r"[A-Za-z0-9_]$", before.rstrip()) \
                        and m.group(0).lstrip().startswith("为"):
                    continue  # `Q_S为1时`: the value is another quantity's
                if kind == "unset" and bool_type:
                    continue  # `false表示不转置` is the flag's meaning, not "not given"
                found[kind] = (kind, m.group("v"), clause[m.start():m.end() + 8].strip()[:40])
                break
    return list(found.values())


def doc_values(rec: dict, doc: str) -> list[dict]:
    """The rows one doc gives one API (`rec`: its catalog record)."""
    types = {p["name"]: re.sub(r"\bconst\b", "", p["type"]).strip() for p in rec.get("params", [])}
    out, seen = [], set()
    for line, name, desc in param_rows(doc):
        t = types.get(name)
        if t not in VALUE_TYPES:
            continue
        for kind, raw, phrase in statements(name, desc, set(types) - {name}, t == "bool"):
            value = c_value(raw, t)
            if value is None or (name, kind) in seen:
                continue
            seen.add((name, kind))
            out.append({"api": rec["api"], "param": name, "ctype": t, "value": value,
                        "kind": kind, "phrase": phrase, "line": line})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("-o", type=Path, default=HERE / "aclnn_doc_values.jsonl")
    args = ap.parse_args(argv)
    if not args.mirror_root.is_dir():
        print(f"error: {args.mirror_root} is not a directory (pass the folder holding the "
              "owner+name/repo mirrors)", file=sys.stderr)
        return 2
    from api_docs import iter_api_docs, write_rows  # the sibling module: these run as scripts

    rows = []
    for rec, repo, commit, doc in iter_api_docs(args.mirror_root):
        for r in doc_values(rec, doc):
            line = r.pop("line")
            r["source"] = {"repo": repo, "commit": commit, "path": rec["doc_path"], "line": line}
            rows.append(r)
    if not rows:
        print(f"error: no doc values read under {args.mirror_root} (are the mirrors there?)",
              file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r["api"], r["param"], r["kind"]))
    write_rows(rows, args.o)
    print(f"{len(rows)} values for {len({(r['api'], r['param']) for r in rows})} parameters of "
          f"{len({r['api'] for r in rows})} APIs -> {args.o}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
