"""The five formats of a log report (log.json, log.md, log.html, log.csv, log.xlsx), rendered
from its JSON dict alone with opscan's report conventions: canonical sorted JSON, templates
under templates/report/, byte-identical XLSX, atomic writes that refuse to overwrite
without --force (analyzer.report.writer.write_outputs)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from analyzer.logscan.model import validate_log_report

CSV_COLUMNS = ("op", "kind", "count", "dtypes", "kernel_keys", "backends", "first", "line", "shape",
               "scan")
FORMATS = ("md", "html", "csv", "xlsx", "json")


def render_json(r: dict) -> str:
    return json.dumps(r, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def scan_status(r: dict) -> dict[str, str]:
    """op -> its join status (`confirmed`, `missed`, `blacklisted`, `unmatched`); {} without a scan."""
    j = r.get("join")
    if not j:
        return {}
    out = {}
    for m in j["missed"]:
        out[m.split(" ", 1)[0]] = "missed by the scan"
    for b in j["blacklisted"]:
        out[b] = "blacklisted"
    for u in j["unmatched"]:
        out[u.split(" ", 1)[0]] = "no scan op (CANN name)"
    for o in r["ops"]:
        out.setdefault(o["op"], "predicted by the scan")
    return out


def rows(r: dict) -> list[dict]:
    st = scan_status(r)
    return [{"op": o["op"], "kind": o["kind"], "count": o["count"],
             "dtypes": "; ".join(o["dtypes"]), "kernel_keys": "; ".join(o["keys"]),
             "backends": "; ".join(o["backends"]), "first": o["first"], "line": o["line"],
             "shape": o["shape"], "scan": st.get(o["op"], "")} for o in r["ops"]]


def render_csv(r: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
    w.writeheader()
    w.writerows(rows(r))
    return buf.getvalue()


def _render_template(r: dict, name: str, autoescape: bool) -> str:
    from analyzer.report import common

    env = common.template_env(autoescape=autoescape)
    if not autoescape:
        from analyzer.report.markdown import md_cell, md_code, md_text

        env.filters.update(cell=md_cell, code=md_code, text=md_text)
    text = env.get_template(name).render(r=r, rows=rows(r), title=f"opscan log: {r['framework']}")
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def render_xlsx(r: dict) -> bytes:
    from analyzer.report.xlsx_lite import Sheet, Style, workbook_bytes

    summary, ops = Sheet("summary"), Sheet("ops")
    lines: list[tuple] = [("summary", r["summary"]), ("framework", r["framework"]),
                          ("tool", r["tool"]), ("schema_version", r["schema_version"]), (),
                          ("file", "lines", "bytes", "gzip", "hits", "note")]
    lines += [(f["path"], f["lines"], f["bytes"], "yes" if f["gzip"] else "no", f["hits"], f["note"])
              for f in r["files"]]
    j = r.get("join")
    if j:
        lines += [(), ("scan", j["scan"]), ("target", j["target"])]
        for k in ("confirmed", "not_hit", "missed", "blacklisted", "unmatched"):
            lines += [(k.replace("_", " "), x) for x in j[k]]
    lines += [(), ("notes",)] + [("", n) for n in r["notes"]]
    for i, row in enumerate(lines, 1):
        for c, v in enumerate(row, 1):
            summary.put(i, c, v)
    bold = Style(bold=True)
    for c, name in enumerate(CSV_COLUMNS, 1):
        ops.put(1, c, name, bold)
    for i, row in enumerate(rows(r), 2):
        for c, name in enumerate(CSV_COLUMNS, 1):
            ops.put(i, c, row[name])
    return workbook_bytes([summary, ops], r["tool"], f"opscan log: {r['framework']}")


RENDER = {
    "json": ("log.json", lambda r: render_json(r).encode("utf-8")),
    "md": ("log.md", lambda r: _render_template(r, "log.md.j2", False).encode("utf-8")),
    "html": ("log.html", lambda r: _render_template(r, "log.html.j2", True).encode("utf-8")),
    "csv": ("log.csv", lambda r: render_csv(r).encode("utf-8")),
    "xlsx": ("log.xlsx", render_xlsx),
}


def write_log_reports(report: dict, outdir, formats=FORMATS, force: bool = False) -> list[Path]:
    """Render every format in memory, then write them atomically (nothing on refusal)."""
    from analyzer.report.writer import check_formats, write_outputs

    r = validate_log_report(report)
    formats = check_formats(formats)
    out = Path(outdir)
    return write_outputs(out, [(out / RENDER[f][0], RENDER[f][1](r)) for f in formats], force)
