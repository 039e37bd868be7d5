"""Property tests for every parser (issue 8): random bytes and mutated real lines never give
a traceback or a hang; the only exception a parser may raise is an OpscanError (one line).

Real lines come from the repository's fixtures and committed extracts. Examples are
derandomized so CI is reproducible; a generous per-test timeout catches a hang.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opdb.errors import OpscanError
from opdb.ingest import cpplex

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
SOURCES = ROOT / "opdb" / "sources"

PROFILE = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
pytestmark = pytest.mark.timeout(300)

SPECIALS = list("(){}[]<>\"'/*#\\\n\r\t,;:=&|R") + ["//", "/*", "*/", 'R"(', ')"', "1'0",
                                                   "\\\n", "#if 1\n", "#endif\n", "\x00", "\ufffd"]


def _lines(*paths: Path, limit: int = 400) -> list[str]:
    out: list[str] = []
    for p in paths:
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        for f in files:
            if f.is_file():
                out += f.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    out = [ln for ln in out if ln.strip()]
    step = max(1, len(out) // limit)
    return out[::step][:limit] or ["x\n"]


def mutated(lines: list[str]):
    """Real lines, a few of them cut, doubled or with special characters inserted."""
    @st.composite
    def build(draw):
        picked = draw(st.lists(st.sampled_from(lines), min_size=1, max_size=25))
        text = "".join(picked)
        for _ in range(draw(st.integers(0, 6))):
            if not text:
                break
            i = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(("insert", "delete", "cut", "dup")))
            if op == "insert":
                text = text[:i] + draw(st.sampled_from(SPECIALS)) + text[i:]
            elif op == "delete":
                text = text[:i] + text[i + 1:]
            elif op == "cut":
                text = text[:i]
            else:
                text = text[:i] + text[i:i + 40] + text[i:]
        return text
    return build()


def garbage():
    """Random bytes decoded as a reader would (replacement characters for invalid UTF-8)."""
    return st.binary(max_size=2000).map(lambda b: b.decode("utf-8", errors="replace"))


def texts(lines):
    return st.one_of(garbage(), st.text(max_size=500), mutated(lines))


def _ok(fn, *args):
    try:
        return fn(*args)
    except OpscanError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
        return None


def _tmpfile(text: str, name: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix="opscan-prop-"))
    p = d / name
    p.write_text(text, encoding="utf-8", errors="surrogateescape")
    return p


CPP_LINES = _lines(FIX / "cann", FIX / "paddle" / "checkout", FIX / "torch" / "op_plugin_checkout",
                   FIX / "paddle" / "phi_include", FIX / "torch" / "malformed" / "Unbalanced.cpp")


# ---------------------------------------------------------------- the shared lexer

@PROFILE
@given(texts(CPP_LINES))
def test_lexer_views_keep_offsets_and_newlines(text):
    lexed = cpplex.lex(text)
    for view in (lexed.blank(), lexed.blank(literals=True), lexed.blank(True, True, True)):
        assert len(view) == len(text)
        assert [i for i, c in enumerate(view) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]
    for a, b in lexed.comments + [(a, b) for a, b, _ in lexed.literals] + lexed.preproc:
        assert 0 <= a <= b <= len(text)


def test_lexer_cases():
    src = ('int a = 1\'000\'000; // c "x"\n'
           'auto s = R"d(a ) " // not a comment )d"; char q = \'"\';\n'
           '#define X(a) \\\n  "y" /* c */\n'
           'auto u = u8R"(\\)"; /* multi\nline */ int b = 0x7fff\'ffff;\n'
           'const char* t = "unterminated\n')
    lexed = cpplex.lex(src)
    comments = [src[a:b] for a, b in lexed.comments]
    assert comments == ['// c "x"', "/* c */", "/* multi\nline */"]
    lits = [(src[a:b], k) for a, b, k in lexed.literals]
    assert lits == [('a ) " // not a comment ', "raw"), ('"', "chr"), ("y", "str"), ("\\", "raw"),
                    ("unterminated", "str")]
    assert [src[a:b] for a, b in lexed.preproc] == ['#define X(a) \\\n  "y" /* c */']
    assert "1'000'000" in lexed.blank(literals=True)


def test_line_comment_continues_after_backslash_newline():
    src = "// a \\\n b\nint x;"
    lexed = cpplex.lex(src)
    assert [src[a:b] for a, b in lexed.comments] == ["// a \\\n b"]


def test_line_index():
    idx = cpplex.LineIndex("a\nb\n\nc")
    assert [idx.line(i) for i in (0, 1, 2, 3, 4, 5)] == [1, 1, 2, 2, 3, 4]


# ---------------------------------------------------------------- C++ parsers

@PROFILE
@given(texts(CPP_LINES))
def test_aclnn_header_parser(text):
    from opdb.ingest.aclnn_headers import parse_header_text
    _ok(parse_header_text, text, "aclnn_x.h")


@PROFILE
@given(texts(CPP_LINES))
def test_op_plugin_cpp_parser(text):
    from opdb.ingest.op_plugin import parse_cpp_functions
    _ok(parse_cpp_functions, text, "XKernelNpuOpApi.cpp")


@PROFILE
@given(texts(CPP_LINES))
def test_paddle_kernel_file_parser(text):
    from opdb.ingest import paddle_custom_device as pcd
    fs = pcd.scan_text(text, "backends/npu/kernels/x_kernel.cc")
    _ok(pcd.registrations, fs)


@PROFILE
@given(texts(CPP_LINES))
def test_phi_header_parser(text):
    from opdb.ingest.paddle_catalog import parse_header_text
    _ok(parse_header_text, text, "paddle/phi/kernels/x_kernel.h")


# ---------------------------------------------------------------- YAML, JSON, schemas

TORCH_YAML_LINES = _lines(FIX / "torch" / "wheel" / "npu_native_functions_by_codegen.yaml",
                          SOURCES / "torch_npu" / "2.13.0" / "npu_native_functions_by_codegen.yaml")
OPP_YAML_LINES = _lines(FIX / "torch" / "op_plugin_checkout" / "op_plugin" / "config")
PADDLE_YAML_LINES = _lines(FIX / "paddle" / "yaml")
SCHEMA_LINES = [ln.split("func:", 1)[1] for ln in TORCH_YAML_LINES if "func:" in ln] or ["abs(Tensor self) -> Tensor"]


@PROFILE
@given(texts(TORCH_YAML_LINES))
def test_torch_npu_codegen_yaml(text):
    from opdb.ingest.torch_npu_wheel import parse_codegen_yaml, parse_version_py
    _ok(parse_codegen_yaml, text)
    _ok(parse_version_py, text)


@PROFILE
@given(texts(SCHEMA_LINES))
def test_torch_schema_parser(text):
    from opdb.ingest.torch_catalog import parse_schema
    _ok(parse_schema, text)


@PROFILE
@given(texts(OPP_YAML_LINES))
def test_op_plugin_functions_yaml(text):
    from opdb.ingest.op_plugin import parse_functions_yaml
    _ok(parse_functions_yaml, _tmpfile(text, "op_plugin_functions.yaml"))


@PROFILE
@given(texts(PADDLE_YAML_LINES))
def test_paddle_op_yaml(text):
    from opdb.ingest.paddle_yaml import load_op_compat, load_op_file
    p = _tmpfile(text, "ops.yaml")
    _ok(load_op_file, p)
    _ok(load_op_compat, p)


@PROFILE
@given(st.one_of(garbage(), st.text(max_size=200), mutated(["dense_x_GPU_float32", "adam_npu_ALL_LAYOUT_float16", "(NPU, Undefined(AnyLayout), float32)"])))
def test_paddle_kernel_key(text):
    from opdb.ingest.paddle_live import parse_kernel_key
    _ok(parse_kernel_key, text)


CATALOG_LINES = _lines(FIX / "cann" / "catalog" / "aclnn_apis.jsonl") + \
    _lines(SOURCES / "cann" / "aclnn_apis.jsonl", limit=60)


@PROFILE
@given(texts(CATALOG_LINES))
def test_cann_catalog_jsonl(text):
    from opdb.ingest.cann_catalog import load_catalog
    _ok(load_catalog, _tmpfile(text, "aclnn_apis.jsonl"))


SNAPSHOT_LINES = _lines(ROOT / "opdb" / "snapshot" / "adapters.jsonl", limit=80)


@PROFILE
@given(texts(SNAPSHOT_LINES))
def test_snapshot_table_reader(text):
    from opdb.snapshot import read_table
    _ok(lambda p: list(read_table(p, "adapters")), _tmpfile(text, "adapters.jsonl"))


REPORT = json.dumps({"framework": "torch", "verdicts": [
    {"op": "aten::abs", "category": "cann-available", "candidates": [{"api": "aclnnAbs"}]},
    {"op": "aten::add.Tensor", "category": "supported", "candidates": []}]}, indent=1)


@PROFILE
@given(texts(REPORT.splitlines(keepends=True)))
def test_opgen_report_reader(text):
    from codegen.api import report_gaps
    _ok(report_gaps, _tmpfile(text, "report.json"))


@PROFILE
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=30))
def test_report_validator_on_any_json(data):
    from analyzer.report.json_report import validate
    _ok(validate, {"schema_version": 1, "verdicts": data} if isinstance(data, dict) else data)


def test_no_temp_files_left(tmp_path):
    # the helpers above leave their temp dirs in the system temp dir only
    assert os.path.isdir(tempfile.gettempdir())
