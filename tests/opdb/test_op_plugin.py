"""op-plugin ingesters: aclnn map, unsupported-ops info, checkout scan (fixtures + shared real files)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest import op_plugin as opl
from opdb.ingest import torch_npu_wheel as tw
from opdb.model import Adapter, IngestResult, Source, to_row
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
SHARED = (REPO_SOURCES / "torch")
CHECKOUT = FIX / "op_plugin_checkout"
needs_shared = pytest.mark.skipif(not (SHARED / "op_plugin_aclnn_map.jsonl").is_file(),
                                  reason="shared op-plugin extraction not present")


def _wheel(version: str, ops: dict[str, str]) -> IngestResult:
    return IngestResult(adapters=[
        Adapter(framework="torch", provider="torch_npu", version=version, op=op,
                source=Source("torch_npu-wheel", version, tw.CODEGEN_YAML, i + 1), schema=schema)
        for i, (op, schema) in enumerate(sorted(ops.items()))])


FIXTURE_OPS = {
    "aten::add.Tensor": "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::lerp.Tensor": "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
    "aten::convolution": "",
    "aten::quantize_per_tensor": "",
    "npu::npu_fancy_norm": "npu_fancy_norm(Tensor x, Tensor gamma, *, float eps=1e-6) -> (Tensor, Tensor)",
    "aten::_local_scalar_dense": "",
}


@pytest.fixture(scope="module")
def fixture_map():
    wheel = _wheel("2.13.0", FIXTURE_OPS)
    wheel.extend(_wheel("2.1.0.post17", FIXTURE_OPS))
    return opl.load_aclnn_map(FIX / "op_plugin_aclnn_map.jsonl", ["2.1.0.post17", "2.13.0"], wheel)


def _ad(result, version, op):
    return next(a for a in result.adapters if a.version == version and a.op == op)


def test_map_attaches_aclnn_and_legacy_ops(fixture_map):
    add = _ad(fixture_map, "2.13.0", "aten::add.Tensor")
    assert add.aclnn == ("aclnnAdd", "aclnnAddV3", "aclnnAdds")
    assert add.legacy_ops == ("Add", "AxpyV2") and add.function == "add"
    assert add.source.source == "torch_npu-wheel"  # existence fact stays the wheel's


def test_map_version_lists_decide_per_release(fixture_map):
    # lerp.Tensor: acl_op only v2.1, op_api v2.6+: 2.1 gets the legacy op, 2.13 the aclnn APIs
    old, new = _ad(fixture_map, "2.1.0.post17", "aten::lerp.Tensor"), \
        _ad(fixture_map, "2.13.0", "aten::lerp.Tensor")
    assert old.aclnn == () and old.legacy_ops == ("Lerp",)
    assert new.aclnn == ("aclnnLerp", "aclnnLerps") and new.legacy_ops == ()
    # npu_fancy_norm's versions exclude v2.1: no op-plugin facts for that release
    fancy_old = _ad(fixture_map, "2.1.0.post17", "npu::npu_fancy_norm")
    assert fancy_old.aclnn == () and any("builds no entry" in n for n in fancy_old.notes)
    native = _ad(fixture_map, "2.13.0", "aten::_local_scalar_dense")
    assert "not in op-plugin (torch_npu-native kernel)" in native.notes


def test_map_target_version_uses_aclnn_target(fixture_map):
    # quantize_per_tensor: aclnn names a definition not compiled for v2.13 (aclnn_target empty)
    assert _ad(fixture_map, "2.13.0", "aten::quantize_per_tensor").aclnn == ()
    assert _ad(fixture_map, "2.1.0.post17", "aten::quantize_per_tensor").aclnn == ("aclnnQuantize",)


def test_map_mappings_confidence_and_source(fixture_map):
    maps = {(m.op, m.aclnn): m for m in fixture_map.mappings}
    add = maps[("aten::add.Tensor", "aclnnAdd")]
    assert add.confidence == 0.9 and add.evidence == "adapter"
    assert (add.source.path, add.source.line) == ("op_plugin/ops/opapi/AddKernelNpuOpApi.cpp", 24)
    assert add.source.version == opl.SHARED_COMMIT
    assert add.detail.endswith("torch_npu 2.1.0.post17, 2.13.0")
    conv = maps[("aten::convolution", "aclnnConvolution")]
    assert conv.confidence == 0.6
    assert maps[("npu::npu_fancy_norm", "aclnnFancyNormV2")].detail.endswith("torch_npu 2.13.0")
    assert ("aten::quantize_per_tensor", "aclnnQuantize") in maps  # used by 2.1


def test_map_malformed_line(tmp_path):
    with pytest.raises(ParseError, match=r"aclnn_map_bad.jsonl:2: invalid JSON"):
        opl.read_aclnn_map(FIX / "malformed" / "aclnn_map_bad.jsonl")
    bad = tmp_path / "m.jsonl"
    bad.write_text(json.dumps({"op": "aten::x"}) + "\n")
    with pytest.raises(ParseError, match=r"m.jsonl:1: record lacks schema"):
        opl.read_aclnn_map(bad)


def test_map_needs_release_adapters():
    with pytest.raises(OpscanError, match="no torch_npu 2.6.0 adapters"):
        opl.load_aclnn_map(FIX / "op_plugin_aclnn_map.jsonl", ["2.6.0"], _wheel("2.13.0", FIXTURE_OPS))


@needs_shared
def test_real_map_on_committed_releases():
    res = opl.load_aclnn_map(SHARED / "op_plugin_aclnn_map.jsonl", ["2.1.0.post17", "2.13.0"])
    add = _ad(res, "2.13.0", "aten::add.Tensor")
    assert add.aclnn == ("aclnnAdd", "aclnnAddV3", "aclnnAdds")
    assert add.legacy_ops == ("Add", "AxpyV2")
    mm = _ad(res, "2.13.0", "aten::mm")
    assert mm.aclnn == ("aclnnMatmulWeightNz", "aclnnMm")
    with_aclnn = [a for a in res.adapters if a.version == "2.13.0" and a.aclnn]
    assert len(with_aclnn) > 1200
    maps = {(m.op, m.aclnn): m for m in res.mappings}
    bn = maps[("aten::native_batch_norm", "aclnnBatchNorm")]
    assert bn.source.path == opl.FUNCTIONS_YAML and bn.source.line  # gen_opapi: yaml line
    assert maps[("aten::convolution", "aclnnConvolution")].confidence == 0.6
    keys = [m.key() for m in res.mappings]
    assert len(keys) == len(set(keys))


@needs_shared
def test_expand_versions_agrees_with_the_extraction():
    """Our version-spec semantics reproduce every `versions` list of the shared jsonl."""
    _, entries = opl.parse_functions_yaml(SHARED / "op_plugin" / "op_plugin_functions.yaml")
    ours: dict[tuple, list] = {}
    for e in entries:
        if e.section != "symint":
            ours.setdefault((e.section, e.schema), []).append(e.versions)
    records = [r for _, r in opl.read_aclnn_map(SHARED / "op_plugin_aclnn_map.jsonl")]
    assert len(records) == sum(len(v) for v in ours.values()) == 1485
    for r in records:
        want = {k: v for k, v in r["versions"].items() if v}
        assert want in [{k: v for k, v in got.items() if v} for got in ours[(r["section"], r["schema"])]], r["op"]


# ---------------------------------------------------------------- unsupported info


def test_unsupported_fixture():
    kf = opl.load_unsupported_info(FIX / "unsupported_ops_info.yaml")
    rows = {(k.op, k.test): k for k in kf}
    assert rows[("__radd__", "test_variant_consistency_eager")].dtypes == ("complex64", "float32")
    conv = rows[("nn.functional.conv2d", "test_out")]
    assert conv.dtypes == ("float16", "float64")
    assert (conv.source.path, conv.source.line) == (opl.UNSUPPORTED_YAML, 13)
    assert rows[("add", "test_neg_view")].dtypes == ()      # `None` entry: not dtype specific
    assert rows[("logaddexp", "test_dtypes")].dtypes == ()  # `''` entry
    assert ("null", "test_pointwise_tag_coverage") in rows  # a YAML `null:` key kept as text
    assert [k.key() for k in kf] == sorted(k.key() for k in kf)


def test_unsupported_malformed():
    with pytest.raises(ParseError, match=r"unsupported_bad_dtypes.yaml:5: `mul.test_backward` must be a list"):
        opl.load_unsupported_info(FIX / "malformed" / "unsupported_bad_dtypes.yaml")


@needs_shared
def test_unsupported_real_file():
    kf = opl.load_unsupported_info(SHARED / "op_plugin" / "unsupported_ops_info_base.yaml")
    assert len({k.op for k in kf}) == 938
    rows = {(k.op, k.test): k for k in kf}
    mm = rows[("matmul", "test_compare_cpu")]
    assert mm.dtypes == ("float32",) and mm.source.line == 1496
    assert rows[("add", "test_pointwise_ops")].source.line == 2926
    names = {k.op for k in kf}
    assert "nn.functional.conv2d" in names and "linalg.svd" in names
    assert opl.opinfo_names_for("aten::conv2d", names)[0] == "nn.functional.conv2d"
    assert opl.opinfo_names_for("aten::matmul", names) == ["matmul", "__rmatmul__"]


def test_opinfo_names_for():
    assert opl.opinfo_names_for("aten::add.Tensor")[:3] == ["add", "__radd__", "nn.functional.add"]
    assert "add" in opl.opinfo_names_for("aten::add_.Tensor")
    assert opl.opinfo_names_for("aten::linalg_svd")[0] == "linalg.svd"
    assert "softmax" in opl.opinfo_names_for("aten::_softmax")
    assert "nn.functional.conv2d" in opl.opinfo_names_for("aten::conv2d.padding")
    assert "nn.functional.gelu" in opl.opinfo_names_for("aten::gelu_backward")
    assert opl.opinfo_names_for("aten::add.Tensor", {"__radd__", "mul"}) == ["__radd__"]


# ------------------------------------------------------------------- checkout scan


@pytest.fixture(scope="module")
def scan13():
    return opl.scan_checkout(CHECKOUT, torch_version="v2.13")


def test_scan_adapters_and_names(scan13):
    ops = {a.op: a for a in scan13.adapters}
    assert sorted(ops) == ["aten::abs", "aten::abs.out", "aten::add.Scalar", "aten::add.Tensor",
                           "aten::add.out", "aten::embedding", "aten::lerp.Tensor",
                           "aten::repeat_interleave.self_int", "npu::npu_fancy_norm",
                           "npu::npu_unwritten"]
    assert ops["aten::embedding"].function == "embedding_symint"
    assert ops["aten::add.out"].function == "add_out"
    assert ops["aten::add.out"].source.line == 43 and ops["aten::add.out"].source.path.endswith(
        "AddKernelNpuOpApi.cpp")
    assert scan13.provenance[0].version == "local"  # fixture dir is not a git checkout


def test_scan_aclnn_from_cpp(scan13):
    ops = {a.op: a for a in scan13.adapters}
    # helper closure: add -> add_compute executes aclnnAdds/aclnnAdd; AddV3 only probed
    assert ops["aten::add.out"].aclnn == ("aclnnAdd", "aclnnAddV3", "aclnnAdds")
    assert ops["aten::embedding"].aclnn == ("aclnnEmbedding",)
    # GetOpApiFuncAddr string probe + executes; the acl_op namespace and comments don't count
    assert ops["npu::npu_fancy_norm"].aclnn == ("aclnnFancyNorm", "aclnnFancyNormV2")
    all_apis = {x for a in scan13.adapters for x in a.aclnn}
    assert not {"aclnnInComment", "aclnnNotOpApi"} & all_apis
    assert ops["npu::npu_unwritten"].aclnn == () and any(
        "no op_api::npu_unwritten definition" in n for n in ops["npu::npu_unwritten"].notes)
    maps = {(m.op, m.aclnn): m for m in scan13.mappings}
    assert maps[("aten::add.out", "aclnnAdd")].confidence == 0.9
    assert maps[("aten::add.out", "aclnnAddV3")].confidence == 0.7
    # overloads told apart by their full schema, not argument count: add.Scalar does not
    # inherit add.Tensor's aclnnAdd (both take three arguments)
    assert "match=signature" in maps[("aten::add.Tensor", "aclnnAdd")].detail
    assert ops["aten::add.Scalar"].aclnn == ("aclnnAdds",)
    assert ("aten::add.Scalar", "aclnnAdd") not in maps


def test_param_kinds():
    assert opl.cpp_param_kind("const at::Tensor& self") == "T"
    assert opl.cpp_param_kind("const c10::optional<at::Tensor>& weight") == "T?"
    assert opl.cpp_param_kind("const at::Scalar &alpha") == "S"
    assert opl.cpp_param_kind("at::IntArrayRef size") == "I[]"
    assert opl.schema_param_kind("Tensor(a!)") == "T"
    assert opl.schema_param_kind("int[2]") == "I[]"
    assert opl.kinds_match(("T", "S", "S"), ("T", "S", "S"))
    assert not opl.kinds_match(("T", "T", "S"), ("T", "S", "S"))


def test_scan_gen_opapi(scan13):
    ops = {a.op: a for a in scan13.adapters}
    assert ops["aten::abs"].aclnn == ("aclnnAbs",)            # structured_inherit abs.out
    assert ops["aten::lerp.Tensor"].aclnn == ("aclnnLerp", "aclnnLerps")  # + cpu_scalar_op
    assert ops["aten::abs"].source.path == opl.FUNCTIONS_YAML


def test_scan_version_filter():
    v21 = {a.op: a for a in opl.scan_checkout(CHECKOUT, torch_version="v2.1").adapters}
    assert "aten::lerp.Tensor" not in v21 and "npu::npu_fancy_norm" not in v21
    assert "aten::old_fill" in v21 and v21["aten::old_fill"].aclnn == ()
    # repeat_interleave.self_int: the v2.1 entry (line 45) vs the v2.6+ entry (line 49)
    assert v21["aten::repeat_interleave.self_int"].source.line == 45
    with pytest.raises(OpscanError, match="v2.3 is not in all_version"):
        opl.scan_checkout(CHECKOUT, torch_version="v2.3")


def test_scan_deterministic(scan13):
    again = opl.scan_checkout(CHECKOUT, torch_version="v2.13")
    assert [to_row(a) for a in again.adapters] == [to_row(a) for a in scan13.adapters]
    assert [to_row(m) for m in again.mappings] == [to_row(m) for m in scan13.mappings]


@pytest.mark.parametrize("name, line, words", [
    ("op_plugin_functions_bad_version.yaml", 6, "version 'v2.3' is not in all_version"),
    ("op_plugin_functions_no_func.yaml", 6, "has no `func:`"),
])
def test_scan_malformed_yaml(tmp_path, name, line, words):
    root = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, root)
    shutil.copy(FIX / "malformed" / name, root / opl.FUNCTIONS_YAML)
    with pytest.raises(ParseError) as err:
        opl.scan_checkout(root)
    assert err.value.line == line and words in str(err.value)
    assert str(err.value).startswith(f"{opl.FUNCTIONS_YAML}:{line}:")


def test_scan_unbalanced_cpp(tmp_path):
    root = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, root)
    shutil.copy(FIX / "malformed" / "Unbalanced.cpp", root / "op_plugin/ops/opapi/Unbalanced.cpp")
    with pytest.raises(ParseError, match=r"op_plugin/ops/opapi/Unbalanced.cpp:7: unbalanced `}`"):
        opl.scan_checkout(root)


def test_scan_missing_checkout(tmp_path):
    with pytest.raises(OpscanError, match="op_plugin_functions.yaml not found"):
        opl.scan_checkout(tmp_path)


def test_a_called_fallback_named_like_an_api_is_not_an_api():
    from opdb.ingest.op_plugin import parse_cpp_functions

    text = ("namespace op_api {\nat::Tensor aclnnNotFound(const at::Tensor& val) { return val; }\n"
            "at::Tensor _npu_silent_check_v2(const at::Tensor& val) {\n"
            "  DO_COMPATIBILITY(aclnnSilentCheck, aclnnNotFound(val));\n"
            "  EXEC_NPU_CMD(aclnnSilentCheck, val);\n  return val;\n}\n"
            "at::Tensor f(const at::Tensor& x) {\n  DO_COMPATIBILITY(aclnnA, aclnnB);\n"
            "  EXEC_NPU_CMD(aclnnA, x);\n  return x;\n}\n}\n")
    funcs = {f.name: f for f in parse_cpp_functions(text, "x.cpp")}
    check = funcs["_npu_silent_check_v2"]
    assert check.executed == ["aclnnSilentCheck"] and check.probed == []
    assert funcs["f"].probed == ["aclnnB"]  # a bare second name is still a probed API


def test_shared_map_names_that_are_cpp_functions_are_dropped():
    from opdb.ingest.op_plugin import NOT_APIS

    res = opl.load_aclnn_map(SHARED / "op_plugin_aclnn_map.jsonl", ["2.13.0"])
    assert not any(set(a.aclnn) & NOT_APIS for a in res.adapters)
    assert not any(m.aclnn in NOT_APIS for m in res.mappings)


def _write_checkout(root, yaml_text: str, files: dict[str, str]) -> None:
    (root / "op_plugin" / "config").mkdir(parents=True)
    (root / "op_plugin" / "config" / "op_plugin_functions.yaml").write_text(yaml_text)
    opapi = root / "op_plugin" / "ops" / "opapi"
    opapi.mkdir(parents=True)
    for name, text in files.items():
        (opapi / name).write_text(text)


def test_op_api_helper_calls_are_followed(tmp_path):
    # the layout of op-plugin 517f2e7d0f20: _foreach_clamp_min calls op_api::_foreach_maximum
    # (another file); eq(Tensor, Tensor) calls op_api::eq(Tensor, Scalar) of its own file;
    # max.dim calls op_api::max_out with 5 arguments, not the 2-argument max_out overload
    yaml_text = (
        "all_version: [v2.13]\nofficial:\n"
        "  - func: _foreach_clamp_min.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]\n"
        "    op_api: v2.13\n"
        "  - func: _foreach_clamp_min.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]\n"
        "    op_api: v2.13\n"
        "  - func: eq.Tensor(Tensor self, Tensor other) -> Tensor\n    op_api: v2.13\n"
        "  - func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
        "    op_api: v2.13\n")
    files = {
        "ForeachMaximumKernelNpuOpApi.cpp":
            "namespace op_api {\n"
            "std::vector<at::Tensor> _foreach_maximum(at::TensorList t, const at::Scalar& s) {\n"
            "  EXEC_NPU_CMD(aclnnForeachMaximumScalar, t, s);\n  return {};\n}\n"
            "std::vector<at::Tensor> _foreach_maximum(at::TensorList t, at::ArrayRef<at::Scalar> s) {\n"
            "  EXEC_NPU_CMD(aclnnForeachMaximumScalarList, t, s);\n  return {};\n}\n}\n",
        "ForeachClampKernelNpuOpApi.cpp":
            "namespace op_api {\n"
            "std::vector<at::Tensor> _foreach_clamp_min(at::TensorList t, const at::Scalar& s) {\n"
            "  return op_api::_foreach_maximum(t, s);\n}\n"
            "std::vector<at::Tensor> _foreach_clamp_min(at::TensorList t, at::ArrayRef<at::Scalar> s) {\n"
            "  return op_api::_foreach_maximum(t, s);\n}\n}\n",
        "EqKernelNpuOpApi.cpp":
            "namespace op_api {\n"
            "at::Tensor eq(const at::Tensor& self, const at::Scalar& other) {\n"
            "  at::Tensor out;\n  EXEC_NPU_CMD(aclnnEqScalar, self, other, out);\n  return out;\n}\n"
            "at::Tensor eq(const at::Tensor& self, const at::Tensor& other) {\n"
            "  if (other.dim() == 0) {\n    return op_api::eq(self, other.item());\n  }\n"
            "  at::Tensor out;\n  EXEC_NPU_CMD(aclnnEqTensor, self, other, out);\n  return out;\n}\n}\n",
        "MaxKernelNpuOpApi.cpp":
            "namespace op_api {\n"
            "at::Tensor& max_out(const at::Tensor& self, at::Tensor& out) {\n"
            "  EXEC_NPU_CMD(aclnnMax, self, out);\n  return out;\n}\n"
            "std::tuple<at::Tensor&, at::Tensor&> max_out(const at::Tensor& self, int64_t dim, bool keepdim,\n"
            "    at::Tensor& values, at::Tensor& indices) {\n"
            "  EXEC_NPU_CMD(aclnnMaxDim, self, dim, keepdim, values, indices);\n  return {values, indices};\n}\n"
            "std::tuple<at::Tensor, at::Tensor> max(const at::Tensor& self, int64_t dim, bool keepdim) {\n"
            "  at::Tensor v, i;\n  op_api::max_out(self, dim, keepdim, v, i);\n  return {v, i};\n}\n}\n",
    }
    _write_checkout(tmp_path, yaml_text, files)
    res = opl.scan_checkout(tmp_path, torch_version="v2.13")
    ops = {a.op: a for a in res.adapters}
    # same file: the called overload's API is the adapter's own
    assert ops["aten::eq.Tensor"].aclnn == ("aclnnEqScalar", "aclnnEqTensor")
    assert ops["aten::max.dim"].aclnn == ("aclnnMaxDim",)  # 5 arguments: not max_out(self, out)
    # another file: reached through another op (op-plugin's aclnn_indirect), conf 0.6
    clamp = ops["aten::_foreach_clamp_min.Scalar"]
    assert clamp.aclnn == ()
    assert "aclnn_indirect=aclnnForeachMaximumScalar,aclnnForeachMaximumScalarList" in clamp.notes
    maps = {(m.op, m.aclnn): m for m in res.mappings}
    m = maps[("aten::_foreach_clamp_min.ScalarList", "aclnnForeachMaximumScalarList")]
    assert m.confidence == opl.CONF_INDIRECT and "via another op" in m.detail
    # Scalar[] tells the ScalarList overload apart from the Scalar one
    assert "match=signature" in maps[("aten::_foreach_clamp_min.ScalarList",
                                      "aclnnForeachMaximumScalarList")].detail


def test_single_phase_config_call_is_not_an_api():
    from opdb.ingest.op_plugin import NOT_APIS

    assert "aclnnSetPytorchRandom" in NOT_APIS
    res = opl.load_aclnn_map(SHARED / "op_plugin_aclnn_map.jsonl", ["2.13.0"])
    normal = {a.op: a for a in res.adapters}["aten::normal_"]
    assert "aclnnSetPytorchRandom" not in normal.aclnn and "aclnnInplaceNormal" in normal.aclnn


def test_helper_called_with_nested_template_arguments():
    # op-plugin DynamicQuantKernelNpuOpApi.cpp: dynamic_quant_run_aclnn<c10::optional<at::Tensor>>(...)
    from opdb.ingest.op_plugin import parse_cpp_functions

    text = ("namespace op_api {\ntemplate <typename T>\nvoid run(const at::Tensor& x, T& off) {\n"
            "  EXEC_NPU_CMD(aclnnDynamicQuantV4, x, off);\n}\n"
            "at::Tensor npu_dynamic_quant(const at::Tensor& x) {\n  c10::optional<at::Tensor> off;\n"
            "  run<c10::optional<at::Tensor>>(x, off);\n  return x;\n}\n}\n")
    funcs = {f.name: f for f in parse_cpp_functions(text, "x.cpp")}
    assert "run" in funcs["npu_dynamic_quant"].called


def test_dispatched_ops_are_reached_through_another_op(tmp_path):
    # `at::relu_(out)` and `out.neg()` dispatch to the NPU kernels op_api::relu_/neg register:
    # their APIs are reached through another op (aclnn_indirect), never the adapter's own;
    # an entry the yaml builds only on the acl_op path has no op_api C++ function
    yaml_text = ("all_version: [v2.13]\nofficial:\n"
                 "  - func: _addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
                 "Scalar alpha=1, bool use_gelu=False) -> Tensor\n    op_api: v2.13\n"
                 "  - func: lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh) -> (Tensor, Tensor)\n"
                 "    acl_op: v2.13\n")
    files = {
        "ReluKernelNpuOpApi.cpp": "namespace op_api {\nat::Tensor& relu_(at::Tensor& self) {\n"
                                  "  EXEC_NPU_CMD(aclnnInplaceRelu, self);\n  return self;\n}\n"
                                  "at::Tensor neg(const at::Tensor& self) {\n  at::Tensor out;\n"
                                  "  EXEC_NPU_CMD(aclnnNeg, self, out);\n  return out;\n}\n}\n",
        "AddmmActivationKernelNpuOpApi.cpp":
            "namespace op_api {\nat::Tensor _addmm_activation(const at::Tensor& self, const at::Tensor& m1,\n"
            "    const at::Tensor& m2, const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu) {\n"
            "  at::Tensor out;\n  EXEC_NPU_CMD(aclnnAddmm, self, m1, m2, beta, alpha, out);\n"
            "  at::relu_(out);\n  return out.neg();\n}\n}\n",
    }
    _write_checkout(tmp_path, yaml_text, files)
    ops = {a.op: a for a in opl.scan_checkout(tmp_path, torch_version="v2.13").adapters}
    act = ops["aten::_addmm_activation"]
    assert act.aclnn == ("aclnnAddmm",) and act.function == "_addmm_activation"
    assert "aclnn_indirect=aclnnInplaceRelu,aclnnNeg" in act.notes
    assert ops["aten::lstm_cell"].function == "" and ops["aten::lstm_cell"].aclnn == ()


def test_sync_skips_an_unreadable_kernel_file_with_a_warning(tmp_path):
    root = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, root)
    shutil.copy(FIX / "malformed" / "Unbalanced.cpp", root / "op_plugin/ops/opapi/Unbalanced.cpp")
    warnings: list[str] = []
    res = opl.scan_checkout(root, torch_version="v2.13", warnings=warnings)
    assert warnings == ["op_plugin/ops/opapi/Unbalanced.cpp:7: unbalanced `}` "
                        "(the lexical reader needs balanced braces); file skipped"]
    ops = {a.op: a for a in res.adapters}
    assert ops["aten::add.out"].aclnn == ("aclnnAdd", "aclnnAddV3", "aclnnAdds")  # the rest is read


def test_fixes_drop_the_apis_of_false_calls_only(tmp_path):
    rec = {"op": "aten::mean", "schema": "mean(Tensor self) -> Tensor", "aclnn": ["aclnnMean", "aclnnMax"],
           "aclnn_indirect": ["aclnnFlip", "aclnnMax", "aclnnMaxDim", "aclnnCast"],
           "calls_ops": ["Tensor.flip", "op_api::max", "at::_npu_dtype_cast"]}
    other = {**rec, "schema": "mean.dim(Tensor self, int[1]? dim) -> Tensor"}
    fixes = tmp_path / "fixes.json"
    fixes.write_text(json.dumps({"false_calls": [
        {"call": "Tensor.flip", "drop_indirect": ["aclnnFlip"], "evidence": "bitset",
         "entries": [{"op": rec["op"], "schema": rec["schema"]}]},
        {"call": "op_api::max", "drop_indirect": ["aclnnMax", "aclnnMaxDim"], "evidence": "limits",
         "entries": [{"op": rec["op"], "schema": rec["schema"]}]}]}))
    (_, fixed), (_, untouched) = opl.apply_fixes([(1, rec), (2, other)], fixes)
    # aclnnMax is also the record's own API: kept; only the listed record changes
    assert fixed["aclnn_indirect"] == ["aclnnMax", "aclnnCast"]
    assert fixed["calls_ops"] == ["at::_npu_dtype_cast"]
    assert untouched == other
    assert opl.apply_fixes([(1, rec)], tmp_path / "absent.json") == [(1, rec)]
    fixes.write_text('{"false_calls": [{"call": "x"}]}')
    with pytest.raises(ParseError, match="not an op-plugin fixes file"):
        opl.apply_fixes([(1, rec)], fixes)


@needs_shared
def test_committed_fixes_name_records_of_the_shared_extraction():
    doc = json.loads((SHARED / opl.FIXES).read_text())
    assert doc["commit"] == opl.SHARED_COMMIT  # checked against the tree the extraction read
    keys = {(r["op"], r["schema"]) for _, r in opl.read_aclnn_map(SHARED / "op_plugin_aclnn_map.jsonl")}
    for fix in doc["false_calls"]:
        assert fix["evidence"] and fix["drop_indirect"] and fix["entries"]
        assert {(e["op"], e["schema"]) for e in fix["entries"]} <= keys, fix["call"]


def test_fixes_add_missed_legacy_op_types(tmp_path):
    rec = {"op": "aten::mean", "schema": "mean(Tensor self) -> Tensor", "aclnn": [], "aclnn_indirect": [],
           "aclop_kernels": ["Cast"]}
    fixes = tmp_path / "fixes.json"
    fixes.write_text(json.dumps({"false_calls": [], "missing_aclop_kernels": [
        {"op": "aten::mean", "schema": rec["schema"], "add": ["ReduceMean"], "evidence": "helper"}]}))
    [(_, fixed)] = opl.apply_fixes([(1, rec)], fixes)
    assert fixed["aclop_kernels"] == ["Cast", "ReduceMean"] and rec["aclop_kernels"] == ["Cast"]
