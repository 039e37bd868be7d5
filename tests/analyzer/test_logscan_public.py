"""`opscan log` on logs of real NPU runs posted publicly (tests/fixtures/logs/public/, sources
in its README.md): every file gives exactly its hand labels (labels.json, written before the
scanner was run on them), and each line-shape mechanism those logs needed is pinned here on
its own: wrapped lines, escaped newlines, ANSI codes, CRLF, rank / vLLM prefixes, the aclnn
call errors, the dtype-cast warning, Paddle's `[operator < X > error]` trailer."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.logscan.model import join_scan, scan_logs
from analyzer.logscan.reader import FileStats, scan_file
from analyzer.logscan.score import render_table, score_labels, totals
from analyzer.logscan.shapes import shapes_for

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public"
LABELS = PUBLIC / "labels.json"
HELDOUT = PUBLIC / "labels_heldout.json"  # labelled after the fixes for LABELS, scored unseen


def _ops(paths, fw, prefilter="auto"):
    rep = scan_logs(paths, fw, prefilter=prefilter)
    return {(o.op, o.kind): o.count for o in rep.ops}


def _write(tmp_path, name, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_every_public_log_gives_exactly_its_labels(prefilter):
    rows = score_labels(LABELS, prefilter)
    bad = {r.file: (r.misses, r.extras, r.count_off) for r in rows
           if r.misses or r.extras or r.count_off}
    assert bad == {}
    t = totals(rows)
    assert t["files"] == 30 and t["expected"] == 27 and t["recall"] == t["precision"] == 1.0
    assert render_table(rows) == render_table(score_labels(LABELS, prefilter))  # deterministic


def test_labels_name_only_known_kinds_and_existing_files():
    from analyzer.logscan.shapes import KINDS

    files = [f for lab in (LABELS, HELDOUT) for f in json.loads(lab.read_text())["files"]]
    assert {e["kind"] for f in files for e in f["expect"]} <= set(KINDS)
    assert sorted(f["file"] for f in files) == sorted(p.name for p in PUBLIC.glob("*.log"))


# ---------------------------------------------------------------- wrapped lines

@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_a_line_wrapped_at_a_fixed_width_is_joined(prefilter):
    # MinerU #1941: `docker logs` cut both warnings at 100 columns, mid-word
    f = PUBLIC / "t02_mineru_1941_wrapped.log"
    rep = scan_logs([f], "torch", prefilter=prefilter)
    assert {(o.op, o.kind): (o.count, o.first.rsplit(":", 1)[1]) for o in rep.ops} == {
        ("torchvision::nms", "fallback"): (1, "1"),
        ("aten::isin.Tensor_Tensor_out", "fallback"): (1, "3")}
    nms = next(o for o in rep.ops if o.op == "torchvision::nms")
    assert "backend and will fall back" in nms.line  # the joined text, no newline inside
    assert rep.files[0].hits == 2 and rep.files[0].lines == 4


def _wrap(line: bytes, width: int) -> bytes:
    return b"\n".join(line[i:i + width] for i in range(0, len(line), width)) + b"\n"


@pytest.mark.parametrize("width", [80, 100, 120])
def test_wrapping_at_any_width_and_any_chunk_boundary_gives_the_same_ops(tmp_path, width):
    src = (PUBLIC / "t01_mineru_1695.log").read_bytes()
    wrapped = b"noise line\n" + b"".join(_wrap(x, width) for x in src.splitlines())
    p = _write(tmp_path, "w.log", wrapped)
    want = _ops([PUBLIC / "t01_mineru_1695.log"], "torch")
    assert _ops([p], "torch", "grep") == want
    grep_lines = [(h.hit, h.line) for h in scan_file(p, shapes_for("torch"), prefilter="grep")]
    for chunk in (5, 64, 97, 1 << 20):  # the python reader holds a candidate back at a boundary
        st = FileStats(str(p))
        got = [(h.hit, h.line) for h in scan_file(p, shapes_for("torch"), st, chunk, "python")]
        assert got == grep_lines, chunk
        assert st.lines == wrapped.count(b"\n")


def test_a_continuation_that_matches_alone_is_not_swallowed(tmp_path):
    lines = (PUBLIC / "t01_mineru_1695.log").read_bytes().splitlines(keepends=True)
    cut = lines[0][:60] + b"\n"  # a line cut short (a crash mid-write), then a whole one
    p = _write(tmp_path, "c.log", cut + lines[1])
    assert _ops([p], "torch") == {("aten::isin.Tensor_Tensor_out", "fallback"): 1}


def test_crlf_wrapped_lines_are_joined_without_their_carriage_returns(tmp_path):
    src = (PUBLIC / "t02_mineru_1941_wrapped.log").read_bytes().replace(b"\n", b"\r\n")
    p = _write(tmp_path, "crlf.log", src)
    assert _ops([p], "torch") == _ops([PUBLIC / "t02_mineru_1941_wrapped.log"], "torch")
    rep = scan_logs([p], "torch")
    assert all("\r" not in o.line and "\r" not in o.op for o in rep.ops)


# ---------------------------------------------------------------- one physical line, many

@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_escaped_newlines_of_an_embedded_log_are_lines(tmp_path, prefilter):
    # a log inside a JSON string (sglang #14159 shape): each `\n`-separated part is a line
    real = (PUBLIC / "t03_llamafactory_4135_ranks.log").read_bytes().splitlines()[1:4]
    embedded = b'{"message":"' + b"\\n".join(real) + b'\\n"}\n'
    p = _write(tmp_path, "json.log", embedded)
    assert _ops([p], "torch", prefilter) == {("aten::isin.Tensor_Tensor_out", "fallback"): 3}


@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_a_log_flattened_onto_one_line_gives_every_event(tmp_path, prefilter):
    # vllm #8054 (h06) shape: a quoted log's lines joined by spaces into one physical line
    t04 = (PUBLIC / "t04_vllm_omni_755.log").read_bytes().splitlines()
    ranks = (PUBLIC / "t03_llamafactory_4135_ranks.log").read_bytes().splitlines()[1:3]
    p = _write(tmp_path, "flat.log", b" ".join([*ranks, *t04]) + b"\n")
    assert _ops([p], "torch", prefilter) == {
        ("aten::isin.Tensor_Tensor_out", "fallback"): 2,
        ("aten::_scaled_dot_product_efficient_attention", "fallback"): 1,
        ("aten::_scaled_dot_product_efficient_attention", "failed"): 1}


def test_ansi_colour_codes_are_dropped_before_matching(tmp_path):
    line = (PUBLIC / "t01_mineru_1695.log").read_bytes().splitlines()[0]
    coloured = (line.replace(b"[W ", b"\x1b[33m[W ", 1).replace(b"Warning:", b"Warning:\x1b[0m", 1)
                .replace(b"'torchvision::nms'", b"'\x1b[1mtorchvision::nms\x1b[0m'"))
    p = _write(tmp_path, "ansi.log", coloured + b"\n")
    rep = scan_logs([p], "torch")
    assert [(o.op, o.kind) for o in rep.ops] == [("torchvision::nms", "fallback")]


def test_rank_vllm_and_prose_prefixes_do_not_hide_a_line():
    assert _ops([PUBLIC / "t03_llamafactory_4135_ranks.log"], "torch") == {
        ("aten::isin.Tensor_Tensor_out", "fallback"): 5}
    assert _ops([PUBLIC / "t08_llamafactory_6671_interleaved.log",
                 PUBLIC / "t06_llamafactory_4836_inline.log"], "torch") == {
        ("aten::isin.Tensor_Tensor_out", "fallback"): 2}


# ---------------------------------------------------------------- torch_npu wordings

def test_the_fallback_wording_without_the_article():
    assert _ops([PUBLIC / "t07_ms_swift_1047_retyped.log"], "torch") == {
        ("aten::isin.Tensor_Tensor_out", "fallback"): 1}


def test_aclnn_call_failures_in_both_torch_npu_wordings():
    files = [PUBLIC / f for f in ("t11_vllm_ascend_4859_zero.log", "t13_vllm_ascend_6636_quant.log",
                                  "t14_vllm_ascend_16359_opplugin.log",
                                  "t16_llamafactory_4165_cast.log")]
    rep = scan_logs(files, "torch")
    got = {o.op: (o.kind, o.count, o.dtypes) for o in rep.ops}
    assert got == {"aclnnInplaceZero": ("npu-error", 1, []),
                   "aclnnQuantMatmulWeightNz": ("npu-error", 1, ["float16"]),  # EZ1001 line below
                   "aclnnChunkGatedDeltaRule": ("npu-error", 1, ["float16"]),
                   "aclnnCast": ("npu-error", 2, ["bfloat16"])}  # `detail:EZ1001: ... DT_BFLOAT16`


def test_an_ez1001_detail_line_alone_is_no_event(tmp_path):
    detail = (PUBLIC / "t13_vllm_ascend_6636_quant.log").read_bytes().splitlines()[2]
    p = _write(tmp_path, "d.log", detail + b"\n")
    rep = scan_logs([p], "torch")
    assert rep.ops == [] and rep.files[0].hits == 0


def test_an_npu_function_error_from_a_runtime_api_is_no_op():
    assert _ops([PUBLIC / "t17_vllm_ascend_8981_runtime_api.log",
                 PUBLIC / "t18_paddleocr_npu_1_init.log"], "torch") == {}


def test_the_double_cast_warning_and_not_the_banner():
    assert _ops([PUBLIC / "t10_safetensors_661_double.log",
                 PUBLIC / "t20_vllm_ascend_898_banner.log"], "torch") == {
        ("double->float", "dtype-cast"): 1}  # the op is the dtype pair, as the line words it


def test_cann_optype_wording_of_cann_8():
    # vllm-ascend #4454, #1383: `Optype [TransData] of Ops kernel [AIcoreEngine] is unsupported`
    rep = scan_logs([PUBLIC / "h01_vllm_ascend_4454_transdata.log",
                     PUBLIC / "h02_vllm_ascend_1383_transdata.log"], "torch")
    assert [(o.op, o.kind, o.count, o.backends) for o in rep.ops] == [
        ("TransData", "cann-unsupported", 3,
         ["DNN_VM_HOST_CPU_OP_STORE", "aicpu_ascend_kernel", "AIcoreEngine"])]


@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_the_heldout_logs_give_exactly_their_labels(prefilter):
    rows = score_labels(HELDOUT, prefilter)
    assert {r.file: (r.misses, r.extras, r.count_off) for r in rows
            if r.misses or r.extras or r.count_off} == {}


# ---------------------------------------------------------------- Paddle shapes

def test_paddle_operator_trailer_names_the_op_that_raised():
    assert _ops([PUBLIC / "p03_paddleocr_11337_hard_swish.log",
                 PUBLIC / "p04_paddleocr_13647_elementwise_add.log",
                 PUBLIC / "p06_paddledetection_5581_place.log"], "paddle") == {
        ("hard_swish", "failed"): 1, ("elementwise_add", "failed"): 1,
        ("gaussian_random", "failed"): 1}


def test_a_trailer_repeating_the_error_above_is_one_event(tmp_path):
    msg = (PUBLIC / "p09_paddleocr_8118_ceil.log").read_bytes()
    trailer = b"  [operator < ceil > error]\n"
    other = b"  [operator < floor > error]\n"
    p = _write(tmp_path, "t.log", msg + trailer + b"noise\n" * 5 + trailer + other)
    for prefilter in ("grep", "python"):
        rep = scan_logs([p], "paddle", prefilter=prefilter)
        assert {(o.op, o.kind): o.count for o in rep.ops} == {
            ("ceil", "failed"): 2, ("floor", "failed"): 1}, prefilter  # the 2nd ceil is far
        assert rep.files[0].hits == 3


def test_older_and_pir_paddle_failure_wordings():
    assert _ops([PUBLIC / "p09_paddleocr_8118_ceil.log",
                 PUBLIC / "p05_paddlenlp_9691_pir.log"], "paddle") == {
        ("ceil", "failed"): 1, ("full_with_tensor", "failed"): 1}


def test_join_puts_aclnn_errors_and_casts_with_the_unmatched(tmp_path):
    from analyzer.report.sample import sample_report

    scan = sample_report().to_json()
    scan.update(framework="torch", target="op-plugin@master", verdicts=[])
    p = tmp_path / "report.json"
    p.write_text(json.dumps(scan))
    rep = scan_logs([PUBLIC / "t16_llamafactory_4165_cast.log",
                     PUBLIC / "t10_safetensors_661_double.log"], "torch")
    j = join_scan(rep, str(p))
    assert j.missed == [] and len(j.unmatched) == 2
