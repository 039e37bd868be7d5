"""End to end: `opscan` on bundled examples writes five report formats that agree with the
trace; broken model files exit 2 with the user's frames; a failing --script step still
writes a partial report; `opscan classify` answers without a model."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import openpyxl
import pytest

from analyzer.cli import main
from analyzer.report.writer import write_reports
from analyzer.scan import ScanOptions, scan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures" / "models"
FORMATS = ("report.md", "report.html", "report.csv", "report.xlsx", "report.json", "op_graph.graphml")


def _check_reports_against_trace(result, outdir: Path) -> None:
    trace_counts = Counter((c.op, c.dtypes) for c in result.trace.calls)
    data = json.loads((outdir / "report.json").read_text())
    json_counts = {(v["op"], tuple(v["dtypes"])): v["calls"] for v in data["verdicts"]}
    assert json_counts == dict(trace_counts)
    wb = openpyxl.load_workbook(outdir / "report.xlsx")
    assert {"summary", "gaps", "all ops"} <= set(wb.sheetnames)
    rows = list(wb["all ops"].iter_rows(values_only=True))
    header = [str(h).lower() for h in rows[0]]
    op_i, calls_i = header.index("op"), header.index("calls")
    xlsx_ops = Counter()
    for r in rows[1:]:
        xlsx_ops[r[op_i]] += int(r[calls_i])
    per_op = Counter()
    for (op, _), n in trace_counts.items():
        per_op[op] += n
    assert xlsx_ops == per_op
    gap_rows = list(wb["gaps"].iter_rows(values_only=True))[1:]
    assert len(gap_rows) == sum(1 for v in data["verdicts"] if v["category"] in
                                ("dtype-gap", "signature-drift", "cann-available", "decomposable",
                                 "needs-ascendc"))


@pytest.mark.slow
def test_torch_example_writes_all_formats_matching_the_trace(tmp_path):
    result = scan(ScanOptions(model=str(EXAMPLES / "torch_lstm_attention.py"), framework="torch"))
    write_reports(result.report.to_json(), tmp_path, graphml=result.graphml)
    for name in FORMATS:
        assert (tmp_path / name).stat().st_size > 0, name
    _check_reports_against_trace(result, tmp_path)
    verdicts = {v.op: v for v in result.report.verdicts}
    # the NPU runs these as themselves (torch_npu 2.13.0 adapts them), not their CPU decomposition
    for op in ("aten::scaled_dot_product_attention", "aten::lstm.input", "aten::matmul"):
        assert verdicts[op].adapter and not verdicts[op].is_gap, op
    for op in ("aten::lstm.input", "aten::matmul"):
        assert verdicts[op].category == "supported", op
    # torch_npu's sdpa reaches aclnnFlashAttentionScore* only through npu_fusion_attention,
    # next to aclnnSqrt and mask helpers: no primary API, so its float32 coverage is unverified
    assert verdicts["aten::scaled_dot_product_attention"].category == "unverified"
    assert "dtype coverage unverified" in verdicts["aten::scaled_dot_product_attention"].action
    # the report owns its numbers: one unit (distinct ops) in the summary and the counts
    assert result.report.summary == (
        "torch_lstm_attention.py on torch_npu==2.13.0 (ascend910b): all 30 kernel ops (83 calls) "
        "have an NPU adapter; 5 ops with dtype coverage unverified")
    # 25 supported: aten::matmul_backward is op-plugin's backward of the adapted composite
    assert result.report.counts["supported"] == 25 and result.report.counts["unverified"] == 5
    assert [v.op for v in result.report.verdicts] == [v["op"] for v in result.report.to_json()["verdicts"]]
    cpu_only = [v.op for v in result.report.verdicts if "_for_cpu" in v.op or "mkldnn" in v.op]
    assert cpu_only == []
    assert result.report.target == "torch_npu==2.13.0"


@pytest.mark.slow
def test_paddle_example_writes_all_formats_matching_the_trace(tmp_path):
    result = scan(ScanOptions(model=str(EXAMPLES / "paddle_crnn.py"), framework="paddle"))
    write_reports(result.report.to_json(), tmp_path, graphml=result.graphml)
    for name in FORMATS:
        assert (tmp_path / name).stat().st_size > 0, name
    _check_reports_against_trace(result, tmp_path)
    verdicts = {v.op: v for v in result.report.verdicts}
    assert verdicts["adam"].category == "signature-drift"
    assert any("moment2_max" in d for d in verdicts["adam"].drift)
    assert not any("CUSTOM_DEVICE_BLACK_LIST" in n for n in result.report.notes)
    assert result.report.blacklist.export.startswith('export CUSTOM_DEVICE_BLACK_LIST="adam,')
    assert result.report.target == "PaddleCustomDevice@develop"


@pytest.mark.slow
def test_cli_scan_is_deterministic_and_refuses_to_overwrite(tmp_path, capsys):
    model = str(FIXTURES / "tiny_mlp.py")
    assert main([model, "--framework", "torch", "-o", str(tmp_path / "a")]) == 0
    assert main([model, "--framework", "torch", "-o", str(tmp_path / "b")]) == 0
    for name in FORMATS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    capsys.readouterr()
    assert main([model, "--framework", "torch", "-o", str(tmp_path / "a"), "-q"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err


@pytest.mark.parametrize("fixture,needle", [
    ("broken_syntax.py", "broken_syntax.py:5"),
    ("broken_build_raises.py", "build()"),
    ("broken_no_build.py", "no build() function"),
    ("broken_wrong_framework.py", "paddle"),
])
def test_broken_model_files_exit_2_with_a_clear_message(tmp_path, capsys, fixture, needle):
    rc = main([str(FIXTURES / fixture), "--framework", "torch", "-o", str(tmp_path), "-q"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("opscan: error: ") and needle in err
    assert "site-packages" not in err and "analyzer/" not in err
    assert list(tmp_path.iterdir()) == []  # nothing half-written


@pytest.mark.slow
def test_script_failing_in_step_2_writes_a_partial_report(tmp_path, capsys):
    rc = main([str(FIXTURES / "script_fails_in_backward.py"), "--framework", "torch", "--script",
               "--steps", "3", "-o", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 2
    assert "partial report" in captured.err and "bad batch at call 2" in captured.err
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["partial"] is True and "bad batch" in data["error"]
    assert "PARTIAL" in (tmp_path / "report.md").read_text()


def test_classify_without_a_model(capsys):
    assert main(["classify", "aten::_add_relu.Scalar", "aten::matmul", "--framework", "torch",
                 "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    assert "aten::_add_relu.Scalar [float32]: cann-available on torch_npu==2.13.0" in out
    assert "opgen aclnn aclnnAddRelu --target torch --op aten::_add_relu.Scalar" in out
    assert "aten::matmul [float32]: supported" in out


def test_classify_paddle_adam_is_signature_drift_json(capsys):
    assert main(["classify", "adam", "--framework", "paddle", "--dtype", "float32", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    v = data["verdicts"][0]
    assert v["category"] == "signature-drift" and data["target"] == "PaddleCustomDevice@develop"
    assert "opscan blacklist" in v["action"] and "export" not in v["action"]


def test_classify_dtype_gap_suggests_a_cast(capsys):
    assert main(["classify", "bmm", "--framework", "paddle", "--dtype", "float64"]) == 0
    out = capsys.readouterr().out
    assert "bmm [float64]: dtype-gap on PaddleCustomDevice@develop" in out
    assert "cast float64 -> float32" in out


def test_classify_unknown_target_is_one_line(capsys):
    assert main(["classify", "aten::matmul", "--framework", "torch", "--target", "torch_npu==0.1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "known targets: torch_npu==2.14.0, torch_npu==2.13.0" in err


def test_scan_groups_the_calls_by_op_once(monkeypatch):
    """The progress line and the classifier read one grouping of the calls (each fact
    computed once): Trace.unique_ops runs once per scan."""
    from analyzer import scan as scan_module
    from analyzer.model import Trace
    from analyzer.report.sample import sample_trace

    trace = sample_trace()
    monkeypatch.setattr(scan_module, "trace_model", lambda opts, adapted: trace)
    real = Trace.unique_ops
    runs = []
    monkeypatch.setattr(Trace, "unique_ops", lambda self: runs.append(1) or real(self))
    lines = []
    result = scan(ScanOptions(model=trace.model, framework="torch", mode="real",
                              progress=lines.append))
    assert len(runs) == 1
    assert any(f"({len(real(trace))} unique ops)" in line for line in lines)
    assert len(result.report.verdicts) == len(real(trace))
