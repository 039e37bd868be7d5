"""report.xlsx: sheets "summary", "gaps" (gap categories only), "all ops" and
"fallback islands" (one row per island under its group's line), written by
`analyzer.report.xlsx_lite` (the one xlsx writer: `opscan log`, `opscan zoo` and `opscan
align compare` use it too), byte-identical for the same report."""
from __future__ import annotations


from analyzer.report import common
from analyzer.report.csv_report import island_rows, report_status, verdict_row
from analyzer.report.json_report import normalize
from analyzer.report.xlsx_lite import Sheet, Style, column_letter, workbook_bytes

_BOLD = Style(bold=True)
_BANNER = Style(bold=True, color="B00020")


def _category_style(color: str) -> Style:
    return Style(bold=True, color="FFFFFF", fill=color.lstrip("#"))


def _table_sheet(ws: Sheet, report: dict, verdicts: list[dict], banner: str) -> None:
    start = 1
    if banner:
        ws.put(1, 1, banner, _BANNER)
        start = 3
    for col, name in enumerate(common.CSV_COLUMNS, 1):
        ws.put(start, col, name, _BOLD)
    status = report_status(report)
    cat_col = common.CSV_COLUMNS.index("category") + 1
    for i, v in enumerate(verdicts, start + 1):
        row = verdict_row(v, status)
        for col, name in enumerate(common.CSV_COLUMNS, 1):
            ws.put(i, col, row[name])
        ws.restyle(i, cat_col,
                   _category_style(common.CATEGORY_COLORS.get(v["category"], "#9e9e9e")))
    widths = {"op": 40, "category": 16, "dtypes": 18, "calls": 7, "evidence": 70, "action": 50,
              "modules": 24, "sources": 28, "candidates": 40}
    for col, name in enumerate(common.CSV_COLUMNS, 1):
        ws.widths[col] = widths.get(name, 16)
    ws.freeze = (start + 1, 2)
    if verdicts:
        last = column_letter(len(common.CSV_COLUMNS))
        ws.auto_filter = f"A{start}:{last}{start + len(verdicts)}"


def _summary_sheet(ws: Sheet, r: dict, banner: str) -> None:
    rows: list[tuple] = []
    if banner:
        rows += [(banner,), ()]
    rows += [("summary", r["summary"]), ("model", r["model"]),
             ("framework", f"{r['framework']} {r['framework_version']}".strip()),
             ("mode", r["mode"]), ("steps", r["steps"]), ("target", r["target"]),
             ("soc", r["soc"]), ("tool", r["tool"]), ("schema_version", r["schema_version"]),
             ("partial", "yes" if r["partial"] else "no"), ("error", r["error"]), (),
             ("category", "ops", "calls")]
    head_row = len(rows)
    rows += list(common.count_rows(r))
    rows += [(), ("fallback (per step)", "transfers", "bytes", "islands", "group"),
             ("total", r["fallback"]["transfers"], r["fallback"]["bytes"],
              len(r["fallback"]["islands"]))]
    rows += [(f"group {i}", g["transfers"], g["bytes"], g["islands"], common.group_line(g))
             for i, (g, _members) in enumerate(common.island_groups(r), 1)]
    bl = r.get("blacklist")
    if bl:
        rows += [(), ("blacklist", bl["summary"]), ("export", bl["export"])]
        rows += [(f"{n['name']}", f"{e['severity']} {e['reason']} ({', '.join(n['modes'])}): "
                  f"{e['detail']}", e["transfers"], e["bytes"])
                 for e in bl["entries"] for n in e["names"]]
        rows += [(f"refused {e['kernel']}", e["refusal"]) for e in bl["refused"]]
        rows += [(f"current '{c['token']}'", f"{c['status']}: {c['detail']}") for c in bl["current"]]
        rows += [("versions", bl["pairing"])] + [("", n) for n in bl["notes"]]
    rows += [(), ("notes",)] + [("", n) for n in r["notes"]]
    rows += [(), ("opdb",)] + [(k, v) for k, v in sorted(r["opdb"].items())]
    headings = ("category", "fallback (per step)", "notes", "opdb", "blacklist")
    width = max(map(len, rows))
    for i, row in enumerate(rows, 1):
        if row and row[0] in headings:  # the whole row bold, to the last used column
            for col in range(1, width + 1):
                ws.put(i, col, row[col - 1] if col <= len(row) else None, _BOLD)
            continue
        for col, value in enumerate(row, 1):
            ws.put(i, col, value)
    if banner:
        ws.restyle(1, 1, _BANNER)
    for i, (cat, _ops, _calls) in enumerate(common.count_rows(r), head_row + 1):
        if cat in common.CATEGORY_COLORS:
            ws.restyle(i, 1, _category_style(common.CATEGORY_COLORS[cat]))
    ws.widths.update({1: 22, 2: 90, 3: 12, 4: 12, 5: 12})


def _islands_sheet(ws: Sheet, r: dict, banner: str) -> None:
    start = 1
    if banner:
        ws.put(1, 1, banner, _BANNER)
        start = 3
    for col, name in enumerate(common.ISLAND_COLUMNS, 1):
        ws.put(start, col, name, _BOLD)
    rows = island_rows(r)
    for i, row in enumerate(rows, start + 1):
        for col, name in enumerate(common.ISLAND_COLUMNS, 1):
            ws.put(i, col, row[name])
    widths = {"group": 60, "module": 28, "ops": 40}
    for col, name in enumerate(common.ISLAND_COLUMNS, 1):
        ws.widths[col] = widths.get(name, 12)
    ws.freeze = (start + 1, 2)
    if rows:
        last = column_letter(len(common.ISLAND_COLUMNS))
        ws.auto_filter = f"A{start}:{last}{start + len(rows)}"


def render_xlsx(report: dict) -> bytes:
    """report.xlsx of a scan report (analyzer.report.xlsx_lite: no openpyxl)."""
    r = normalize(report)
    banner = common.partial_banner(r)
    sheets = [Sheet("summary"), Sheet("gaps"), Sheet("all ops"), Sheet("fallback islands")]
    _summary_sheet(sheets[0], r, banner)
    _table_sheet(sheets[1], r, common.gaps(r), banner)
    _table_sheet(sheets[2], r, common.sorted_verdicts(r), banner)
    _islands_sheet(sheets[3], r, banner)
    return workbook_bytes(sheets, r["tool"], common.title(r))
