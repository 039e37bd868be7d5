"""CUSTOM_DEVICE_BLACK_LIST suggestions (issue 10): the adam case against the installed
Paddle and the shipped PaddleCustomDevice@develop snapshot, the runtime's matching rules,
the CPU-kernel refusal, --current, and the report's blacklist section (one source)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.blacklist import (ATTR_CAST_ERROR, DYGRAPH, STATIC, Change, _retype_dygraph,
                                cpu_kernel_dtypes, entry_names, parse_drift,
                                parse_runtime_list, suggest_blacklist)
from analyzer.classify import ClassifyContext, classify_trace
from analyzer.graph import build_call_graph
from analyzer.model import OpCall, TensorMeta, Trace
from opdb.known_issues import load_known_issues, parse_known_issues
from opdb.query import OpDB

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    import os

    os.environ.setdefault("OPSCAN_CACHE", str(tmp_path_factory.mktemp("cache")))
    return OpDB.open(overlay=False)


def _t(i, dtype="float32", shape=(4, 4)):
    return TensorMeta(i, dtype, shape)


def _trace(calls) -> Trace:
    """A hand-written Paddle trace: (op, phase, inputs, outputs) per call."""
    tr = Trace(framework="paddle", mode="real", model="hand.py", framework_version="3.3.1")
    for i, (op, phase, ins, outs) in enumerate(calls):
        tr.calls.append(OpCall(index=i, op=op, overload=op, phase=phase, inputs=ins, outputs=outs))
    return tr


def _suggest(db, trace, **kw):
    ctx = ClassifyContext.create(db, "paddle")
    verdicts = classify_trace(ctx, trace)
    return suggest_blacklist(ctx, verdicts, trace, build_call_graph(trace), **kw)


ADAM_STEP = [
    ("matmul", "forward", [_t(1), _t(2)], [_t(3)]),
    ("matmul_grad", "backward", [_t(1), _t(2), _t(4)], [_t(5), _t(6)]),
    ("adam", "optimizer", [_t(2), _t(6), _t(7, shape=(1,)), _t(8), _t(9)], [_t(2), _t(8), _t(9)]),
]


def test_adam_is_flagged_for_drift_with_the_differing_params_and_the_right_names(db):
    bl = _suggest(db, _trace(ADAM_STEP))
    adam = next(e for e in bl.entries if e.kernel == "adam")
    assert adam.reason.startswith("signature-drift") and adam.severity == "certain"
    for param in ("amsgrad", "moment2_max", "moment2_max_out"):
        assert param in adam.detail
    # the fluid name of phi `adam` is `adam`: one name serves both modes; `adam_` is the API
    assert [(n.name, n.modes) for n in adam.names] == [("adam", [DYGRAPH, STATIC])]
    assert bl.export == 'export CUSTOM_DEVICE_BLACK_LIST="adam"'
    assert "known-issue" in adam.reason
    assert any("PaddleCustomDevice/pull/1484" in e for e in adam.evidence)
    assert adam.cpu_dtypes == ["float32", "float64"] and adam.dtypes == ["float32"]
    assert adam.transfers > 0 and adam.bytes > 0 and bl.transfers >= adam.transfers
    assert "FLAGS_enable_api_kernel_fallback" in bl.notes[0]
    assert "2024-10-18" in bl.pairing and "3.3.1" in bl.pairing and "2026-03-24" in bl.pairing
    assert "opdb sync paddle-custom-device --src" in bl.pairing


def test_retyped_attribute_quotes_the_runtime_error(db):
    x, out = _t(1, shape=(1, 3, 8, 8)), _t(2, shape=(1, 3, 4, 4))
    bl = _suggest(db, _trace([("pool2d", "forward", [x], [out]),
                              ("pool2d_grad", "backward", [x, out, _t(3, shape=(1, 3, 4, 4))],
                               [_t(4, shape=(1, 3, 8, 8))])]))
    assert [e.kernel for e in bl.entries] == ["pool2d", "pool2d_grad"]
    pool = bl.entries[0]
    assert pool.severity == "certain" and "std::vector<int64_t>" in pool.detail
    assert any(ATTR_CAST_ERROR in e and e.startswith("static/PIR") for e in pool.effects)
    assert any("[2, 0, 2, 0]" in e for e in pool.effects)
    assert bl.export == 'export CUSTOM_DEVICE_BLACK_LIST="pool2d,pool2d_grad"'


def test_dygraph_uses_the_fluid_name_and_static_the_phi_name():
    assert [(n.name, n.modes) for n in entry_names("matmul")] == [
        ("matmul_v2", [DYGRAPH]), ("matmul", [STATIC])]
    assert [n.name for n in entry_names("matmul_grad")] == ["matmul_v2_grad", "matmul_grad"]
    assert [n.name for n in entry_names("topk")] == ["top_k_v2", "topk"]
    assert [(n.name, n.modes) for n in entry_names("pad3d_grad")] == [
        ("pad3d_grad", [DYGRAPH, STATIC])]


def test_runtime_list_is_split_without_trimming():
    assert parse_runtime_list("a, b") == ["a", " b"]
    assert parse_runtime_list("") == []
    assert parse_runtime_list("a,,b,") == ["a", "", "b", ""]


def test_suspect_adds_both_names_and_the_grad_kernels_the_model_runs(db):
    bl = _suggest(db, _trace(ADAM_STEP), suspects=("matmul_v2",))
    names = bl.export.split('"')[1].split(",")
    for n in ("matmul_v2", "matmul", "matmul_v2_grad", "matmul_grad"):
        assert n in names
    assert " " not in bl.export.split("=", 1)[1]
    sus = [e for e in bl.entries if e.reason == "suspect"]
    assert {e.kernel for e in sus} == {"matmul", "matmul_grad"}


def test_entry_without_a_cpu_kernel_for_the_dtype_is_refused_with_the_error():
    # adam with float16 parameters: Paddle 3.3.1 registers CPU adam for float32/float64 only
    assert cpu_kernel_dtypes("adam") == {"float32", "float64"}


def test_refusal_in_a_suggestion(db):
    step = [("adam", "optimizer", [_t(2, "float16"), _t(6, "float16"), _t(7, shape=(1,)),
                                   _t(8), _t(9)], [_t(2, "float16"), _t(8), _t(9)])]
    bl = _suggest(db, _trace(step))
    assert bl.export == "" and [e.kernel for e in bl.refused] == ["adam"]
    r = bl.refused[0].refusal
    assert "no CPU `adam` kernel for float16" in r
    assert "is not registered and fail to fallback to CPU one." in r
    assert "Can not fallback adam from custom_device to CPU" in r
    assert "refused" in bl.summary


def test_current_entries_are_judged_like_the_runtime(db):
    bl = _suggest(db, _trace(ADAM_STEP), current="adam,adam_, adam,matmul,,conv2d")
    status = {c.token: c.status for c in bl.current}
    assert status == {"adam": "needed", "adam_": "never-matches", " adam": "never-matches",
                      "matmul": "not-needed", "": "empty", "conv2d": "not-run"}
    detail = {c.token: c.detail for c in bl.current}
    assert "does not trim" in detail[" adam"] and "the kernel is `adam`" in detail["adam_"]


def test_known_issue_matches_by_snapshot_date_and_framework_version():
    t = load_known_issues()
    hit = t.matching("paddle", "PaddleCustomDevice", "adam", "2024-10-18T16:08:21+08:00", "3.3.1")
    assert [i.id for i in hit] == ["paddle-npu-adam-amsgrad"]
    assert t.matching("paddle", "PaddleCustomDevice", "adam", "2025-01-02", "3.3.1") == []
    assert t.matching("paddle", "PaddleCustomDevice", "adam", "2024-10-18", "2.6.2") == []
    assert t.release_date("paddle", "3.3.1") == "2026-03-24"


def test_known_issue_table_rejects_unknown_keys():
    from opdb.errors import ParseError

    bad = "issues:\n  - {id: x, framework: paddle, colour: red}\n"
    with pytest.raises(ParseError, match="unknown key"):
        parse_known_issues(bad)


def test_drift_lines_parse_and_int_scalar_retype_is_likely():
    c = parse_drift("retyped: strides_t (const std::vector<int>&) -> strides "
                    "(const std::vector<int64_t>&) at 2")
    assert c == Change("retyped", "strides_t", "const std::vector<int>&", "strides",
                       "const std::vector<int64_t>&", 2)
    assert parse_drift("added: amsgrad (bool) at 17").name == "amsgrad"
    assert _retype_dygraph(Change("retyped", "k", "int", "k", "int64_t"))[0] == "likely"
    assert _retype_dygraph(Change("retyped", "e", "float", "e", "double"))[0] == "certain"


@pytest.mark.slow
def test_cli_and_report_section_give_the_same_line(tmp_path, capsys):
    from analyzer.cli import main

    model = str(FIXTURES / "tiny_paddle_pool_adam.py")
    assert main(["blacklist", model, "--framework", "paddle", "--json",
                 "-o", str(tmp_path / "r")]) == 0
    printed = json.loads(capsys.readouterr().out)
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["blacklist"] == printed
    assert printed["export"].startswith('export CUSTOM_DEVICE_BLACK_LIST="adam,pool2d,')
    md = (tmp_path / "r" / "report.md").read_text()
    assert printed["export"] in md
    # every name of the line has its reason and severity in the section's table
    for name in printed["export"].split('"')[1].split(","):
        assert any(line.startswith(f"| `{name}` |") and ("certain" in line or "likely" in line)
                   for line in md.splitlines()), name
    assert "CUSTOM_DEVICE_BLACK_LIST" not in " ".join(report["notes"])
    from markupsafe import escape

    assert str(escape(printed["export"])) in (tmp_path / "r" / "report.html").read_text()
    # outputs are refused before the model runs again
    assert main(["blacklist", model, "--framework", "paddle", "-o", str(tmp_path / "r")]) != 0
    assert "already exists" in capsys.readouterr().err


def test_cli_refuses_torch(capsys):
    from analyzer.cli import main

    assert main(["blacklist", "x.py", "--framework", "torch"]) != 0
    assert "Paddle's custom-device runtime only" in capsys.readouterr().err


def test_known_issue_table_reads_the_same_with_libyaml_as_with_pure_python(monkeypatch):
    """The table is parsed with libyaml when PyYAML has it; PyYAML's own parser (and its
    error messages) is the reference: same records, same line numbers."""
    import yaml

    import opdb.known_issues as ki

    text = ki.SOURCE.read_text(encoding="utf-8")
    fast = parse_known_issues(text)
    monkeypatch.setattr(ki, "_compose_and_load",
                        lambda t: (yaml.compose(t), yaml.safe_load(t)))
    assert parse_known_issues(text) == fast and all(i.line > 0 for i in fast.issues)
