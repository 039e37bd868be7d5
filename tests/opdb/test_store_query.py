"""opdb core: snapshot determinism, SQLite store, overlay, query API, derived mappings, show."""
from __future__ import annotations

import random

import pytest

from opdb import snapshot, store
from opdb.derive import derive_mappings, load_curated
from opdb.errors import NotFound, OpscanError, ParseError
from opdb.model import (AclnnApi, Adapter, FrameworkOp, IngestResult, OpAclnnMapping, Param,
                        Source, from_row, to_row)
from opdb.query import OpDB
from opdb.show import describe, render_text

A2 = "Atlas A2 训练系列产品/Atlas A2 推理系列产品"


def _api(name, params, products=(A2,)):
    return AclnnApi(name=name, params=tuple(params), source=Source("cann:test", "c0ffee", f"{name}.h", 3),
                    products=products, category="math")


def _t(name, role="input", dtypes=("float16", "float32")):
    ctype = "const aclTensor*" if role == "input" else "aclTensor*"
    return Param(name, ctype, role, tuple(dtypes))


def sample() -> IngestResult:
    r = IngestResult()
    r.apis = [
        _api("aclnnErfinv", [_t("self"), _t("out", "output")]),
        _api("aclnnInplaceErfinv", [_t("selfRef", "inout")]),
        _api("aclnnAdd", [_t("self"), _t("other"), Param("alpha", "const aclScalar*"), _t("out", "output")]),
        _api("aclnnApplyAdamWV2", [_t("varRef", "inout"), Param("lr", "float")]),
        _api("aclnnOnly950", [_t("self"), _t("out", "output")], products=("Ascend 950PR/Ascend 950DT",)),
    ]
    r.framework_ops = [
        FrameworkOp("torch", "aten::erfinv", Source("torch", "2.13.0"), schema="erfinv(Tensor self) -> Tensor"),
        FrameworkOp("torch", "aten::add.Tensor", Source("torch", "2.13.0"),
                    schema="add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
        FrameworkOp("paddle", "adam", Source("paddle", "3.3.1"), kind="optimizer", function="AdamDenseKernel",
                    aliases=("adam_",),
                    params=(Param("param", "const DenseTensor&"), Param("moment2_max", "const paddle::optional<DenseTensor>&"),
                            Param("amsgrad", "bool"), Param("param_out", "DenseTensor*", "output"))),
    ]
    src = lambda p, v, line=1: Source(p, v, "k.cc", line, "2024-10-18" if v == "develop" else "2024-06-01")  # noqa: E731
    r.adapters = [
        Adapter("torch", "torch_npu", "2.13.0", "aten::add.Tensor", Source("torch_npu-wheel", "2.13.0"),
                aclnn=("aclnnAdd",)),
        Adapter("torch", "torch_npu", "2.6.0", "aten::add.Tensor", Source("torch_npu-wheel", "2.6.0"),
                aclnn=("aclnnAdd",)),
        Adapter("torch", "torch_npu", "2.13.0", "aten::erfinv", Source("torch_npu-wheel", "2.13.0"),
                aclnn=("aclnnErfinv",)),
        Adapter("paddle", "PaddleCustomDevice", "develop", "adam", src("PaddleCustomDevice", "develop"),
                dtypes=("float32",), function="AdamKernel",
                signature=(Param("param", "const phi::DenseTensor&"), Param("param_out", "phi::DenseTensor*", "output"))),
        Adapter("paddle", "PaddleCustomDevice", "release-2.6", "adam", src("PaddleCustomDevice", "release-2.6"),
                dtypes=("float32",), function="AdamKernel"),
        Adapter("paddle", "paddle (all custom devices)", "3.3.1", "reshape", Source("paddle", "3.3.1"),
                dtypes=("float32",)),
    ]
    r.mappings = [OpAclnnMapping("torch", "aten::add.Tensor", "aclnnAdd", "adapter", 0.9,
                                 Source("op-plugin", "517f2e7"))]
    return r


@pytest.fixture()
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPSCAN_HOME", str(tmp_path / "home"))
    r = sample()
    curated, pairs = load_curated()
    r.extend(curated)
    r.mappings.extend(derive_mappings(r, pairs))
    snapshot.write_snapshot(r, tmp_path / "snap")
    return OpDB.open(tmp_path / "snap")


def test_snapshot_is_deterministic_regardless_of_input_order(tmp_path):
    a, b = sample(), sample()
    for lst in (b.apis, b.adapters, b.framework_ops):
        random.Random(7).shuffle(lst)
    m1 = snapshot.write_snapshot(a, tmp_path / "a")
    m2 = snapshot.write_snapshot(b, tmp_path / "b")
    assert m1 == m2
    for f in (tmp_path / "a").iterdir():
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def test_rows_round_trip_losslessly():
    for rec in sample().records():
        assert from_row(type(rec), to_row(rec)) == rec


def test_from_row_rejects_unknown_keys():
    row = to_row(sample().apis[0]) | {"surprise": 1}
    with pytest.raises(ValueError, match="unexpected keys"):
        from_row(AclnnApi, row)


def test_malformed_snapshot_row_names_file_and_line(tmp_path):
    snapshot.write_snapshot(sample(), tmp_path)
    p = tmp_path / "adapters.jsonl"
    p.write_text(p.read_text() + "{not json\n")
    with pytest.raises(ParseError, match=r"adapters.jsonl:7: bad adapters row"):
        snapshot.read_snapshot(tmp_path)


def test_targets_newest_first_and_default(db):
    assert [str(t) for t in db.targets("torch")] == ["torch_npu==2.13.0", "torch_npu==2.6.0"]
    assert [str(t) for t in db.targets("paddle")] == ["PaddleCustomDevice@develop",
                                                     "PaddleCustomDevice@release-2.6"]
    assert str(db.parse_target("paddle", "PaddleCustomDevice@release/2.6")) == "PaddleCustomDevice@release-2.6"
    with pytest.raises(NotFound, match="known targets: torch_npu==2.13.0, torch_npu==2.6.0"):
        db.parse_target("torch", "torch_npu==9.9")


def test_paddle_targets_include_kernels_paddle_registers_for_all_custom_devices(db):
    assert db.adapted_ops("paddle", "PaddleCustomDevice@develop") == {"adam", "reshape"}
    assert db.adapted_ops("torch", None) == {"aten::add.Tensor", "aten::erfinv"}
    assert str(db.first_release("torch", "aten::add.Tensor")) == "torch_npu==2.6.0"


def test_framework_op_by_alias_and_default_overload(db):
    assert db.framework_op("paddle", "adam_").name == "adam"
    assert db.framework_op("torch", "aten::erfinv.default").name == "aten::erfinv"
    assert db.framework_op("torch", "erfinv").name == "aten::erfinv"


def test_name_and_curated_mappings_are_derived(db):
    ms = {(m.aclnn, m.evidence) for m in db.mappings("torch", "aten::erfinv")}
    assert ("aclnnErfinv", "name") in ms
    assert ("aclnnInplaceErfinv", "name") in ms
    assert ("aclnnApplyAdamWV2", "curated") in {(m.aclnn, m.evidence) for m in db.mappings("paddle", "adam")}
    best = db.mappings("torch", "aten::erfinv")[0]
    assert best.aclnn == "aclnnErfinv" and best.confidence == 0.5


def test_resolve_aclnn_exact_loose_and_close(db):
    assert [a.name for a in db.resolve_aclnn("aclnnAdd")] == ["aclnnAdd"]
    assert [a.name for a in db.resolve_aclnn("Add")] == ["aclnnAdd"]
    assert db.resolve_aclnn("erfinv")[0].name == "aclnnErfinv"
    assert db.resolve_aclnn("Adam", framework="paddle")[0].name == "aclnnApplyAdamWV2"
    assert "aclnnErfinv" in db.close_aclnn_names("erfnv")


def test_search_ranks_exact_first(db):
    hits = db.search("erfinv")
    assert hits[0].score == 1.0 and {h.name for h in hits[:3]} >= {"aclnnErfinv", "aten::erfinv"}


def test_sql_is_read_only(db):
    cols, rows = db.sql("SELECT name FROM aclnn_apis ORDER BY name LIMIT 2")
    assert cols == ["name"] and rows == [("aclnnAdd",), ("aclnnApplyAdamWV2",)]
    with pytest.raises(OpscanError, match="SQL error"):
        db.sql("DELETE FROM main.aclnn_apis")


def test_overlay_adds_and_wins_and_resync_replaces(db, tmp_path):
    api = _api("aclnnErfinv", [_t("self", dtypes=("bfloat16",)), _t("out", "output")])
    api = AclnnApi(**{**api.__dict__, "source": Source("cann-install", "8.3.RC1", "include/aclnnop/aclnn_erfinv.h")})
    extra = _api("aclnnBrandNew", [_t("self")])
    extra = AclnnApi(**{**extra.__dict__, "source": Source("cann-install", "8.3.RC1", "x.h")})
    store.write_overlay(IngestResult(apis=[api, extra]), {("cann-install", "8.3.RC1")})
    store.write_overlay(IngestResult(apis=[api]), {("cann-install", "8.3.RC1")})  # re-sync
    db2 = OpDB.open(tmp_path / "snap")
    assert db2.aclnn_api("aclnnErfinv").params[0].dtypes == ("bfloat16",)
    assert db2.aclnn_api("aclnnBrandNew") is None  # replaced by the second sync
    assert OpDB.open(tmp_path / "snap", overlay=False).aclnn_api("aclnnErfinv").params[0].dtypes == ("float16", "float32")


def test_show_paddle_marks_signature_drift(db):
    desc = describe(db, "adam", "paddle")
    text = render_text(desc)
    assert desc.drift and set(desc.drift[0].differing) >= {"moment2_max", "amsgrad"}
    assert "bool amsgrad  <-- differs" in text
    assert "PaddleCustomDevice@develop: AdamKernel  dtypes: float32" in text
    assert "aclnnApplyAdamWV2" in text


def test_show_api_and_unknown_name(db):
    text = render_text(describe(db, "aclnnOnly950"))
    assert "supported on ascend910b: no" in text
    with pytest.raises(NotFound, match="did you mean"):
        describe(db, "erfinvv", "torch")


def test_synced_install_keeps_docs_facts_the_headers_lack(db, tmp_path):
    bare = AclnnApi("aclnnErfinv", (Param("self", "const aclTensor*"), Param("out", "aclTensor*", "output")),
                    Source("cann-install", "8.3.RC1", "include/aclnnop/aclnn_erfinv.h", 12))
    store.write_overlay(IngestResult(apis=[bare]), {("cann-install", "8.3.RC1")})
    api = OpDB.open(tmp_path / "snap").aclnn_api("aclnnErfinv")
    assert api.source.source == "cann-install"
    assert api.products == (A2,) and api.params[0].dtypes == ("float16", "float32")
    assert any("products and dtypes from cann:test" in n for n in api.notes)


def test_names_that_normalize_to_nothing_match_nothing(db):
    assert db.resolve_aclnn("../../etc") == []
    assert db.search("../..") == []


def test_synced_header_with_the_catalogs_signature_takes_the_catalogs_roles(db, tmp_path):
    # the header parser says `out` is an input (a const output); the catalog, with its
    # doc table, says output: same names and types, so the catalog's roles win
    bare = AclnnApi("aclnnErfinv", (Param("self", "const aclTensor*"), Param("out", "aclTensor*")),
                    Source("cann-install", "8.3.RC1", "include/aclnnop/aclnn_erfinv.h", 12))
    store.write_overlay(IngestResult(apis=[bare]), {("cann-install", "8.3.RC1")})
    api = OpDB.open(tmp_path / "snap").aclnn_api("aclnnErfinv")
    assert [p.role for p in api.params] == ["input", "output"]
    assert "roles from the docs catalog (same signature as the header)" in api.notes
