"""Tests for opdb.ingest.cann_catalog: the CANN aclnn catalog ingester."""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest.cann_catalog import load_catalog, read_provenance_table
from opdb.model import AclnnApi, Param, from_row, to_row
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cann" / "catalog"
SHARED = (REPO_SOURCES / "cann/aclnn_apis.jsonl")
needs_shared = pytest.mark.skipif(not SHARED.is_file(),
                                  reason=f"shared CANN catalog not present at {SHARED}")

NN = "e5c3fa9327ea95ba26d06227e746923580d10921"
MATH = "c41933244c31e44fd496e3bb3212164f8c48c214"
ALL_12 = ("bfloat16", "bool", "complex128", "complex64", "float16", "float32", "float64",
          "int16", "int32", "int64", "int8", "uint8")


@pytest.fixture(scope="module")
def full():
    return load_catalog(SHARED)


@pytest.fixture(scope="module")
def by_name(full):
    return {a.name: a for a in full.apis}


# ------------------------------------------------------------------ the full shared file

@needs_shared
def test_full_catalog_counts_match_readme(full):
    assert len(full.apis) == 1235
    roles = Counter(p.role for a in full.apis for p in a.params)
    assert sum(roles.values()) == 9309
    # the README's counts, moved by the committed role fixes (role_fixes.json)
    readme = Counter({"input": 7358, "output": 1683, "inout": 268})
    for fx in json.loads(SHARED.with_name("role_fixes.json").read_text())["fixes"]:
        readme[fx["was"]] -= 1
        readme[fx["role"]] += 1
    assert roles == readme


@needs_shared
def test_full_catalog_flags_and_products_match_readme(full):
    assert sum(a.deprecated for a in full.apis) == 12
    assert sum(a.experimental for a in full.apis) == 92
    assert sum(a.internal for a in full.apis) == 9
    assert sum(a.products is not None for a in full.apis) == 1187
    assert sum(bool(a.products) for a in full.apis) == 1183
    assert sum(any(n.startswith("roles: ") for n in a.notes) for a in full.apis) == 22
    assert sum(any(n.startswith("doc prototype differs") for n in a.notes)
               for a in full.apis) == 61
    assert sum(any(n.startswith("signature from doc") for n in a.notes) for a in full.apis) == 222


@needs_shared
def test_full_catalog_sorted_and_deterministic(full):
    names = [a.name for a in full.apis]
    assert names == sorted(names) and len(set(names)) == len(names)
    again = load_catalog(SHARED)
    assert [to_row(a) for a in again.apis] == [to_row(a) for a in full.apis]
    assert again.provenance == full.provenance


@needs_shared
def test_full_catalog_provenance_per_repo(full):
    prov = {p.source: p for p in full.provenance if p.source != "opdb-errata"}
    assert sorted(prov) == ["cann:hicann/ops-cv", "cann:hicann/ops-math", "cann:hicann/ops-nn",
                            "cann:hicann/ops-ras", "cann:hicann/ops-transformer",
                            "cann:mirror-cann/ops-transformer"]
    assert {k: p.rows for k, p in prov.items()} == {
        "cann:hicann/ops-nn": 500, "cann:hicann/ops-math": 417, "cann:hicann/ops-cv": 48,
        "cann:hicann/ops-transformer": 107, "cann:mirror-cann/ops-transformer": 157,
        "cann:hicann/ops-ras": 6}
    sha = hashlib.sha256(SHARED.read_bytes()).hexdigest()
    assert all(p.kind == "cann-catalog" and p.path == "aclnn_apis.jsonl" and p.sha256 == sha
               for p in prov.values())
    assert prov["cann:hicann/ops-nn"].version == NN
    assert prov["cann:hicann/ops-nn"].date == "2026-08-22"
    assert prov["cann:hicann/ops-transformer"].date == "2025-11-15"
    assert prov["cann:mirror-cann/ops-transformer"].date == "2026-07-21"
    assert prov["cann:hicann/ops-ras"].version == "per-file"
    assert prov["cann:hicann/ops-ras"].date == ""


