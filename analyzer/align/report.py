"""The five formats of an `opscan align compare` result, rendered from its JSON dict
(report.json alone regenerates every format). Verdict columns: `floor` (error vs k x the
float64 noise floor) and `mean_1pct` (the guide's module mean criterion)."""
from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
from pathlib import Path

from opdb.errors import OpscanError

FORMATS = ("md", "html", "csv", "xlsx", "json")
COLUMNS = ("order", "key", "kind", "phase", "dtype_a", "dtype_b", "err", "threshold", "floor",
           "floor_verdict", "mean_1pct", "norm_a", "norm_b", "mean_a", "mean_b")


def _g(x) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isinf(x):
            return "inf"
        return f"{x:.4g}"
    return str(x)


def row_cells(r: dict) -> dict:
    return {"order": r["order"], "key": r["key"], "kind": r["kind"], "phase": r["phase"],
            "dtype_a": r["dtype_a"] or "", "dtype_b": r["dtype_b"] or "", "err": _g(r["err"]),
            "threshold": _g(r["threshold"]), "floor": _g(r["floor"]), "floor_verdict": r["status"],
            "mean_1pct": {True: "pass", False: "fail", None: ""}[r["mean_ok"]],
            "norm_a": _g(r["norm_a"]), "norm_b": _g(r["norm_b"]),
            "mean_a": _g(r["mean_a"]), "mean_b": _g(r["mean_b"])}


def _criteria_lines(rep: dict) -> list[tuple[str, str, str]]:
    c = rep["counts"]
    loss = rep.get("loss") or {}
    out = [("calls (modules, ops) within k x their float64 noise floor",
            f"{c['calls'] - c['failed']}/{c['calls']}", "pass" if not c["failed"] else "fail"),
           ("module forward/backward mean within 1%", f"{c['mean_criterion_failed']} call(s) outside",
            "pass" if not c["mean_criterion_failed"] else "fail")]
    if loss.get("relative"):
        out.append(("single step loss within 5%", f"{loss['relative'][0]:.3g}",
                    "pass" if loss["step0_within_5pct"] else "fail"))
    if loss.get("steps", 0) > 1:
        out.append(("multi-step mean relative error under 2%", f"{loss['mean_relative_error']:.3g}",
                    "pass" if loss["mean_within_2pct"] else "fail"))
    return out


def render_json(rep: dict) -> bytes:
    return (json.dumps(rep, indent=1, sort_keys=True) + "\n").encode("utf-8")


def render_csv(rep: dict) -> bytes:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rep["rows"]:
        w.writerow(row_cells(r))
    return buf.getvalue().encode("utf-8")


def _trial(s: dict) -> str:
    """A suspect's CUSTOM_DEVICE_BLACK_LIST trial as opscan blacklist judged it ("" for torch)."""
    bl = s.get("blacklist") or {}
    if not bl:
        return ""
    if bl.get("status") == "trial":
        return bl.get("export", "")
    return f"{bl.get('status')}: {bl.get('reason', '')}"


def _md_table(headers, rows) -> list[str]:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


def render_md(rep: dict) -> bytes:
    L = ["# opscan align compare", "", rep["summary"], "",
         f"- A: `{rep['a']}` {json.dumps(rep['run_a'], sort_keys=True)}",
         f"- B: `{rep['b']}` {json.dumps(rep['run_b'], sort_keys=True)}",
         f"- noise floor: {rep['floor_source']}", ""]
    L += ["## Criteria", ""] + _md_table(("criterion", "value", "verdict"), _criteria_lines(rep)) + [""]
    if rep["descent"]:
        L += ["## Where the runs part ways", ""] + [f"{i}. {d}" for i, d in enumerate(rep["descent"], 1)] + [""]
    if rep["suspects"]:
        L += ["## Suspect ops", ""]
        L += _md_table(("rank", "op", "call", "error", "threshold", "opscan verdict", "action", "blacklist trial"),
                       [(s["rank"], s["op"], s["key"], _g(s["err"]), _g(s["threshold"]),
                         s["verdict"].get("category", ""), s["verdict"].get("action", ""), _trial(s))
                        for s in rep["suspects"]]) + [""]
    if rep.get("repro"):
        L += [f"Single-op repro: `{rep['repro']}`", ""]
    if rep["next_steps"]:
        L += ["## Next steps", ""] + [f"- {s}" for s in rep["next_steps"]] + [""]
    if rep["notes"]:
        L += ["## Notes", ""] + [f"- {n}" for n in rep["notes"]] + [""]
    bad = [r for r in rep["rows"] if r["status"] != "pass"]
    L += [f"## Calls not passing ({len(bad)} of {len(rep['rows'])})", ""]
    L += _md_table(COLUMNS, [[row_cells(r)[c] for c in COLUMNS] for r in bad]) + [""]
    return "\n".join(L).encode("utf-8")


