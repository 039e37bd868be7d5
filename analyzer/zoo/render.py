"""Render a zoo `Backlog` as zoo.{json,md,html,csv,xlsx}: the same five formats as a scan.

zoo.json is the complete record (schema `opscan-zoo` 1); the csv is the backlog table (all
targets); the xlsx has one sheet per table; the html has the backlog and a models x ops
heat map. No wall-clock figure enters these files, so the same results give the same bytes
(run times and peak RSS go to zoo-run.json, written beside them).
"""
from __future__ import annotations

import csv
import io
import json

ZOO_SCHEMA_VERSION = 1
FORMATS = ("md", "html", "csv", "xlsx", "json")


def _records(df) -> list[dict]:
    if df is None:
        return []
    out = []
    for rec in df.to_dict(orient="records"):
        out.append({k: (round(v, 3) if isinstance(v, float) else
                        (v.item() if hasattr(v, "item") else v)) for k, v in rec.items()})
    return out


def _matrix_json(matrix: dict) -> dict:
    out = {}
    for target, mat in matrix.items():
        cols = [str(c) for c in mat.columns]
        rows = [{"model": str(m), "calls_per_step": [round(float(x), 3) for x in mat.loc[m].tolist()]}
                for m in mat.index] if len(cols) else [{"model": str(m), "calls_per_step": []}
                                                        for m in mat.index]
        out[target] = {"ops": cols, "rows": rows}
    return out


def zoo_json(bl, meta: dict) -> dict:
    return {"schema": "opscan-zoo", "schema_version": ZOO_SCHEMA_VERSION, **meta,
            "summary": summary_lines(bl), "targets": _records(bl.targets),
            "models": _records(bl.models), "backlog": _records(bl.backlog),
            "matrix": _matrix_json(bl.matrix), "releases": _records(bl.releases)}


def summary_lines(bl) -> list[str]:
    lines = []
    for t in _records(bl.targets):
        sub = bl.backlog[bl.backlog["target"] == t["target"]]
        head = (f"{t['target']}: {t['fully_npu_resident']}/{t['models']} models fully "
                f"NPU-resident; {len(sub)} gap ops")
        if len(sub):
            first = sub.iloc[0]
            head += (f"; write first: {first['op']} ({first['models_affected']} models, "
                     f"completes {first['completes']})")
        failed = t["models"] - t["scanned"]
        if failed:
            head += f"; {failed} models not scanned (see models)"
        lines.append(head)
    return lines


def render_csv(doc: dict) -> str:
    from analyzer.zoo.backlog import BACKLOG_COLUMNS

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=BACKLOG_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in doc["backlog"]:
        w.writerow(row)
    return buf.getvalue()


def _heat(value: float, top: float) -> str:
    if value <= 0 or top <= 0:
        return "#ffffff"
    frac = min(1.0, value / top) ** 0.5
    g = int(235 - 160 * frac)
    return f"#ff{g:02x}{g:02x}"


def _view(doc: dict) -> dict:
    heat = []
    for target, m in doc["matrix"].items():
        top = max((v for r in m["rows"] for v in r["calls_per_step"]), default=0.0)
        heat.append({"target": target, "ops": m["ops"],
                     "rows": [{"model": r["model"],
                               "cells": [{"value": (f"{v:g}" if v else ""), "color": _heat(v, top)}
                                         for v in r["calls_per_step"]]} for r in m["rows"]]})
    return {**doc, "heat": heat}


def _env(autoescape: bool):
    from analyzer.report.common import template_env

    return template_env(autoescape)


def render_md(doc: dict) -> str:
    return _env(False).get_template("zoo.md.j2").render(z=_view(doc))


def render_html(doc: dict) -> str:
    return _env(True).get_template("zoo.html.j2").render(z=_view(doc))


def render_xlsx(doc: dict) -> bytes:
    from analyzer.report.xlsx_lite import Sheet, Style, workbook_bytes
    from analyzer.zoo.backlog import BACKLOG_COLUMNS, MODEL_COLUMNS

    sheets: list[Sheet] = []
    bold = Style(bold=True)

    def sheet(title: str, rows: list[dict], columns: list[str] | None = None) -> Sheet:
        ws = Sheet(title[:31])
        sheets.append(ws)
        cols = columns or (list(rows[0]) if rows else [])
        for c, name in enumerate(cols, 1):
            ws.put(1, c, name, bold)
        for r, row in enumerate(rows, 2):
            for c, name in enumerate(cols, 1):
                ws.put(r, c, row.get(name))
        ws.freeze = (2, 2)
        return ws

    sheet("backlog", doc["backlog"], BACKLOG_COLUMNS)
    sheet("models", doc["models"], MODEL_COLUMNS)
    view = _view(doc)
    for i, h in enumerate(view["heat"], 1):
        ws = sheet("matrix" if len(view["heat"]) == 1 else f"matrix {i}", [], ["model", *h["ops"]])
        for r, row in enumerate(h["rows"], 2):
            ws.put(r, 1, row["model"])
            for c, cell in enumerate(row["cells"], 2):
                if cell["value"]:
                    ws.put(r, c, float(cell["value"]), Style(fill=cell["color"].lstrip("#")))
    if doc["releases"]:
        sheet("releases", doc["releases"])
    sheet("targets", doc["targets"])
    return workbook_bytes(sheets, doc.get("tool", "opscan"), "opscan zoo backlog")


def render_all(doc: dict, formats=FORMATS) -> dict[str, bytes]:
    out = {}
    for f in formats:
        if f == "json":
            out["zoo.json"] = (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
                               + "\n").encode()
        elif f == "md":
            out["zoo.md"] = render_md(doc).encode()
        elif f == "html":
            out["zoo.html"] = render_html(doc).encode()
        elif f == "csv":
            out["zoo.csv"] = render_csv(doc).encode()
        elif f == "xlsx":
            out["zoo.xlsx"] = render_xlsx(doc)
    return out
