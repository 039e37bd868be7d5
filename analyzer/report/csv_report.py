"""report.csv: one row per verdict (op x dtypes), stable columns (`common.CSV_COLUMNS`),
list fields joined with '; '. `report_status` is 'complete' or 'PARTIAL: <error>' on every
row, so a partial scan stays visible after any filter; a partial scan with no verdicts
still gets one row carrying that status.

fallback_islands.csv (written with report.csv): the detail of the fallback groups, one row
per island (`common.ISLAND_COLUMNS`)."""
from __future__ import annotations

import csv
import io

from analyzer.report import common
from analyzer.report.json_report import normalize


def _join(xs) -> str:
    return "; ".join(str(x) for x in xs)


def verdict_row(v: dict, status: str) -> dict:
    """The CSV/XLSX row of one verdict, keyed by CSV_COLUMNS."""
    return {
        "op": v["op"], "category": v["category"], "dtypes": _join(v["dtypes"]),
        "calls": v["calls"], "setup_calls": v["setup_calls"], "phases": _join(v["phases"]), "modules": _join(v["modules"]),
        "sources": _join(v["sources"]), "aliases": _join(v["aliases"]),
        "missing_dtypes": _join(v["missing_dtypes"]), "cast_to": v["cast_to"],
        "decomposes_into": _join(v["decomposes_into"]), "drift": _join(v["drift"]),
        "known_failures": _join(v["known_failures"]),
        "candidates": _join(
            [common.candidate_text(c) + (f" [{c['opgen_command']}]" if c.get("opgen_command")
                                         else "") for c in v["candidates"]]),
        "adapter": v["adapter"], "evidence": _join(v["evidence"]), "action": v["action"],
        "report_status": status,
    }


def report_status(report: dict) -> str:
    if not report.get("partial"):
        return "complete"
    return "PARTIAL: " + " ".join((report.get("error") or "no error recorded").split())


def rows(report: dict) -> list[dict]:
    r = normalize(report)
    status = report_status(r)
    out = [verdict_row(v, status) for v in common.sorted_verdicts(r)]
    if not out and r.get("partial"):
        out.append({c: "" for c in common.CSV_COLUMNS} | {"report_status": status})
    return out


def render_csv(report: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=common.CSV_COLUMNS, lineterminator="\r\n")
    w.writeheader()
    w.writerows(rows(report))
    return buf.getvalue()


def island_rows(report: dict) -> list[dict]:
    """fallback_islands.csv / the xlsx detail sheet: every island of the last step under
    its group's line, groups in report order (most bytes first)."""
    r = normalize(report)
    status = report_status(r)
    out = []
    for g, members in common.island_groups(r):
        line = common.group_line(g)
        for n, i in members:
            out.append({"group": line, "island": n, "first_call": i["first_call"],
                        "module": i["module"], "ops": _join(i["ops"]), "calls": i["calls"],
                        "transfers": i["transfers"], "bytes": i["bytes"],
                        "report_status": status})
    return out


def render_islands_csv(report: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=common.ISLAND_COLUMNS, lineterminator="\r\n")
    w.writeheader()
    w.writerows(island_rows(report))
    return buf.getvalue()