def loss_png(rep: dict) -> bytes | None:
    """Loss curves side by side (matplotlib, the `align` extra); None without losses."""
    a, b = rep.get("losses_a") or [], rep.get("losses_b") or []
    if not any(x is not None for x in a + b):
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6, 3), dpi=80)
    ax.plot(range(len(a)), a, "o-", label="A")
    ax.plot(range(len(b)), b, "s--", label="B")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _color(r: dict) -> str:
    if r["status"] != "pass" and r["status"] != "fail":
        return "#bdbdbd"
    if r["err"] is None or not r["threshold"]:
        return "#c8e6c9"
    ratio = r["err"] / r["threshold"]
    if ratio > 1:
        return "#ef9a9a"
    if ratio > 0.5:
        return "#fff59d"
    return "#c8e6c9"


def _tree(rep: dict) -> str:
    mods = [r for r in rep["rows"] if r["kind"] == "module" and r["phase"] == "forward"]
    kids: dict = {}
    for r in mods:
        kids.setdefault(r["parent"], []).append(r)
    origin = (rep.get("origin") or {}).get("key")

    def node(r) -> str:
        mark = " <b>&larr; runs part ways here</b>" if r["key"] == origin else ""
        inner = "".join(node(c) for c in kids.get(r["key"], []))
        sub = f"<ul>{inner}</ul>" if inner else ""
        return (f'<li><span class="m" style="background:{_color(r)}">{html.escape(r["key"])}</span> '
                f'err {_g(r["err"])} / {_g(r["threshold"])}{mark}{sub}</li>')
    return "<ul class='tree'>" + "".join(node(r) for r in kids.get(None, [])) + "</ul>"


