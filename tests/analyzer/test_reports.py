"""Report formats rendered from the ScanReport JSON: schema, golden md/csv, xlsx, writer.

Golden files live in tests/analyzer/golden/; regenerate them after an intended change with
    OPSCAN_UPDATE_GOLDEN=1 python3 -m pytest tests/analyzer/test_reports.py
and review the diff.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import time
import zipfile
from pathlib import Path

import pytest

from analyzer.model import CATEGORIES, ScanReport
from analyzer.report import (SCHEMA, ReportSchemaError, load_report, render_csv, render_html,
                             render_json, render_markdown, render_xlsx, validate, write_reports)
from analyzer.report.common import CSV_COLUMNS
from analyzer.report.json_report import schema_errors, schema_text
from analyzer.report.sample import sample_report
from opdb.errors import OpscanError, OutputExists

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("OPSCAN_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path} missing: run with OPSCAN_UPDATE_GOLDEN=1"
    assert text == path.read_bytes().decode("utf-8"), (
        f"{name} differs from the golden file; if intended, regenerate with "
        "OPSCAN_UPDATE_GOLDEN=1 and review the diff")


@pytest.fixture(scope="module")
def report() -> dict:
    return sample_report().to_json()


@pytest.fixture(scope="module")
def partial() -> dict:
    return sample_report(partial=True).to_json()


# --- schema -------------------------------------------------------------------------------

def test_docs_schema_file_is_the_code_schema():
    assert (ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8") == schema_text()


def test_sample_reports_validate(report, partial):
    assert schema_errors(validate(report)) == []
    assert schema_errors(validate(partial)) == []


def test_schema_matches_jsonschema_when_installed(report):
    import jsonschema  # installed by scripts/setup.sh
    data = json.loads(render_json(report))
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(data, SCHEMA)
    bad = json.loads(render_json(report))
    bad["verdicts"][0]["category"] = "unsupported"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["verdicts"][1].__setitem__("category", "unsupported"),
     "$.verdicts[1].category: \"unsupported\" is not one of"),
    (lambda d: d.pop("summary"), "$: missing required field 'summary'"),
    (lambda d: d.__setitem__("colour", "red"), "$: unknown field 'colour'"),
    (lambda d: d["fallback"].__setitem__("bytes", -1), "$.fallback.bytes: -1 is below"),
    (lambda d: d["verdicts"][0].__setitem__("calls", "3"),
     "$.verdicts[0].calls: expected integer, got str"),
    (lambda d: d.__setitem__("partial", 1), "$.partial: expected boolean, got int"),
    (lambda d: d["graph"]["links"][0].__setitem__("source", "aten::mm"),
     "$.graph.links[0].source: expected integer"),
    (lambda d: d.__setitem__("schema_version", 2), "$.schema_version: 2 is not one of 1"),
])
def test_validator_names_the_bad_field(report, mutate, message):
    d = json.loads(render_json(report))
    mutate(d)
    with pytest.raises(ReportSchemaError) as e:
        validate(d, origin="r.json")
    assert str(e.value).startswith("r.json: " + message)
    assert "docs/report-schema.md" in str(e.value)


def test_every_field_is_documented():
    doc = (ROOT / "docs" / "report-schema.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_\[\].]+)` \|", doc, re.M))
    documented = {f.rsplit(".", 1)[-1] for f in documented}

    def fields(schema):
        if "$ref" in schema:
            schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        for name, sub in schema.get("properties", {}).items():
            yield name
            yield from fields(sub)
        if "items" in schema:
            yield from fields(schema["items"])

    missing = set(fields(SCHEMA)) - documented
    assert not missing, f"fields missing from docs/report-schema.md: {sorted(missing)}"
    for cat in CATEGORIES:
        assert f"| `{cat}` |" in doc
    # and the dataclass has no field the schema lacks
    import dataclasses

    assert {f.name for f in dataclasses.fields(ScanReport)} == set(SCHEMA["properties"])


def test_load_report_round_trip_and_errors(tmp_path, report):
    p = tmp_path / "report.json"
    p.write_text(render_json(report), encoding="utf-8")
    loaded = load_report(p)
    assert render_markdown(loaded) == render_markdown(report)
    assert render_csv(loaded) == render_csv(report)
    assert render_html(loaded) == render_html(report)
    assert render_xlsx(loaded) == render_xlsx(report)
    p.write_text('{\n  "schema_version": 1,\n  oops\n}\n', encoding="utf-8")
    with pytest.raises(ReportSchemaError, match=r"report.json:3: not JSON"):
        load_report(p)
    p.write_text('{"schema_version": 7}', encoding="utf-8")
    with pytest.raises(ReportSchemaError, match="schema_version 7 is not supported"):
        load_report(p)
    with pytest.raises(ReportSchemaError, match="cannot read"):
        load_report(tmp_path / "missing.json")


def test_json_is_canonical(report):
    text = render_json(report)
    assert text.endswith("}\n") and text == render_json(json.loads(text))
    assert json.loads(text)["schema_version"] == 1


# --- golden md / csv ----------------------------------------------------------------------

def test_markdown_golden(report, partial):
    check_golden("sample_report.md", render_markdown(report))
    check_golden("sample_partial.md", render_markdown(partial))


def test_csv_golden(report, partial):
    check_golden("sample_report.csv", render_csv(report))
    check_golden("sample_partial.csv", render_csv(partial))


def test_markdown_layout(report):
    md = render_markdown(report)
    lines = md.splitlines()
    assert lines[0].startswith("# opscan: examples/small_cnn.py")
    assert lines[2] == "**" + report["summary"] + "**"  # the summary comes first
    order = [md.index(h) for h in ("## Ops per category", "## CPU fallback cost",
                                   "## Gaps (2)", "## Not a kernel (2)", "## Notes",
                                   "## Provenance")]
    assert order == sorted(order)
    assert ("| `aten::_adaptive_avg_pool2d_backward` | cann-available | 1 | float32 | `pool` | "
            "`examples/small_cnn.py:24` |") in md
    assert "`opgen aclnn AdaptiveAvgPool2dBackward --target torch`" in md


def test_markdown_escapes_cells(report):
    d = json.loads(render_json(report))
    v = next(v for v in d["verdicts"] if v["category"] == "needs-ascendc" or v["op"] ==
             "aten::_fused_adam_")
    v["evidence"] = ["a | b", "phi::dtype::complex<float> <script>", "line1\nline2"]
    md = render_markdown(d)
    row = next(line for line in md.splitlines() if line.startswith("| `aten::_fused_adam_`"))
    assert "a \\| b" in row
    assert "complex&lt;float> &lt;script>" in row  # shown as text, not swallowed as a tag
    assert "line1<br>line2" in row
    assert row.count(" | ") == 7  # still 8 cells


def test_csv_columns_and_rows(report):
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    assert len(rows) == len(report["verdicts"])
    assert [r["category"] for r in rows[:2]] == ["cann-available", "decomposable"]
    assert {r["report_status"] for r in rows} == {"complete"}
    assert rows[0]["candidates"].endswith("[opgen aclnn AdaptiveAvgPool2dBackward --target torch]")


# --- xlsx ---------------------------------------------------------------------------------

def test_xlsx_sheets_and_byte_identity(report, monkeypatch):
    import openpyxl

    first = render_xlsx(report)
    later = time.time() + 86400 * 3  # the zip stamps and docProps would change with the clock
    monkeypatch.setattr(time, "time", lambda: later)
    assert render_xlsx(report) == first
    z = zipfile.ZipFile(io.BytesIO(first))
    assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert b"2000-01-01T00:00:00Z" in z.read("docProps/core.xml")
    wb = openpyxl.load_workbook(io.BytesIO(first))
    assert wb.sheetnames == ["summary", "gaps", "all ops", "fallback islands"]
    gaps = list(wb["gaps"].iter_rows(values_only=True))
    assert gaps[0] == CSV_COLUMNS
    assert [r[1] for r in gaps[1:]] == ["cann-available", "decomposable"]
    all_ops = list(wb["all ops"].iter_rows(values_only=True))
    assert len(all_ops) == 1 + len(report["verdicts"])
    summary = {r[0]: r[1] for r in wb["summary"].iter_rows(values_only=True) if r[0]}
    assert summary["summary"] == report["summary"]
    assert summary["cann-available"] == 1 and summary["total"] == report["fallback"]["transfers"]


# --- partial reports ----------------------------------------------------------------------

def test_partial_is_marked_in_every_format(partial):
    import openpyxl

    err = partial["error"]
    assert partial["partial"] and err
    assert f"PARTIAL REPORT: the scan stopped early ({err})" in render_markdown(partial)
    html = render_html(partial)
    assert 'class="partial" role="alert"' in html and "PARTIAL REPORT" in html
    rows = list(csv.DictReader(io.StringIO(render_csv(partial))))
    assert rows and all(r["report_status"] == f"PARTIAL: {err}" for r in rows)
    j = json.loads(render_json(partial))
    assert j["partial"] is True and j["error"] == err
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(partial)))
    for ws in wb.worksheets:
        assert ws["A1"].value.startswith("PARTIAL REPORT") and err in ws["A1"].value


def test_partial_without_any_verdict_still_shows_status(partial):
    d = json.loads(render_json(partial))
    d["verdicts"], d["counts"] = [], {}
    rows = list(csv.DictReader(io.StringIO(render_csv(d))))
    assert len(rows) == 1 and rows[0]["report_status"].startswith("PARTIAL: ")
    assert "PARTIAL REPORT" in render_markdown(d)


# --- writer -------------------------------------------------------------------------------

def test_write_reports_writes_all_formats_atomically(tmp_path, report):
    out = tmp_path / "out"
    paths = write_reports(report, out, graphml="<graphml/>\n")
    assert [p.name for p in paths] == ["report.md", "report.html", "report.csv",
                                       "fallback_islands.csv", "report.xlsx", "report.json",
                                       "op_graph.graphml"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)  # no temps
    assert (out / "report.md").read_text(encoding="utf-8") == render_markdown(report)
    assert (out / "report.xlsx").read_bytes() == render_xlsx(report)
    assert (out / "op_graph.graphml").read_text(encoding="utf-8") == "<graphml/>\n"
    assert load_report(out / "report.json") == json.loads(render_json(report))


def test_write_reports_refuses_to_overwrite(tmp_path, report):
    (tmp_path / "report.csv").write_text("mine\n")
    with pytest.raises(OutputExists) as e:
        write_reports(report, tmp_path, formats=("md", "csv"))
    assert "report.csv already exists" in str(e.value) and "--force" in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.csv"]  # nothing written
    assert (tmp_path / "report.csv").read_text() == "mine\n"
    paths = write_reports(report, tmp_path, formats=("md", "csv"), force=True)
    assert [p.name for p in paths] == ["report.md", "report.csv", "fallback_islands.csv"]
    assert (tmp_path / "report.csv").read_bytes() == render_csv(report).encode("utf-8")


def test_write_reports_rejects_unknown_format_and_bad_report(tmp_path, report):
    with pytest.raises(OpscanError) as e:
        write_reports(report, tmp_path, formats=("md", "pdf"))
    assert str(e.value) == ("--format: unknown report format 'pdf' (use one or more of: csv, html, "
                            "json, md, xlsx)")
    bad = json.loads(render_json(report))
    bad["steps"] = 0
    with pytest.raises(ReportSchemaError, match=r"\$\.steps: 0 is below the minimum 1"):
        write_reports(bad, tmp_path)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(OpscanError, match="is a file, not a directory"):
        write_reports(report, tmp_path / "file")


def test_report_from_dataclass_and_from_json_render_the_same(report):
    sr = sample_report()
    assert isinstance(sr, ScanReport)
    assert render_markdown(sr.to_json()) == render_markdown(json.loads(render_json(report)))


def test_formats_as_comma_string(tmp_path, report):
    paths = write_reports(report, tmp_path, formats="csv, md,csv")
    assert [p.name for p in paths] == ["report.csv", "fallback_islands.csv", "report.md"]
    with pytest.raises(OpscanError, match="no report format given"):
        write_reports(report, tmp_path / "x", formats="")


def test_minimal_report_renders_in_every_format(tmp_path):
    from analyzer.model import FallbackCost

    r = ScanReport(schema_version=1, tool="opscan 0.1.0", model="m.py", framework="paddle",
                   framework_version="", mode="meta", target="paddle-custom-device", soc="",
                   steps=1, partial=False, error="", summary="nothing traced", counts={},
                   verdicts=[], fallback=FallbackCost(), notes=[], opdb={})
    paths = write_reports(r.to_json(), tmp_path)
    assert len(paths) == 6
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Gaps (0)\n\nNone." in md and "None: every traced call has an NPU kernel." in md
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "The report carries no op graph." in html
    assert (tmp_path / "report.csv").read_bytes().count(b"\r\n") == 1  # header only


def test_write_reports_converts_the_report_to_json_data_once(report, tmp_path, monkeypatch):
    """validate() converts the report to plain JSON data; the six formats render from that
    dict (normalize hands a NormalizedReport back as is) instead of converting it again."""
    import copy

    from analyzer.report import json_report

    data = validate(report)
    assert json_report.normalize(data) is data
    before = copy.deepcopy(data)
    for render in (render_json, render_markdown, render_html, render_csv, render_xlsx):
        render(data)
    assert data == before  # no renderer changes the shared dict

    loads = []
    real = json_report.json.loads
    monkeypatch.setattr(json_report.json, "loads", lambda *a, **k: loads.append(1) or real(*a, **k))
    write_reports(report, tmp_path / "out")
    assert len(loads) == 1
