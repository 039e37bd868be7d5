"""torch_npu wheel ingester: fixture wheels built in the test, plus the committed real releases."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest import torch_npu_wheel as tw
from opdb.model import to_row

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
SOURCES = tw.default_sources_dir()
from opdb.sources.torch_npu.fetch import RELEASES  # noqa: E402  (every shipped release line)


def _make_wheel(tmp_path: Path, yaml_file: Path = FIX / "wheel" / "npu_native_functions_by_codegen.yaml",
                version_py: Path = FIX / "wheel" / "version.py", name="torch_npu-2.13.0-cp311-none.whl"):
    whl = tmp_path / name
    with zipfile.ZipFile(whl, "w") as zf:
        zf.write(yaml_file, tw.CODEGEN_YAML)
        zf.write(version_py, tw.VERSION_PY)
        zf.writestr("torch_npu/__init__.py", "raise ImportError('must never be imported')\n")
    return whl


@pytest.fixture(scope="module")
def fixture_result(tmp_path_factory):
    return tw.load_wheel(_make_wheel(tmp_path_factory.mktemp("whl")))


def _by_op(result):
    return {a.op: a for a in result.adapters}


def test_fixture_wheel_op_names_and_namespaces(fixture_result):
    ops = _by_op(fixture_result)
    assert sorted(ops) == [
        "aten::_local_scalar_dense", "aten::_thnn_fused_gru_cell", "aten::add.Tensor",
        "aten::add.out", "aten::clone", "aten::dequantize.self", "aten::embedding",
        "aten::matmul", "aten::squeeze.dim",
        "npu::copy_memory_", "npu::npu_format_cast", "npu::npu_gather_backward",
        "npu::npu_rms_norm",
    ]
    add = ops["aten::add.Tensor"]
    assert add.provider == "torch_npu" and add.version == "2.13.0" and add.framework == "torch"
    assert add.schema == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert add.source.source == "torch_npu-wheel"
    assert add.source.path == tw.CODEGEN_YAML
    assert add.source.line == 25  # 1-based line of the `- func:` entry in the fixture


def test_bare_names_get_schema_from_installed_torch(fixture_result):
    import torch  # installed by scripts/setup.sh
    assert torch.__version__.startswith("2.13")
    ops = _by_op(fixture_result)
    assert ops["aten::matmul"].schema == "matmul(Tensor self, Tensor other) -> Tensor"
    assert ops["aten::squeeze.dim"].schema.startswith("squeeze.dim(Tensor(a) self, int dim)")
    assert "name-only entry (torch_npu-native kernel)" in ops["aten::clone"].notes
    assert "op_api=true" in ops["aten::clone"].notes


def test_bare_names_without_schema_resolution(tmp_path):
    res = tw.load_wheel(_make_wheel(tmp_path), resolve_schemas=False)
    matmul = _by_op(res)["aten::matmul"]
    assert matmul.schema == "" and "schema not in the wheel" in matmul.notes


def test_bare_supported_name_of_custom_op_is_not_duplicated(fixture_result):
    ops = _by_op(fixture_result)
    assert "aten::copy_memory_" not in ops and "npu::copy_memory_" in ops


def test_symint_section_marks_but_does_not_add(fixture_result):
    ops = _by_op(fixture_result)
    assert "symint" in ops["aten::embedding"].notes
    assert "symint" in ops["npu::npu_gather_backward"].notes
    assert "aten::new_empty_strided" not in ops  # only listed in symint


def test_same_op_in_two_sections_is_one_adapter(fixture_result):
    gru = _by_op(fixture_result)["aten::_thnn_fused_gru_cell"]
    assert gru.notes[0] == "section=autograd"
    assert any(n.startswith("also in section=supported (line ") for n in gru.notes)


def test_provenance_and_determinism(tmp_path, fixture_result):
    again = tw.load_wheel(_make_wheel(tmp_path))
    assert [to_row(a) for a in again.adapters] == [to_row(a) for a in fixture_result.adapters]
    prov = fixture_result.provenance[0]
    assert prov.version == "2.13.0" and prov.rows == 13 and len(prov.sha256) == 64
    assert "0123456789ab" in prov.description


def test_installed_tree(tmp_path, fixture_result):
    site = tmp_path / "site-packages"
    (site / "torch_npu" / "csrc" / "aten").mkdir(parents=True)
    shutil.copy(FIX / "wheel" / "npu_native_functions_by_codegen.yaml", site / tw.CODEGEN_YAML)
    shutil.copy(FIX / "wheel" / "version.py", site / tw.VERSION_PY)
    for root in (site, site / "torch_npu"):
        res = tw.load_installed(root)
        assert [a.op for a in res.adapters] == [a.op for a in fixture_result.adapters]


@pytest.mark.parametrize("name, line, words", [
    ("codegen_no_func.yaml", 6, "has no `func:` key"),
    ("codegen_bad_yaml.yaml", 6, "flow sequence started at line 4"),
    ("codegen_bad_schema.yaml", 3, "unbalanced parentheses"),
    ("codegen_unknown_section.yaml", 4, "unknown section `experimental`"),
])
def test_malformed_yaml_names_file_and_line(tmp_path, name, line, words):
    whl = _make_wheel(tmp_path, yaml_file=FIX / "malformed" / name)
    with pytest.raises(ParseError) as err:
        tw.load_wheel(whl)
    assert err.value.line == line
    assert words in str(err.value)
    assert f":{line}:" in str(err.value)


def test_not_a_wheel(tmp_path):
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(tw.WheelError, match="cannot read wheel"):
        tw.load_wheel(bad)
    empty = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("torch_npu/__init__.py", "")
    with pytest.raises(tw.WheelError, match="no torch_npu/csrc/aten"):
        tw.load_wheel(empty)


def test_version_py_parsing():
    assert tw.parse_version_py("__version__ = '2.1.0.post17'\ngit_version = 'abc'\n") == \
        ("2.1.0.post17", "abc")
    with pytest.raises(ParseError):
        tw.parse_version_py("x = 1\n")
    assert tw.torch_minor("2.1.0.post17") == "2.1" and tw.torch_minor("2.13.0+cpu") == "2.13"


# ------------------------------------------------------ the committed real releases


@pytest.fixture(scope="module")
def committed():
    return tw.load_committed_releases()


def test_committed_files_match_provenance():
    prov = json.loads((SOURCES / "provenance.json").read_text())
    assert sorted(prov["releases"]) == sorted(RELEASES)
    import hashlib
    for version, rel in prov["releases"].items():
        assert rel["pypi_version"] == version and len(rel["git_version"]) == 40
        entry = rel["files"][tw.CODEGEN_YAML]
        data = (SOURCES / entry["extracted_to"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_real_2_13_adapts_over_a_thousand_aten_overloads(committed):
    ops = tw.adapted_ops(committed, "2.13.0")
    aten = {o for o in ops if o.startswith("aten::")}
    assert len(aten) > 1000
    for op in ("aten::matmul", "aten::scaled_dot_product_attention", "aten::lstm.input",
               "aten::one_hot", "aten::adaptive_avg_pool2d", "aten::add.Tensor",
               "aten::erfinv", "npu::npu_fusion_attention"):
        assert op in ops, op
    assert not {o for o in ops if not o.startswith(("aten::", "npu::"))}


def test_real_release_counts(committed):
    counts = {v: len(tw.adapted_ops(committed, v)) for v in RELEASES}
    assert counts == {"2.1.0.post17": 1393, "2.3.1.post6": 1328, "2.4.0.post4": 1328,
                      "2.5.1.post1": 1368, "2.6.0.post5": 1406, "2.7.1.post11": 1521,
                      "2.8.0.post5": 1477, "2.9.1": 1477, "2.10.0.post7": 1531,
                      "2.11.0.post3": 1531, "2.12.0.post3": 1531, "2.13.0": 1500, "2.14.0": 1500}


def test_arrivals_across_releases(committed):
    have = {v: tw.adapted_ops(committed, v) for v in RELEASES}

    def first(op):
        return next((v for v in RELEASES if op in have[v]), None)

    assert first("aten::erfinv") == "2.1.0.post17"          # already in the oldest release
    assert first("aten::_thnn_fused_gru_cell") == "2.5.1.post1"
    assert first("aten::dequantize.self") == "2.3.1.post6"
    assert first("aten::_fused_adam_") == "2.7.1.post11"
    assert first("aten::_scaled_mm") == "2.7.1.post11"
    assert first("aten::linalg_cholesky") == "2.7.1.post11"


def test_all_bare_names_of_2_13_resolve_in_torch_2_13(committed):
    import torch  # installed by scripts/setup.sh
    assert torch.__version__.startswith("2.13")
    missing = [a.op for a in committed.adapters if a.version == "2.13.0" and not a.schema]
    assert missing == []


def test_adapted_ops_unknown_version(committed):
    with pytest.raises(OpscanError, match="no torch_npu 9.9 adapters"):
        tw.adapted_ops(committed, "9.9")


def test_committed_release_dir_equals_wheel():
    # the wheel comes the way a user gets it: scripts/setup.sh runs `python -m opdb.wheels`
    # (pip download --no-deps into the user cache); fetched here when the cache is empty
    from opdb.wheels import fetch_wheel

    a = tw.load_wheel(fetch_wheel("2.13.0"))
    b = tw.load_release_dir(SOURCES / "2.13.0")
    assert [to_row(x) for x in a.adapters] == [to_row(x) for x in b.adapters]


def test_fetch_check_against_the_wheels():
    from opdb.sources.torch_npu import fetch
    from opdb.wheels import wheel_cache_dir

    cache = wheel_cache_dir()
    assert fetch.run(list(RELEASES), cache, check=True, force=False) == [f"{v}: OK" for v in RELEASES]
