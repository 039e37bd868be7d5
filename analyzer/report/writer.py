"""Write the report files of one scan from its JSON dict (report.json alone can regenerate
every format): validate, render all requested formats in memory, refuse to overwrite
unless forced, then write each file atomically (temp file in the same dir + os.replace)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from analyzer.report.csv_report import render_csv, render_islands_csv
from analyzer.report.html import render_html
from analyzer.report.json_report import render_json, validate
from analyzer.report.markdown import render_markdown
from analyzer.report.xlsx import render_xlsx
from opdb.errors import OpscanError, OutputExists

FORMATS = {
    "json": ("report.json", lambda r: render_json(r).encode("utf-8")),
    "md": ("report.md", lambda r: render_markdown(r).encode("utf-8")),
    "html": ("report.html", lambda r: render_html(r).encode("utf-8")),
    "csv": ("report.csv", lambda r: render_csv(r).encode("utf-8")),
    "xlsx": ("report.xlsx", render_xlsx),
}
# files a format writes besides its report.<fmt>
COMPANIONS = {
    "csv": (("fallback_islands.csv", lambda r: render_islands_csv(r).encode("utf-8")),),
}
DEFAULT_FORMATS = ("md", "html", "csv", "xlsx", "json")
DEFAULT_GRAPHML_NAME = "op_graph.graphml"


def check_formats(formats) -> tuple[str, ...]:
    """The formats (a sequence, or one comma-separated string like "md,html"), de-duplicated
    in order; OpscanError naming the allowed ones for anything else."""
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    if not formats:
        raise OpscanError("no report format given",
                          hint=f"use one or more of: {', '.join(sorted(FORMATS))}")
    out: list[str] = []
    for f in formats:
        if f not in FORMATS:
            raise OpscanError(f"unknown report format '{f}'",
                              hint=f"use one or more of: {', '.join(sorted(FORMATS))}")
        if f not in out:
            out.append(f)
    return tuple(out)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to a temp file next to `path`, fsync, then os.replace onto `path`."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_reports(report_json: dict, outdir, formats=DEFAULT_FORMATS, force: bool = False,
                  graphml: str | None = None) -> list[Path]:
    """Write report.<fmt> for each of `formats` (and the GraphML text, when given, under
    report_json["graph"]["graphml"] or op_graph.graphml) into `outdir`; returns the paths
    in that order. Nothing is written when any target exists and `force` is false."""
    formats = check_formats(formats)
    report = validate(report_json)
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise OpscanError(f"{out}: exists and is not a directory",
                          hint="pass a directory for the reports with --out")
    rendered: list[tuple[Path, bytes]] = []
    for f in formats:
        for name, render in (FORMATS[f], *COMPANIONS.get(f, ())):
            rendered.append((out / name, render(report)))
    if graphml is not None:
        name = (report.get("graph") or {}).get("graphml") or DEFAULT_GRAPHML_NAME
        if Path(name).name != name:
            raise OpscanError(f"graph.graphml '{name}' is not a plain file name",
                              hint="name the GraphML file without a directory")
        rendered.append((out / name, graphml.encode("utf-8")))
    existing = [str(p) for p, _ in rendered if p.exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise OutputExists(f"{existing[0]} already exists{more}",
                           hint="pass --force to overwrite, or choose another --out directory")
    out.mkdir(parents=True, exist_ok=True)
    for path, data in rendered:
        atomic_write(path, data)
    return [p for p, _ in rendered]
