"""`opscan log` (issue 10): every line shape in the fixtures (written by us, with glog
prefixes and noise) parses to the expected ops; gzip, chunk boundaries, binary garbage,
the scan join, the five formats; hypothesis feeds random bytes and mutated lines."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.logscan.model import scan_logs
from analyzer.logscan.reader import FileStats, scan_file
from analyzer.logscan.render import write_log_reports
from analyzer.logscan.shapes import match_line, shapes_for
from opdb.errors import OpscanError

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
PADDLE = LOGS / "paddle_npu_glog.log"
PIR = LOGS / "paddle_pir_plain.log"
TORCH = LOGS / "torch_npu_run.log"


def _ops(rep):
    return {(o.op, o.kind): (o.count, o.dtypes, o.first.rsplit(":", 1)[-1]) for o in rep.ops}


@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_paddle_shapes_parse_to_the_expected_ops(prefilter):
    rep = scan_logs([PADDLE, PIR], "paddle", prefilter=prefilter)
    assert _ops(rep) == {
        ("argsort", "fallback"): (2, ["int64"], "7"),
        ("warpctc", "fallback"): (1, ["float32"], "11"),
        ("set_value_with_tensor", "fallback"): (1, ["float64"], "12"),  # `fallingback`
        ("adam", "blacklisted"): (1, ["float32"], "13"),
        ("matmul_v2", "blacklisted"): (1, ["float32"], "14"),  # fluid: key before `kernel:`
        ("angle", "failed"): (1, ["complex64"], "19"),
        ("topk", "fallback"): (1, ["float16"], "2"),  # no glog prefix
        ("fused_rms_norm", "failed"): (1, ["bfloat16"], "3"),
    }
    argsort = next(o for o in rep.ops if o.op == "argsort")
    assert argsort.keys == ["(npu, Undefined(AnyLayout), int64)"] and argsort.backends == ["npu"]
    assert argsort.first == f"{PADDLE}:7" and argsort.line.startswith("I1121 22:40:32.227588")
    assert [f.lines for f in rep.files] == [20, 3]


@pytest.mark.parametrize("prefilter", ["grep", "python"])
def test_torch_and_cann_shapes_parse_to_the_expected_ops(prefilter):
    rep = scan_logs([TORCH], "torch", prefilter=prefilter)
    assert _ops(rep) == {
        ("aten::isin.Tensor_Tensor_out", "fallback"): (2, [], "2"),
        ("aten::_embedding_bag", "fallback"): (1, [], "4"),  # compiler_depend.ts prefix
        ("aten::_linalg_eigh.eigenvalues", "failed"): (1, [], "6"),
        ("aten::upsample_bicubic2d_backward.grad_input", "failed"): (1, [], "7"),
        ("aten::foo", "failed"): (1, [], "12"),
        ("SoftmaxCrossEntropyWithLogits", "cann-unsupported"): (1, [], "9"),
        ("DynamicRNNV3", "cann-unsupported"): (1, [], "10"),
        ("aclnnGroupNormSilu", "cann-skew"): (1, [], "11"),
    }
    backends = {o.op: o.backends for o in rep.ops}
    assert backends["aten::_linalg_eigh.eigenvalues"] == ["NPU"]
    assert backends["aten::upsample_bicubic2d_backward.grad_input"] == ["PrivateUse1"]
    assert backends["aten::foo"] == ["NPUTensorId"]


def test_noise_is_not_a_hit():
    shapes = shapes_for("paddle")
    assert match_line("I1121 layer.cc:445] the grad op is missing its input", shapes) is None
    assert match_line("missing npu kernel: ", shapes) is None


def test_gzip_and_tiny_chunks_give_the_same_result(tmp_path):
    gz = tmp_path / "run.log.gz"
    gz.write_bytes(gzip.compress(PADDLE.read_bytes()))
    plain = _ops(scan_logs([PADDLE], "paddle"))
    zipped = scan_logs([gz], "paddle")
    assert zipped.files[0].gzip
    assert {k: v[:2] for k, v in _ops(zipped).items()} == {k: v[:2] for k, v in plain.items()}
    for size in (7, 64, 333):
        st_ = FileStats(str(PADDLE))
        hits = [(h.hit.op, h.line)
                for h in scan_file(PADDLE, shapes_for("paddle"), st_, size, prefilter="python")]
        assert hits == [(h.hit.op, h.line) for h in scan_file(PADDLE, shapes_for("paddle"))]
        assert st_.lines == 20


def test_truncated_gzip_and_binary_garbage_are_tolerated(tmp_path):
    data = gzip.compress(PADDLE.read_bytes() * 50)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(data[: len(data) // 2])
    rep = scan_logs([cut], "paddle")
    assert rep.notes and "ends early" in rep.notes[0]
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\x00\xff" * 200_000 + b"\n" + PADDLE.read_bytes() + b"\xfe\x00garbage")
    for prefilter in ("grep", "python"):
        rep = scan_logs([junk], "paddle", prefilter=prefilter)
        assert _ops(rep)[("argsort", "fallback")][2] == "8", prefilter  # after one junk line


def test_join_with_a_scan(tmp_path):
    from analyzer.report.sample import sample_report

    scan = sample_report().to_json()  # a complete report of the current schema
    scan.update(framework="paddle", framework_version="3.3.1", model="m.py",
                target="PaddleCustomDevice@develop", cpu_route=[],
                verdicts=[_v("argsort", "cann-available"), _v("adam", "signature-drift"),
                          _v("pool2d", "signature-drift"), _v("warpctc", "supported"),
                          _v("matmul", "supported", ["matmul_v2"])])
    p = tmp_path / "report.json"
    p.write_text(json.dumps(scan))
    j = scan_logs([PADDLE], "paddle", scan_report=str(p)).join
    assert j.confirmed == ["adam", "argsort"] and j.not_hit == ["pool2d"]
    assert j.blacklisted == ["adam", "matmul_v2"]
    missed = {m.split(" ")[0]: m for m in j.missed}
    assert set(missed) == {"warpctc", "set_value_with_tensor", "angle"}
    assert "classified warpctc as not a gap" in missed["warpctc"]
    assert "never saw it" in missed["angle"]


def _v(op, cat, aliases=()):
    import dataclasses

    from analyzer.model import OpVerdict

    return dataclasses.asdict(OpVerdict(op=op, category=cat, dtypes=("float32",), calls=1,
                                        phases=["forward"], aliases=list(aliases)))


def test_five_formats_are_deterministic_and_not_overwritten(tmp_path):
    from opdb.errors import OutputExists

    rep = scan_logs([TORCH], "torch").to_json()
    a = write_log_reports(rep, tmp_path / "a")
    b = write_log_reports(rep, tmp_path / "b")
    assert [p.name for p in a] == ["log.md", "log.html", "log.csv", "log.xlsx", "log.json"]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert "| `aten::isin.Tensor_Tensor_out` | fallback | 2 |" in (tmp_path / "a" / "log.md").read_text()
    import openpyxl  # the workbook opens in a real reader: sheets, bold header, the op rows
    wb = openpyxl.load_workbook(tmp_path / "a" / "log.xlsx")
    assert wb.sheetnames == ["summary", "ops"]
    assert wb["summary"]["A1"].value == "summary" and wb["summary"]["B1"].value == rep["summary"]
    ops = wb["ops"]
    assert ops["A1"].font.bold and ops["A2"].value == "aten::isin.Tensor_Tensor_out"
    with pytest.raises(OutputExists):
        write_log_reports(rep, tmp_path / "a")


def test_cli(tmp_path, capsys):
    from analyzer.cli import main

    assert main(["log", str(TORCH), "--framework", "torch", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ops"][0]["op"] == "aten::isin.Tensor_Tensor_out"
    assert main(["log", str(tmp_path / "nope.log"), "--framework", "torch"]) != 0
    assert "cannot read" in capsys.readouterr().err


LINES = [line for f in (PADDLE, PIR, TORCH, *sorted((LOGS / "public").glob("*.log")))
         for line in f.read_bytes().splitlines(keepends=True)]  # real logs too (wrapped lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=512))
def test_fuzz_random_bytes_never_crash(tmp_path, data, chunk):
    p = tmp_path / "fuzz.log"
    p.write_bytes(data)
    st_ = FileStats(str(p))
    for fw in ("paddle", "torch"):
        got = [(h.hit, h.line) for h in scan_file(p, shapes_for(fw), st_, chunk, "python")]
        if not data.startswith(b"\x1f\x8b"):
            assert [(h.hit, h.line) for h in scan_file(p, shapes_for(fw), None, prefilter="grep")] == got
    if not data.startswith(b"\x1f\x8b"):  # else read as a (broken) gzip stream
        assert st_.lines == data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(LINES), st.integers(0, 400), st.binary(max_size=8),
                          st.sampled_from(["insert", "delete", "cut", "keep"])), max_size=20),
       st.integers(min_value=1, max_value=300))
def test_fuzz_mutated_lines_never_crash(tmp_path, edits, chunk):
    out = bytearray()
    for line, pos, junk, how in edits:
        pos %= len(line) + 1
        if how == "insert":
            line = line[:pos] + junk + line[pos:]
        elif how == "delete":
            line = line[:pos] + line[pos + len(junk):]
        elif how == "cut":
            line = line[:pos]
        out += line
    p = tmp_path / "mut.log"
    p.write_bytes(bytes(out))
    hits = {}
    for fw in ("paddle", "torch"):
        got = [(h.hit, h.line) for h in scan_file(p, shapes_for(fw), FileStats(str(p)), chunk,
                                                  "python")]
        assert all(hit.op and line >= 1 for hit, line in got)
        if not out.startswith(b"\x1f\x8b"):
            assert [(h.hit, h.line) for h in scan_file(p, shapes_for(fw), prefilter="grep")] == got
        hits[fw] = got
    if all(how == "keep" for *_, how in edits) and edits:
        # a log with torch lines only is refused as --framework paddle (docs/bad-input.md #18)
        rep = scan_logs([p], "paddle" if hits["paddle"] or not hits["torch"] else "torch")
        assert sum(f.lines for f in rep.files) == bytes(out).count(b"\n") + (
            0 if out.endswith(b"\n") else 1)


def test_every_log_field_is_documented():
    import re

    from analyzer.logscan.model import LOG_SCHEMA

    doc = (Path(__file__).resolve().parents[2] / "docs" / "log-report.md").read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", doc, re.M))

    def fields(schema):
        for name, sub in schema.get("properties", {}).items():
            yield name
            yield from fields(sub)
        if "items" in schema:
            yield from fields(schema["items"])

    assert set(fields(LOG_SCHEMA)) <= documented


def test_a_cut_gzip_log_keeps_the_lines_before_the_cut(tmp_path):
    """gzip.GzipFile dropped what its last read decompressed when the stream was cut: a cut
    log smaller than one read (8 MiB) came out with no line at all (docs/bad-input.md #17)."""
    data = gzip.compress(PADDLE.read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(data[: len(data) * 3 // 4])
    rep = scan_logs([cut], "paddle")
    whole = scan_logs([PADDLE], "paddle")
    assert rep.notes and "ends early" in rep.notes[0]
    assert 0 < sum(f.lines for f in rep.files) < sum(f.lines for f in whole.files)
    assert {o.op for o in rep.ops} and {o.op for o in rep.ops} <= {o.op for o in whole.ops}


def test_gzip_trailing_garbage_keeps_every_line_before_it(tmp_path):
    """Bytes after the last gzip member (a copy tool's padding, a second file appended
    raw): the lines before them are all read, with a note."""
    p = tmp_path / "padded.log.gz"
    p.write_bytes(gzip.compress(PADDLE.read_bytes()) + b"not gzip at all\n")
    rep, whole = scan_logs([p], "paddle"), scan_logs([PADDLE], "paddle")
    assert sum(f.lines for f in rep.files) == sum(f.lines for f in whole.files)
    assert [(o.op, o.count) for o in rep.ops] == [(o.op, o.count) for o in whole.ops]
    assert rep.notes and "ends early" in rep.notes[0]


def test_cann_lines_alone_do_not_make_a_paddle_log_a_torch_one(tmp_path):
    """CANN's lines (AIcoreEngine, libopapi.so) appear under either framework: only the
    other framework's own lines call for `--framework torch`."""
    cann = [line for line in TORCH.read_text().splitlines()
            if "AIcoreEngine" in line or "libopapi" in line]
    p = tmp_path / "paddle_run.log"
    p.write_text("I1121 22:40:30.101125  4331 init.cc:233] ENV ok\n" + "\n".join(cann) + "\n")
    rep = scan_logs([p], "paddle")
    assert not rep.ops and "no fallback or failure lines" in rep.summary
    with pytest.raises(OpscanError, match="is a torch log"):
        scan_logs([TORCH], "paddle")
