"""`opscan align dump|compare` through the CLI: the five reports, the suspects' verdicts,
the repro, and one-line refusals before any user code runs."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from analyzer.align.api import compare_and_report
from analyzer.cli import main
from analyzer.align.fault import Fault
from analyzer.align.metrics import mean_within, stat_error

from .conftest import MODELS

TORCH = MODELS / "torch_tiny_vit.py"


def _fake_classify(op, dtypes):
    return {"category": "dtype-gap" if op == "aten::gelu" else "supported", "action": "cast"}


def test_compare_writes_five_formats_with_suspects_and_repro(align_dumps, tmp_path):
    a = align_dumps("torch-tiny-a", TORCH, "torch", save_inputs=True, level="op")
    b = align_dumps("torch-tiny-gelu1", TORCH, "torch", inputs_from=str(a), level="op", fault=Fault("gelu", 1))
    out = tmp_path / "rep"
    rep, paths = compare_and_report(a, b, out, classify=_fake_classify)
    assert [p.name for p in paths] == ["align.md", "align.html", "align.csv", "align.xlsx", "align.json"]
    assert rep.suspects[0].op == "aten::gelu" and rep.suspects[0].verdict["category"] == "dtype-gap"
    data = json.loads((out / "align.json").read_text())
    assert data["op"]["key"] == "Aten.gelu.default.1.forward"
    md = (out / "align.md").read_text()
    assert "| module forward/backward mean within 1% |" in md and "dtype-gap" in md
    html = (out / "align.html").read_text()
    assert "runs part ways here" in html and "data:image/png;base64," in html
    header = (out / "align.csv").read_text().splitlines()[0]
    assert header.startswith("order,key,kind,phase,dtype_a,dtype_b,err,threshold,floor,floor_verdict,mean_1pct")
    # the repro runs and reproduces A's output exactly in float32
    proc = subprocess.run([sys.executable, rep.repro], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "float32   vs A's output: 0 " in proc.stdout
    # same inputs, same bytes; an existing report is refused
    first = {p.name: p.read_bytes() for p in paths}
    _, again = compare_and_report(a, b, out, classify=_fake_classify, force=True, repro=False)
    second = {p.name: p.read_bytes() for p in again}
    assert first["align.csv"] == second["align.csv"] and first["align.xlsx"] == second["align.xlsx"]
    import openpyxl  # the workbook opens in a real reader: the calls sheet, its verdict fills
    wb = openpyxl.load_workbook(out / "align.xlsx")
    assert wb.sheetnames == ["summary", "calls"] and wb["summary"]["A1"].value == "summary"
    calls = wb["calls"]
    assert calls["A1"].value == "order" and calls["A1"].font.bold and calls.freeze_panes == "C2"
    verdicts = [c for c in calls["J"][1:] if c.value in ("pass", "fail")]
    assert verdicts and all(c.fill.fill_type == "solid" for c in verdicts)
    with pytest.raises(Exception, match="exists"):
        compare_and_report(a, b, out, classify=_fake_classify)


def test_cli_refusals_are_one_line(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    cases = [
        (["align", "dump", str(TORCH), "-f", "torch", "-o", str(tmp_path / "full")], "exists and is not empty"),
        (["align", "dump", str(TORCH), "-f", "torch", "--amp", "bf16", "--reference", "fp64",
          "-o", str(tmp_path / "o1")], "exclude each other"),
        (["align", "dump", str(TORCH), "-f", "torch", "--inputs", str(tmp_path), "-o", str(tmp_path / "o2")],
         "no saved inputs"),
        (["align", "dump", str(tmp_path / "nope.py"), "-f", "torch", "-o", str(tmp_path / "o3")], "no such model file"),
        (["align", "compare", str(tmp_path / "nope"), str(tmp_path), "-o", str(tmp_path / "o4")], "no such dump directory"),
        (["align", "dump", str(TORCH), "-f", "torch", "--fault", "tanh", "-o", str(tmp_path / "o5")], "unknown fault kind"),
    ]
    for argv, msg in cases:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
    assert main(["align"]) == 2


def test_compare_side_imports_no_framework():
    code = ("import sys, analyzer.align.cli, analyzer.align.compare, analyzer.align.report, "
            "analyzer.align.coverage, analyzer.align.api, analyzer.align.layout;"
            "print(','.join(m for m in ('torch', 'paddle') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_norm_relative_error_stays_meaningful_near_zero():
    a = {"shape": [100], "Max": 2.0, "Min": -2.0, "Mean": 1e-9, "Norm": 10.0}
    b = dict(a, Mean=2e-9)
    assert stat_error(a, b) < 1e-8  # msprobe's MeanRelativeErr would say 100%
    assert stat_error(a, dict(a, Norm=10.01)) == pytest.approx(1e-3)
    assert stat_error(a, dict(a, shape=[10, 10])) == float("inf")
    assert stat_error(a, dict(a, NanCount=1)) == float("inf")
    assert mean_within({"Mean": 1.0}, {"Mean": 1.009}) and not mean_within({"Mean": 2.0}, {"Mean": 2.05})


def test_a_forced_dump_replaces_the_earlier_dump_not_mixes_with_it(tmp_path, capsys):
    """--force into an earlier dump with more steps and saved inputs left step1/ and inputs/
    of the old run beside the new run's step0/: `--step 1` or `--inputs` then read stale
    data (docs/bad-input.md). The user's own files stay."""
    out = tmp_path / "d"
    model = str(TORCH)
    assert main(["align", "dump", model, "-f", "torch", "--steps", "2", "--save-inputs", "-o", str(out)]) == 0
    (out / "mine.txt").write_text("mine")
    assert main(["align", "dump", model, "-f", "torch", "--force", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt", "opscan_align.json", "step0"]
    meta = json.loads((out / "opscan_align.json").read_text())
    assert meta["steps"] == 1 and any("removed the earlier dump's" in n for n in meta["notes"])
    capsys.readouterr()
