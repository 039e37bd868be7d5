"""report.xlsx (openpyxl): sheets "summary", "gaps" (gap categories only), "all ops" and
"fallback islands" (one row per island under its group's line),
byte-identical for the same report: document properties get a fixed date and the zip
entries a fixed timestamp (openpyxl stamps both with the wall clock)."""
from __future__ import annotations

import datetime
import io
import zipfile

from analyzer.report import common
from analyzer.report.csv_report import island_rows, report_status, verdict_row
from analyzer.report.json_report import normalize

# No date in a report.json is the scan's own; a constant keeps the bytes reproducible.
FIXED_DATE = datetime.datetime(2000, 1, 1, 0, 0, 0)
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _fill(color: str):
    from openpyxl.styles import PatternFill

    return PatternFill("solid", start_color=color.lstrip("#"), end_color=color.lstrip("#"))


def _put(ws, row: int, col: int, value):
    """Write a cell; text starting with '=' stays text (openpyxl would make it a formula)."""
    c = ws.cell(row=row, column=col, value=value)
    if isinstance(value, str) and value.startswith("="):
        c.data_type = "s"
    return c


def _table_sheet(ws, report: dict, verdicts: list[dict], banner: str) -> None:
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    start = 1
    if banner:
        ws.cell(row=1, column=1, value=banner).font = Font(bold=True, color="B00020")
        start = 3
    for col, name in enumerate(common.CSV_COLUMNS, 1):
        c = ws.cell(row=start, column=col, value=name)
        c.font = Font(bold=True)
    status = report_status(report)
    for i, v in enumerate(verdicts, start + 1):
        row = verdict_row(v, status)
        for col, name in enumerate(common.CSV_COLUMNS, 1):
            _put(ws, i, col, row[name])
        cat = ws.cell(row=i, column=common.CSV_COLUMNS.index("category") + 1)
        cat.fill = _fill(common.CATEGORY_COLORS.get(v["category"], "#9e9e9e"))
        cat.font = Font(color="FFFFFF", bold=True)
    widths = {"op": 40, "category": 16, "dtypes": 18, "calls": 7, "evidence": 70, "action": 50,
              "modules": 24, "sources": 28, "candidates": 40}
    for col, name in enumerate(common.CSV_COLUMNS, 1):
        ws.column_dimensions[get_column_letter(col)].width = widths.get(name, 16)
    ws.freeze_panes = ws.cell(row=start + 1, column=2)
    if verdicts:
        last = get_column_letter(len(common.CSV_COLUMNS))
        ws.auto_filter.ref = f"A{start}:{last}{start + len(verdicts)}"


def _summary_sheet(ws, r: dict, banner: str) -> None:
    from openpyxl.styles import Font

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
    for i, row in enumerate(rows, 1):
        for col, value in enumerate(row, 1):
            _put(ws, i, col, value)
    bold = Font(bold=True)
    if banner:
        ws["A1"].font = Font(bold=True, color="B00020")
    for row in ws.iter_rows():
        if row and row[0].value in ("category", "fallback (per step)", "notes", "opdb", "blacklist"):
            for c in row:
                c.font = bold
    for i, (cat, _ops, _calls) in enumerate(common.count_rows(r), head_row + 1):
        if cat in common.CATEGORY_COLORS:
            ws.cell(row=i, column=1).fill = _fill(common.CATEGORY_COLORS[cat])
            ws.cell(row=i, column=1).font = Font(color="FFFFFF", bold=True)
    ws.column_dimensions["A"].width = 22
    ws.column_dimensions["B"].width = 90
    for col in "CDE":
        ws.column_dimensions[col].width = 12


def _islands_sheet(ws, r: dict, banner: str) -> None:
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    start = 1
    if banner:
        ws.cell(row=1, column=1, value=banner).font = Font(bold=True, color="B00020")
        start = 3
    for col, name in enumerate(common.ISLAND_COLUMNS, 1):
        ws.cell(row=start, column=col, value=name).font = Font(bold=True)
    rows = island_rows(r)
    for i, row in enumerate(rows, start + 1):
        for col, name in enumerate(common.ISLAND_COLUMNS, 1):
            _put(ws, i, col, row[name])
    widths = {"group": 60, "module": 28, "ops": 40}
    for col, name in enumerate(common.ISLAND_COLUMNS, 1):
        ws.column_dimensions[get_column_letter(col)].width = widths.get(name, 12)
    ws.freeze_panes = ws.cell(row=start + 1, column=2)
    if rows:
        last = get_column_letter(len(common.ISLAND_COLUMNS))
        ws.auto_filter.ref = f"A{start}:{last}{start + len(rows)}"


def render_xlsx(report: dict) -> bytes:
    from openpyxl import Workbook

    r = normalize(report)
    banner = common.partial_banner(r)
    wb = Workbook()
    ws = wb.active
    ws.title = "summary"
    _summary_sheet(ws, r, banner)
    _table_sheet(wb.create_sheet("gaps"), r, common.gaps(r), banner)
    _table_sheet(wb.create_sheet("all ops"), r, common.sorted_verdicts(r), banner)
    _islands_sheet(wb.create_sheet("fallback islands"), r, banner)
    return save_deterministic(wb, r["tool"], common.title(r))


def save_deterministic(wb, creator: str, title: str) -> bytes:
    """The workbook's bytes with fixed document dates and zip timestamps."""
    from openpyxl.xml.functions import tostring

    wb.properties.creator = creator
    wb.properties.title = title
    wb.properties.created = FIXED_DATE
    wb.properties.modified = FIXED_DATE
    raw = io.BytesIO()
    wb.save(raw)  # stamps properties.modified with now(): core.xml is rewritten below
    wb.properties.modified = FIXED_DATE
    core = tostring(wb.properties.to_tree())
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = core if info.filename == "docProps/core.xml" else zin.read(info.filename)
            fixed = zipfile.ZipInfo(info.filename, date_time=_ZIP_DATE)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            zout.writestr(fixed, data)
    return out.getvalue()
