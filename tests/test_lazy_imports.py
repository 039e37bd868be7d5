"""CLI start-up must not pay for torch or paddle (Polygraphy's guard): `opdb show` and
`opgen` import them only when a command needs them."""
import subprocess
import sys

CODE = """
import sys
import opdb.cli, codegen.cli, analyzer.cli, opdb.query, opdb.show, analyzer.classify
import analyzer.trace, analyzer.trace.torch, analyzer.trace.paddle, analyzer.scan
heavy = [m for m in ("torch", "paddle", "torch_npu") if m in sys.modules]
print(",".join(heavy))
"""


def test_cli_modules_do_not_import_frameworks():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_opdb_show_runs_without_importing_frameworks():
    code = ("import sys; from opdb.cli import main; main(['show', 'adam', '--framework', 'paddle']);"
            "print('HEAVY' if {'torch','paddle'} & set(sys.modules) else 'LIGHT', file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().endswith("LIGHT") and "AdamKernel" in out.stdout


def test_scan_pipeline_does_not_import_networkx():
    """A scan builds its op graph with analyzer.digraph: networkx's import (~0.2 s) is no
    part of a scan (issue 12, item 7)."""
    code = ("import sys, analyzer.scan, analyzer.graph, analyzer.fallback, analyzer.blacklist, "
            "analyzer.report.writer, analyzer.classify; print('networkx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_report_writer_never_imports_openpyxl(tmp_path):
    """openpyxl's import (~0.06-0.15 s) is not paid by a scan: report.xlsx is written by
    analyzer.report.xlsx_lite, the one xlsx writer (log, zoo and align workbooks too)."""
    code = ("import sys; from analyzer.report.sample import sample_report; "
            "from analyzer.report.writer import write_reports; "
            "write_reports(sample_report().to_json(), sys.argv[1], formats=sys.argv[2]); "
            "print('openpyxl' in sys.modules)")
    runs = {fmts: subprocess.run([sys.executable, "-c", code, str(tmp_path / fmts.replace(",", "-")),
                                  fmts], capture_output=True, text=True, check=True).stdout.strip()
            for fmts in ("md,html,csv,json", "xlsx")}
    assert runs == {"md,html,csv,json": "False", "xlsx": "False"}