@needs_shared
def test_aclnn_add(by_name):
    add = by_name["aclnnAdd"]
    assert [(p.name, p.ctype, p.role) for p in add.params] == [
        ("self", "const aclTensor*", "input"), ("other", "const aclTensor*", "input"),
        ("alpha", "const aclScalar*", "input"), ("out", "aclTensor*", "output")]
    assert all(p.dtypes == ALL_12 for p in add.params)
    assert add.source.source == "cann:hicann/ops-math"
    assert add.source.version == MATH
    assert add.source.path == "math/add/op_api/aclnn_add.h"
    assert add.source.date == "2026-08-22"
    assert add.products == ("Ascend 950PR/Ascend 950DT",
                            "Atlas A3 训练系列产品/Atlas A3 推理系列产品",
                            "Atlas A2 训练系列产品/Atlas A2 推理系列产品", "Atlas 训练系列产品")
    assert (add.category, add.op_dir) == ("math", "add")
    assert not (add.deprecated or add.experimental or add.internal)
    assert add.notes == ("dtypes: doc restricts or varies dtypes per product: Atlas 训练系列产品",)
    assert add.workspace_signature() == (
        "aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, "
        "const aclScalar* alpha, aclTensor* out, uint64_t* workspaceSize, "
        "aclOpExecutor** executor)")


@needs_shared
def test_aclnn_elu_and_inplace_elu(by_name):
    elu, inplace = by_name["aclnnElu"], by_name["aclnnInplaceElu"]
    assert [(p.name, p.role) for p in elu.params] == [
        ("self", "input"), ("alpha", "input"), ("scale", "input"), ("inputScale", "input"),
        ("out", "output")]
    assert elu.params[0].dtypes == ("bfloat16", "float16", "float32")
    assert elu.params[1].dtypes == ()  # the doc table gives no dtype for the scalars
    assert [(p.name, p.ctype, p.role) for p in inplace.params] == [
        ("selfRef", "aclTensor*", "inout"), ("alpha", "const aclScalar*", "input"),
        ("scale", "const aclScalar*", "input"), ("inputScale", "const aclScalar*", "input")]
    # the README: the Inplace dtype list includes DOUBLE
    assert inplace.params[0].dtypes == ("bfloat16", "float16", "float32", "float64")
    assert elu.source.path == inplace.source.path == "activation/elu/op_api/aclnn_elu.h"
    assert len(elu.products) == 5


@needs_shared
def test_aclnn_apply_adam_w(by_name):
    api = by_name["aclnnApplyAdamW"]
    assert len(api.params) == 14
    assert [p.name for p in api.params if p.role == "inout"] == ["varRef", "mRef", "vRef"]
    assert {p.role for p in api.params[3:]} == {"input"}
    # "与varRef保持一致" resolved by the catalog: beta1 has varRef's list
    assert api.params[7].name == "beta1"
    assert api.params[7].dtypes == ("bfloat16", "float16", "float32")
    assert api.params[-1] == Param("maximize", "bool", "input")
    assert api.products == ("Ascend 950PR/Ascend 950DT",)
    assert api.source.version == NN
    assert any(n.startswith("dtypes: dtypes of beta1, beta1Power") for n in api.notes)


@needs_shared
def test_dtype_names_are_canonical(full):
    seen = {d for a in full.apis for p in a.params for d in p.dtypes}
    for raw in ("FLOAT", "FP16", "BF16", "DOUBLE", "HIF8"):
        assert raw not in seen
    assert {"float32", "float16", "bfloat16", "float64", "hifloat8", "string"} <= seen


@needs_shared
def test_records_round_trip(full):
    for api in full.apis[:50]:
        assert from_row(AclnnApi, to_row(api)) == api


# ------------------------------------------------------------------ the small fixture

