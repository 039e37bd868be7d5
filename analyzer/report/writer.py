"""Write the report files of one scan from its JSON dict (report.json alone can regenerate
every format): validate, refuse to overwrite unless forced, then render each requested
format in memory and write the whole set in one step (opdb.fsio.write_files: temp
siblings, each synced while the next renders, moved into place with SIGINT/SIGTERM held
back)."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from analyzer.report.csv_report import render_csv, render_islands_csv
from analyzer.report.html import render_html
from analyzer.report.json_report import render_json, validate
from analyzer.report.markdown import render_markdown
from analyzer.report.xlsx import render_xlsx
from opdb import fsio
from opdb.errors import OpscanError

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
        raise OpscanError("--format: no report format given",
                          hint=f"use one or more of: {', '.join(sorted(FORMATS))}")
    out: list[str] = []
    for f in formats:
        if f not in FORMATS:
            raise OpscanError(f"--format: unknown report format '{f}'",
                              hint=f"use one or more of: {', '.join(sorted(FORMATS))}")
        if f not in out:
            out.append(f)
    return tuple(out)


def output_names(formats, graphml_name: str | None = DEFAULT_GRAPHML_NAME) -> list[str]:
    """The file names a scan writes for `formats` (their companions, and the GraphML file
    when named): what write_reports writes."""
    names = [n for f in check_formats(formats) for n, _ in (FORMATS[f], *COMPANIONS.get(f, ()))]
    return names + ([graphml_name] if graphml_name else [])


def check_outputs(outdir, formats=DEFAULT_FORMATS, force: bool = False,
                  graphml_name: str | None = DEFAULT_GRAPHML_NAME) -> Path:
    """Everything write_reports would refuse, checked before the scan runs any user code:
    returns `outdir` as an absolute path (a model's os.chdir cannot move the reports)."""
    return fsio.check_files(outdir, output_names(formats, graphml_name), force, "-o/--output")


def write_reports(report_json: dict, outdir, formats=DEFAULT_FORMATS, force: bool = False,
                  graphml: str | None = None) -> list[Path]:
    """Write report.<fmt> for each of `formats` (and the GraphML text, when given, under
    report_json["graph"]["graphml"] or op_graph.graphml) into `outdir`; returns the paths
    in that order. Nothing is written when any target exists and `force` is false."""
    formats = check_formats(formats)
    report = validate(report_json)
    out = fsio.check_out_dir(outdir, "-o/--output")
    # each format rendered when its turn to be written comes (fsio.write_files), so the
    # GraphML's flush (the largest file, ready before any format) overlaps the rendering
    rendered: list[tuple[Path, bytes | Callable[[], bytes]]] = []
    for f in formats:
        for name, render in (FORMATS[f], *COMPANIONS.get(f, ())):
            rendered.append((out / name, partial(render, report)))
    if graphml is not None:
        name = (report.get("graph") or {}).get("graphml") or DEFAULT_GRAPHML_NAME
        if Path(name).name != name:
            raise OpscanError(f"graph.graphml '{name}' is not a plain file name",
                              hint="name the GraphML file without a directory")
        rendered.append((out / name, graphml.encode("utf-8")))
    return write_outputs(out, rendered, force)


def write_outputs(out: Path, rendered: list[tuple[Path, bytes | Callable[[], bytes]]],
                  force: bool) -> list[Path]:
    """Write files (bytes, or functions rendering them) into `out` as one set
    (opdb.fsio.write_files: refuse existing files without `force`, temp siblings moved
    into place, signals held back)."""
    return fsio.write_files(out, {p.name: data for p, data in rendered}, force=force,
                            option="-o/--output directory")
