"""Issue 16, report side: per-parameter fallback islands are grouped by op sequence in
every format (one `adam ×N islands` line, the islands one click away), and setup calls
(before the first step) are their own phase: listed, counted for coverage and the
blacklist, kept out of per-step call counts and fallback costs."""
from __future__ import annotations

import csv
import io
import json

import openpyxl
import pytest

from analyzer.fallback import compute_fallback, gap_keys, passthrough_keys
from analyzer.graph import build_call_graph, graph_summary
from analyzer.model import OpCall, OpVerdict, ScanReport, TensorMeta, Trace
from analyzer.report.csv_report import render_csv, render_islands_csv
from analyzer.report.html import render_html
from analyzer.report.json_report import render_json, validate
from analyzer.report.markdown import render_markdown
from analyzer.report.xlsx import render_xlsx
from analyzer.scan import summary_line

N_PARAMS = 7


def _paddle_like_trace() -> Trace:
    """gaussian init per parameter (setup), one matmul forward + grad, then
    PaddleCustomDevice-style adam: one kernel call per parameter."""
    ids = iter(range(1, 1000))

    def t(shape):
        return TensorMeta(next(ids), "float32", tuple(shape))

    params = [t([64, 64]) for _ in range(N_PARAMS)]
    calls: list[OpCall] = []

    def call(op, phase, ins, outs, step):
        calls.append(OpCall(len(calls), op, "", phase, ins, outs, module="" if phase in (
            "setup", "optimizer") else "encoder", source="train.py:10", step=step))

    for p in params:
        call("gaussian", "setup", [], [p], 0)
    x = t([8, 64])
    for step in (1, 2):
        h = x
        for p in params:
            out = t([8, 64])
            call("matmul", "forward", [h, p], [out], step)
            h = out
        grads = [t([64, 64]) for _ in params]
        for p, g in zip(params, grads):
            call("matmul_grad", "backward", [h, p], [g], step)
        for p, g in zip(params, grads):
            m1, m2 = t([64, 64]), t([64, 64])
            call("adam", "optimizer", [p, g, m1, m2], [p, m1, m2], step)
    return Trace("paddle", "real", "train.py", calls=calls, steps=2)


def _verdicts(trace: Trace) -> list[OpVerdict]:
    category = {"gaussian": "signature-drift", "adam": "signature-drift"}
    out = []
    for (op, dtypes), calls in trace.unique_ops().items():
        setup = sum(1 for c in calls if c.phase == "setup")
        out.append(OpVerdict(op=op, category=category.get(op, "supported"), dtypes=dtypes,
                             calls=len(calls) - setup, setup_calls=setup,
                             phases=sorted({c.phase for c in calls})))
    return out


@pytest.fixture(scope="module")
def report() -> dict:
    trace = _paddle_like_trace()
    g = build_call_graph(trace)
    verdicts = _verdicts(trace)
    fb = compute_fallback(g, gap_keys(verdicts), passthrough_keys(verdicts), steps=trace.steps)
    r = ScanReport(
        schema_version=1, tool="opscan 0.1.0", model="train.py", framework="paddle",
        framework_version="3.3.1", mode="real", target="paddle-custom-device", soc="Ascend910B",
        steps=trace.steps, partial=False, error="",
        summary=summary_line("train.py", "paddle-custom-device", "Ascend910B", verdicts, fb,
                             False),
        counts={}, verdicts=verdicts, fallback=fb, notes=[], opdb={}, graph=graph_summary(g))
    return validate(r.to_json())


def test_per_parameter_islands_form_one_group(report):
    fb = report["fallback"]
    assert len(fb["islands"]) == N_PARAMS  # the last step's islands, one per parameter
    assert len(fb["groups"]) == 1
    g = fb["groups"][0]
    # each adam island: param, grad, m1, m2 in; param, m1, m2 out (param and moments leave)
    assert (g["sequence"], g["islands"], g["transfers_each"]) == (["adam"], N_PARAMS, 7)
    assert g["members"] == list(range(1, N_PARAMS + 1))
    assert g["bytes"] == N_PARAMS * 7 * 64 * 64 * 4


def test_every_format_shows_the_group_line_and_the_islands_in_detail(report):
    line = "adam \u00d77 islands \u00b7 7 transfers each \u00b7 784.0 KiB per step"
    md = render_markdown(report)
    assert f"- {line}\n" in md
    # one line for the group; the seven per-parameter rows are inside <details>
    head, details = md.split("islands one by one</summary>", 1)
    assert head.count("`adam`") == 0 and details.split("</details>")[0].count("`adam`") == N_PARAMS
    html = render_html(report)
    assert f"<details><summary>{line}</summary>" in html
    assert html.count('<tr class="group">') == 1
    rows = list(csv.DictReader(io.StringIO(render_islands_csv(report))))
    assert len(rows) == N_PARAMS and {r["group"] for r in rows} == {line}
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(report)))
    sheet = list(wb["fallback islands"].iter_rows(values_only=True))
    assert len(sheet) == 1 + N_PARAMS and sheet[1][0] == line
    summary = [r for r in wb["summary"].iter_rows(values_only=True) if r[0] == "group 1"]
    assert summary == [("group 1", 7 * N_PARAMS, N_PARAMS * 7 * 16384, N_PARAMS, line)]


def test_setup_ops_are_listed_counted_for_coverage_but_not_per_step(report):
    gauss = next(v for v in report["verdicts"] if v["op"] == "gaussian")
    assert (gauss["calls"], gauss["setup_calls"], gauss["phases"]) == (0, N_PARAMS, ["setup"])
    matmul = next(v for v in report["verdicts"] if v["op"] == "matmul")
    assert (matmul["calls"], matmul["setup_calls"]) == (2 * N_PARAMS, 0)
    # coverage: gaussian is one of the ops with gaps; per-step calls leave its 7 out
    assert "2/4 kernel ops supported; 2 ops with gaps (2 signature-drift) in 14 of 42 calls" \
        in report["summary"]
    assert report["summary"].endswith(f"; {N_PARAMS} setup calls before the first step "
                                      f"({N_PARAMS} in ops with gaps)")
    # the setup gaussian calls are no fallback island (they run once, not per step)
    assert all(i["ops"] == ["adam"] for i in report["fallback"]["islands"])
    md = render_markdown(report)
    assert "## Setup: before the first step (1)" in md
    assert f"| `gaussian` | signature-drift | {N_PARAMS} | float32 |" in md
    assert "<h2>Setup: before the first step (1)</h2>" in render_html(report)
    row = next(r for r in csv.DictReader(io.StringIO(render_csv(report)))
               if r["op"] == "gaussian")
    assert (row["calls"], row["setup_calls"], row["phases"]) == ("0", str(N_PARAMS), "setup")
    assert json.loads(render_json(report))["verdicts"]


def test_classify_trace_counts_setup_calls_apart(monkeypatch):
    """Setup-only ops still get a verdict (coverage, blacklist); their calls are setup_calls."""
    import analyzer.classify as classify

    class Ctx:  # classify_trace reads only this; classify_op is replaced below
        framework = "paddle"

    monkeypatch.setattr(classify, "classify_op", lambda ctx, name, dtypes, key_dtypes:
                        OpVerdict(op=name, category="supported", dtypes=dtypes))
    by_op = {v.op: v for v in classify.classify_trace(Ctx(), _paddle_like_trace())}
    assert (by_op["gaussian"].calls, by_op["gaussian"].setup_calls) == (0, N_PARAMS)
    assert by_op["gaussian"].phases == ["setup"]
    assert (by_op["adam"].calls, by_op["adam"].setup_calls) == (2 * N_PARAMS, 0)