def test_fixture_excerpt():
    res = load_catalog(FIXTURES / "aclnn_apis.jsonl")
    assert [a.name for a in res.apis] == ["aclnnAdd", "aclnnCrypto", "aclnnInplaceElu",
                                         "aclnnMatmulAbftVerify"]
    crypto = res.apis[1]
    # hicann/ops-ras records carry per-file commits; the README has no date for them
    assert crypto.source.version == "a5fc02586e17b7c394befaf591d536e586f820ad"
    assert crypto.source.date == ""
    assert "doc prototype differs from header: names" in crypto.notes
    assert "doc from hicann/ops-ras@3571662b42a8" in crypto.notes
    abft = res.apis[3]
    assert abft.notes == ("signature from doc (no header)",)
    assert abft.params[-1] == Param("compRow", "const aclTensor*", "output", ("uint8",))
    assert res.apis[0].source.date == "2026-08-22"
    prov = {p.source: p for p in res.provenance}
    assert prov["cann:hicann/ops-ras"].version == "per-file"
    assert prov["cann:hicann/ops-ras"].rows == 2
    assert "2 per-file commits" in prov["cann:hicann/ops-ras"].description
    assert prov["cann:hicann/ops-nn"].rows == 1


def test_no_readme_leaves_dates_empty(tmp_path):
    jsonl = tmp_path / "aclnn_apis.jsonl"
    jsonl.write_bytes((FIXTURES / "aclnn_apis.jsonl").read_bytes())
    res = load_catalog(jsonl)
    assert {a.source.date for a in res.apis} == {""}
    assert {p.date for p in res.provenance} == {""}


def test_products_absent_is_none_and_empty_list_kept(tmp_path):
    line = ('{"api": "aclnnAbs", "params": [{"name": "self", "type": "const aclTensor*", '
            '"role": "input"}], "source": {"repo": "r/x", "commit": "c", "path": "p.h", '
            '"from": "header"}, "category": "math", "op_dir": "abs"%s}\n')
    a = tmp_path / "a.jsonl"
    a.write_text(line % "")
    b = tmp_path / "b.jsonl"
    b.write_text(line % ', "products": []')
    assert load_catalog(a).apis[0].products is None
    assert load_catalog(b).apis[0].products == ()


def test_read_provenance_table():
    table = read_provenance_table(FIXTURES / "README.md")
    assert table["hicann/ops-nn"] == {"role": "primary", "commit": NN,
                                      "date": "2026-08-22", "records": "1"}
    assert table["hicann/ops-ras"]["commit"] == ""
    assert table["hicann/ops-ras"]["date"] == ""


# ------------------------------------------------------------------ malformed lines

@pytest.mark.parametrize("name,line,text", [
    ("bad_json.jsonl", 2, "invalid JSON"),
    ("missing_api.jsonl", 2, "lacks required key(s) api"),
    ("missing_params.jsonl", 3, "lacks required key(s) params"),
    ("unknown_role.jsonl", 2, "unknown role 'result'"),
    ("duplicate_api.jsonl", 2, "duplicate record for aclnnAbs"),
    ("dtype_for_unknown_param.jsonl", 2, "dtypes name unknown params ['y']"),
])
def test_malformed_line_names_file_and_line(name, line, text):
    path = FIXTURES / name
    with pytest.raises(ParseError) as info:
        load_catalog(path)
    err = info.value
    assert err.line == line
    assert err.path == str(path)
    assert text in str(err)
    assert str(err).startswith(f"{path}:{line}: ")
    assert err.hint


def test_unknown_role_hint_lists_roles():
    with pytest.raises(ParseError) as info:
        load_catalog(FIXTURES / "unknown_role.jsonl")
    assert info.value.hint == "role must be one of input, output, inout"


def test_unknown_key_is_schema_drift(tmp_path):
    src = (FIXTURES / "aclnn_apis.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "x.jsonl"
    path.write_text(src[:-1] + ', "new_field": 1}\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"x.jsonl:1: aclnnAdd: unknown key\(s\) \['new_field'\]"):
        load_catalog(path)


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(OpscanError, match="no such catalog file"):
        load_catalog(tmp_path / "nope.jsonl")