def render_html(rep: dict) -> bytes:
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>opscan align compare</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}.m{padding:0 4px}"
             ".tree li{list-style:none}.pass{background:#c8e6c9}.fail{background:#ef9a9a}</style></head><body>",
             "<h1>opscan align compare</h1>", f"<p><b>{e(rep['summary'])}</b></p>",
             f"<p>A: {e(rep['a'])} {e(json.dumps(rep['run_a'], sort_keys=True))}<br>"
             f"B: {e(rep['b'])} {e(json.dumps(rep['run_b'], sort_keys=True))}<br>"
             f"noise floor: {e(rep['floor_source'])}</p>", "<h2>Criteria</h2><table>"]
    parts += [f"<tr><td>{e(a)}</td><td>{e(b)}</td><td class='{c}'>{c}</td></tr>" for a, b, c in _criteria_lines(rep)]
    parts.append("</table>")
    if rep["descent"]:
        parts.append("<h2>Where the runs part ways</h2><ol>" +
                     "".join(f"<li>{e(d)}</li>" for d in rep["descent"]) + "</ol>")
    if rep["suspects"]:
        parts.append("<h2>Suspect ops</h2><table><tr><th>rank</th><th>op</th><th>call</th><th>error</th>"
                     "<th>opscan verdict</th><th>action</th><th>blacklist trial</th></tr>")
        parts += [f"<tr><td>{s['rank']}</td><td>{e(s['op'])}</td><td>{e(s['key'])}</td><td>{_g(s['err'])}</td>"
                  f"<td>{e(s['verdict'].get('category', ''))}</td><td>{e(s['verdict'].get('action', ''))}</td>"
                  f"<td>{e(_trial(s))}</td></tr>"
                  for s in rep["suspects"]]
        parts.append("</table>")
    png = loss_png(rep)
    if png:
        parts.append("<h2>Loss</h2><img alt='loss curves A and B' src='data:image/png;base64,"
                     + base64.b64encode(png).decode() + "'>")
    parts.append("<h2>Module tree (forward, coloured by error / threshold)</h2>" + _tree(rep))
    for title, items in (("Next steps", rep["next_steps"]), ("Notes", rep["notes"])):
        if items:
            parts.append(f"<h2>{title}</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in items) + "</ul>")
    parts.append("<h2>All calls</h2><table><tr>" + "".join(f"<th>{c}</th>" for c in COLUMNS) + "</tr>")
    for r in rep["rows"]:
        cells = row_cells(r)
        parts.append("<tr>" + "".join((f"<td class='{e(cells[c])}'>{e(str(cells[c]))}</td>"
                                       if c == "floor_verdict" else f"<td>{e(str(cells[c]))}</td>")
                                      for c in COLUMNS) + "</tr>")
    parts.append("</table></body></html>\n")
    return "".join(parts).encode("utf-8")


def render_xlsx(rep: dict) -> bytes:
    from analyzer.report.xlsx_lite import Sheet, Style, workbook_bytes

    ws, calls = Sheet("summary"), Sheet("calls")
    rows = [("summary", rep["summary"]), ("A", rep["a"]), ("B", rep["b"]),
            ("noise floor", rep["floor_source"]), (), ("criterion", "value", "verdict")]
    rows += _criteria_lines(rep)
    rows += [(), ("where the runs part ways",)] + [("", d) for d in rep["descent"]]
    rows += [(), ("suspect op", "call", "error", "opscan verdict", "action")]
    rows += [(s["op"], s["key"], _g(s["err"]), s["verdict"].get("category", ""), s["verdict"].get("action", ""))
             for s in rep["suspects"]]
    for i, row in enumerate(rows, 1):
        for j, v in enumerate(row, 1):
            ws.put(i, j, v)
    ws.widths.update({1: 50, 2: 60})
    bold = Style(bold=True)
    for j, name in enumerate(COLUMNS, 1):
        calls.put(1, j, name, bold)
    fills = {"pass": Style(fill="C8E6C9"), "fail": Style(fill="EF9A9A")}
    for i, r in enumerate(rep["rows"], 2):
        cells = row_cells(r)
        for j, name in enumerate(COLUMNS, 1):
            style = fills.get(cells[name]) if name in ("floor_verdict", "mean_1pct") else None
            calls.put(i, j, cells[name], style or Style())
    calls.freeze = (2, 3)
    calls.widths[2] = 55
    return workbook_bytes([ws, calls], "opscan align", "opscan align compare")


RENDER = {"md": ("align.md", render_md), "html": ("align.html", render_html),
          "csv": ("align.csv", render_csv), "xlsx": ("align.xlsx", render_xlsx),
          "json": ("align.json", render_json)}


def check_formats(formats) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    bad = [f for f in formats if f not in RENDER]
    if bad or not formats:
        raise OpscanError(f"--format: unknown report format {', '.join(bad) or '(none)'}",
                          hint=f"use one or more of: {','.join(FORMATS)}")
    return tuple(dict.fromkeys(formats))


def check_targets(outdir: Path, formats, force: bool) -> list[Path]:
    """The report paths for `formats`, after every refusal writing them would make
    (opdb.fsio.check_files: a file in the way, an existing report without --force, a
    directory where a report goes)."""
    from opdb.fsio import check_files

    names = [RENDER[f][0] for f in check_formats(formats)]
    check_files(outdir, names, force, "-o/--output")
    return [Path(outdir) / n for n in names]


def write_reports(rep: dict, outdir, formats=FORMATS, force: bool = False) -> list[Path]:
    """Render every format in memory first, then write them as one set (opdb.fsio)."""
    from analyzer.report.writer import write_outputs

    formats = check_formats(formats)
    paths = check_targets(outdir, formats, force)
    rendered = [(p, RENDER[f][1](rep)) for p, f in zip(paths, formats)]
    return write_outputs(Path(outdir), rendered, force)
