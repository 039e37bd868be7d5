"""Tests for opdb.ingest.aclnn_headers: aclnn APIs from the headers of a CANN install."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest.aclnn_headers import (
    NOTE_FALLBACK_INPLACE, NOTE_FALLBACK_OUT, NOTE_NO_TRAILING, find_aclnnop_dir, infer_roles,
    normalize_ctype, parse_declarations, parse_header_text, read_cann_version, scan_cann_home)
from opdb.ingest.cann_catalog import load_catalog
from opdb.model import Param, Source
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "cann"
HOME = FIX / "home"
INC = HOME / "include" / "aclnnop"
SHARED = (REPO_SOURCES / "cann/aclnn_apis.jsonl")
needs_shared = pytest.mark.skipif(not SHARED.is_file(),
                                  reason=f"shared CANN catalog not present at {SHARED}")


def _parse(rel: str):
    path = INC / rel
    return {a.name: a for a in parse_header_text(path.read_text(encoding="utf-8"), rel)}


def _sig(api):
    return [(p.name, p.ctype, p.role) for p in api.params]


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


@pytest.fixture(scope="module")
def scanned():
    return scan_cann_home(HOME)


@pytest.fixture(scope="module")
def catalog():
    return {a.name: a for a in load_catalog(SHARED).apis}


# ------------------------------------------------------------------ single headers

def test_add_header_four_apis_with_inplace():
    apis = _parse("level2/aclnn_add.h")
    assert sorted(apis) == ["aclnnAdd", "aclnnAdds", "aclnnInplaceAdd", "aclnnInplaceAdds"]
    assert _sig(apis["aclnnAdd"]) == [
        ("self", "const aclTensor*", "input"), ("other", "const aclTensor*", "input"),
        ("alpha", "const aclScalar*", "input"), ("out", "aclTensor*", "output")]
    # `const aclTensor* selfRef`: the Ref name rule beats constness
    assert _sig(apis["aclnnInplaceAdds"]) == [
        ("selfRef", "const aclTensor*", "inout"), ("other", "const aclScalar*", "input"),
        ("alpha", "const aclScalar*", "input")]
    add = apis["aclnnAdd"]
    line = _line_of(INC / "level2/aclnn_add.h", "aclnnAddGetWorkspaceSize(")
    assert add.source == Source("cann-install", "", "level2/aclnn_add.h", line)
    assert add.products is None
    assert all(p.dtypes == () for p in add.params)
    assert add.notes == ()
    assert not add.deprecated and not add.internal


def test_forwarding_header_declares_nothing():
    assert _parse("aclnn_add.h") == {}


def test_elu_header_doxygen_with_fullwidth_colons():
    apis = _parse("aclnn_elu.h")
    assert sorted(apis) == ["aclnnElu", "aclnnInplaceElu"]
    assert _sig(apis["aclnnInplaceElu"]) == [
        ("selfRef", "aclTensor*", "inout"), ("alpha", "const aclScalar*", "input"),
        ("scale", "const aclScalar*", "input"), ("inputScale", "const aclScalar*", "input")]
    # doxygen says [in] for out, but the out-name rule comes first
    assert apis["aclnnElu"].params[-1] == Param("out", "aclTensor*", "output")


def test_convolution_types_and_single_phase_helper_ignored():
    apis = _parse("aclnn_convolution.h")
    assert sorted(apis) == ["aclnnConvolution"]
    conv = apis["aclnnConvolution"]
    assert [p.ctype for p in conv.params] == [
        "const aclTensor*", "const aclTensor*", "const aclTensor*", "const aclIntArray*",
        "const aclIntArray*", "const aclIntArray*", "bool", "const aclIntArray*",
        "const int64_t", "aclTensor*", "int8_t"]
    assert [p.name for p in conv.params if p.role == "output"] == ["output"]


def test_deprecation_markers():
    qmm = _parse("aclnn_quant_matmul.h")
    assert qmm["aclnnQuantMatmul"].deprecated  # ACL_DEPRECATED_MESSAGE(...) before it
    assert not qmm["aclnnQuantMatmulV4"].deprecated
    assert qmm["aclnnQuantMatmul"].params[3] == Param("deqScale", "float", "input")
    pfa = _parse("aclnn_prompt_flash_attention_v2.h")["aclnnPromptFlashAttentionV2"]
    assert pfa.deprecated  # __attribute__((deprecated("... (same params)). ")))
    assert len(pfa.params) == 20
    assert pfa.params[4] == Param("attenMask", "const aclTensor*", "input")
    assert pfa.params[16] == Param("inputLayout", "char*", "input")
    # `const aclTensor *attentionOut`: an output by name although declared const
    assert pfa.params[-1] == Param("attentionOut", "const aclTensor*", "output")
    assert pfa.notes == ()


def test_commented_out_marker_is_not_deprecation():
    text = """
    // ACL_DEPRECATED_MESSAGE("old")
    /* __attribute__((deprecated)) */
    ACLNN_API aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor* self, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor);
    ACLNN_API aclnnStatus aclnnAbs(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                   aclrtStream stream);
    """
    (api,) = parse_header_text(text, "x.h")
    assert not api.deprecated
    assert api.source.line == 4


def test_deprecation_of_an_earlier_non_aclnn_declaration_does_not_leak():
    text = """
    ACL_DEPRECATED_MESSAGE("use aclGetTensorDescDimV2") int64_t aclGetTensorDescDim(int x);
    /** @param [out] self: not this API's doc either */
    typedef struct { int a; } Foo;
    ACLNN_API aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor* self, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor);
    """
    (api,) = parse_header_text(text, "x.h")
    assert not api.deprecated
    assert api.params[0].role == "input"


def test_deprecated_run_function_marks_the_api():
    text = """
    ACLNN_API aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor* self, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor);
    ACL_DEPRECATED ACLNN_API aclnnStatus aclnnAbs(void* workspace, uint64_t workspaceSize,
                                                  aclOpExecutor* executor, aclrtStream stream);
    """
    assert parse_header_text(text, "x.h")[0].deprecated


def test_list_and_array_types():
    foreach = _parse("level2/aclnn_foreach_add_scalar_list.h")["aclnnForeachAddScalarList"]
    assert _sig(foreach) == [("x", "const aclTensorList*", "input"),
                             ("scalars", "const aclScalarList*", "input"),
                             ("out", "const aclTensorList*", "output")]
    nms = _parse("aclnn_non_max_suppression.h")["aclnnNonMaxSuppression"]
    assert _sig(nms) == [
        ("boxes", "const aclTensor*", "input"), ("scores", "const aclTensor*", "input"),
        ("maxOutputBoxesPerClass", "aclIntArray*", "input"),
        ("iouThreshold", "aclFloatArray*", "input"), ("scoreThreshold", "aclFloatArray*", "input"),
        ("centerPointBox", "int32_t", "input"), ("selectedIndices", "aclTensor*", "output")]
    rms = _parse("aclnn_add_rms_norm_dynamic_quant_v2.h")["aclnnAddRmsNormDynamicQuantV2"]
    assert rms.params[6] == Param("epsilon", "double", "input")
    assert rms.params[7] == Param("outputMask", "const aclBoolArray*", "input")
    assert [p.name for p in rms.params if p.role == "output"] == [
        "y1Out", "y2Out", "xOut", "scale1Out", "scale2Out"]


def test_doxygen_out_is_evidence():
    abft = _parse("aclnn_matmul_abft_verify.h")["aclnnMatmulAbftVerify"]
    assert abft.params[-1] == Param("compRow", "const aclTensor*", "output")
    assert abft.notes == ()  # real evidence, no fallback


def test_role_fallbacks_and_internal():
    hs = _parse("aclnn_hardsigmoid.h")
    assert _sig(hs["aclnnInplaceHardsigmoid"]) == [("self", "const aclTensor*", "inout")]
    assert hs["aclnnInplaceHardsigmoid"].notes == (NOTE_FALLBACK_INPLACE,)
    assert hs["aclnnHardsigmoid"].notes == ()
    inner = _parse("aclnn_distribute_barrier_common.h")["aclnnInnerDistributeBarrier"]
    assert inner.internal
    # timeOut is excluded from the *Out output-name rule
    assert _sig(inner)[:2] == [("xRef", "const aclTensor*", "inout"),
                               ("timeOut", "const aclTensor*", "input")]


def test_notes_for_missing_run_and_missing_trailing_params():
    path = FIX / "odd_headers" / "aclnn_gaussian_blur.h"
    apis = {a.name: a for a in parse_header_text(path.read_text(), "aclnn_gaussian_blur.h")}
    blur = apis["aclnnGaussianBlur"]
    assert len(blur.params) == 6
    assert blur.notes == (
        "no run function aclnnGaussianBlur(void* workspace, uint64_t workspaceSize, "
        "aclOpExecutor* executor, aclrtStream stream) declared",)
    # const, but the tensor after the attributes: the signature's output block
    assert blur.params[-1] == Param("dst", "const aclTensor*", "output")
    mul = apis["aclnnMulNoNan"]
    assert [p.name for p in mul.params] == ["x", "y", "z"]
    assert mul.notes[0] == NOTE_NO_TRAILING


def test_declarations_keep_exact_lines_and_defaults():
    text = ("#define X(a) \\\n  (a)\n"
            "ACLNN_API aclnnStatus\n"
            "aclnnFooGetWorkspaceSize(const aclTensor *self,   // the input\n"
            "    aclTensor * out, int64_t dim = -1, uint64_t *workspaceSize,\n"
            "    aclOpExecutor **executor);\n")
    (decl,) = parse_declarations(text, "foo.h")
    assert decl.line == 4
    assert decl.params == (("const aclTensor*", "self", None), ("aclTensor*", "out", None),
                           ("int64_t", "dim", "-1"), ("uint64_t*", "workspaceSize", None),
                           ("aclOpExecutor**", "executor", None))


def test_normalize_ctype():
    assert normalize_ctype("const  aclTensor *") == "const aclTensor*"
    assert normalize_ctype("aclOpExecutor * *") == "aclOpExecutor**"
    assert normalize_ctype("const aclTensor * const") == "const aclTensor* const"


def test_infer_roles_evidence_order():
    params = [("aclTensor*", "gradOutput"), ("const aclTensor*", "gradInput"),
              ("aclTensor*", "runningMean"), ("const aclTensor*", "y_out")]
    roles, note = infer_roles("aclnnFooBackward", params, {"runningMean": "input"})
    # gradOutput is no output name: a non-const tensor before the named output, in the
    # input section, is read; after a named output constness stands over the [in] comment
    assert roles == ["input", "output", "output", "output"]
    assert note == ""


def test_written_tensors_real_header_shapes():
    # hicann/ops-nn e5c3fa9327ea: aclnnBatchNormElemt declares mean/invstd non-const
    # among its inputs, before `eps` and the named `output`: read (loose constness)
    elemt = [("const aclTensor*", "input"), ("aclTensor*", "mean"), ("aclTensor*", "invstd"),
             ("double", "eps"), ("aclTensor*", "output")]
    assert infer_roles("aclnnBatchNormElemt", elemt)[0] == ["input"] * 4 + ["output"]
    # ... while aclnnBatchNorm's running statistics in the same place are updated
    bn = [("const aclTensor*", "input"), ("aclTensor*", "runningMean"), ("aclTensor*", "runningVar"),
          ("bool", "training"), ("aclTensor*", "output")]
    assert infer_roles("aclnnBatchNorm", bn)[0] == ["input", "inout", "inout", "input", "output"]
    # aclnnApplyGradientDescent(aclTensor* var, const alpha, const delta): the only written
    # tensor, followed by reads: updated in place
    agd = [("aclTensor*", "var"), ("const aclTensor*", "alpha"), ("const aclTensor*", "delta")]
    assert infer_roles("aclnnApplyGradientDescent", agd) == (["inout", "input", "input"], "")
    # mirror-cann aclnnQkvRmsNormRopeCache: kCache after the named qOut, reads after it:
    # inout although the comment says [in]
    qkv = [("const aclTensor*", "qkv"), ("aclTensor*", "qOut"), ("aclTensor*", "kCache"),
           ("const aclTensor*", "kScaleOptional"), ("double", "epsilon")]
    assert infer_roles("aclnnQkv", qkv, {"kCache": "input"})[0] == \
        ["input", "output", "inout", "input", "input"]
    # aclnnScatterPaKvCacheWithKScale: keyScale non-const, [IN], before a Ref the API writes
    pa = [("aclTensor*", "keyCacheRef"), ("aclTensor*", "keyScale"), ("aclTensor*", "keyScaleCacheRef"),
          ("char*", "cacheLayoutOptional")]
    assert infer_roles("aclnnPa", pa, {"keyScale": "input"})[0] == ["inout", "input", "inout", "input"]
    # aclnnModulateBackward: all const, all [in]; grad_scale is the gradient of `scale`
    mb = [("const aclTensor*", "grad_output"), ("const aclTensor*", "scale"),
          ("const aclTensor*", "grad_input"), ("const aclTensor*", "grad_scale")]
    assert infer_roles("aclnnModulateBackward", mb, {n: "input" for _, n in mb})[0] == \
        ["input", "input", "output", "output"]
    # an Inplace API has no const output block; a Ref-named host scalar is read
    assert infer_roles("aclnnInplaceIndexCopy", [("aclTensor*", "selfRef"), ("int64_t", "dim"),
                                                 ("const aclTensor*", "index"),
                                                 ("const aclTensor*", "source")])[0] == \
        ["inout", "input", "input", "input"]
    assert infer_roles("aclnnInplaceAddV3", [("const aclScalar*", "selfRef"),
                                             ("const aclTensor*", "other"),
                                             ("const aclScalar*", "alpha")]) == \
        (["input", "inout", "input"], NOTE_FALLBACK_INPLACE)


def test_roles_from_the_two_phase_layout_comments_only_break_ties():
    # inputs, attributes, outputs: const outputs after the attributes are outputs
    fia = [("const aclTensor*", "query"), ("const aclTensor*", "key"), ("int64_t", "numHeads"),
           ("bool", "softmaxLseFlag"), ("const aclTensor*", "attentionOut"),
           ("const aclTensor*", "softmaxLse")]
    assert infer_roles("aclnnFia", fia)[0] == ["input", "input", "input", "input", "output", "output"]
    # a written tensor among the inputs of an unnamed-output layout is updated in place,
    # unless the comment says [in]
    bn = [("const aclTensor*", "input"), ("aclTensor*", "runningMean"), ("aclTensor*", "counter"),
          ("double", "momentum"), ("aclTensor*", "meanAll")]
    roles, _ = infer_roles("aclnnBn", bn, {"counter": "input", "runningMean": "input"})
    assert roles == ["input", "input", "input", "input", "output"]
    roles, _ = infer_roles("aclnnBn", bn)
    assert roles == ["input", "inout", "inout", "input", "output"]
    # a const tensor marked [out] is an output only where outputs are (the trailing run)
    mixed = [("const aclTensor*", "x"), ("const aclTensor*", "y"), ("aclTensor*", "z")]
    assert infer_roles("aclnnM", mixed, {"x": "output"})[0] == ["input", "input", "output"]
    assert infer_roles("aclnnM", mixed, {"y": "output"})[0] == ["input", "output", "output"]
    # an int attribute is never an output, whatever its comment says
    assert infer_roles("aclnnK", [("const aclTensor*", "x"), ("int64_t", "keyAntiquantMode"),
                                  ("aclTensor*", "out")], {"keyAntiquantMode": "output"})[0] == \
        ["input", "input", "output"]


def test_static_inline_definition_skips_that_declaration_with_a_warning():
    text = ("ACLNN_API aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor* self, aclTensor* out,\n"
            "    uint64_t* workspaceSize, aclOpExecutor** executor);\n"
            "static inline aclnnStatus aclnnAbsHelper(const aclTensor* self) {\n"
            "  if (self == nullptr) { return 1; }\n  return 0;\n}\n"
            "ACLNN_API aclnnStatus aclnnAbs(void* workspace, uint64_t workspaceSize,\n"
            "    aclOpExecutor* executor, aclrtStream stream);\n")
    warnings: list[str] = []
    decls = parse_declarations(text, "aclnn_abs.h", warnings)
    assert [d.name for d in decls] == ["aclnnAbsGetWorkspaceSize", "aclnnAbs"]
    assert warnings == ["aclnn_abs.h:3: aclnnAbsHelper is defined inline, not declared; skipped"]


# ------------------------------------------------------------------ malformed headers

@pytest.mark.parametrize("name,line,text", [
    ("aclnn_unbalanced.h", 8, "unbalanced parentheses in the declaration of aclnnAbsGetWorkspaceSize"),
    ("aclnn_truncated.h", 6, "unbalanced parentheses in the declaration of aclnnAbsGetWorkspaceSize"),
    ("aclnn_no_params.h", 12, "aclnnSignGetWorkspaceSize has no parameters"),
    ("aclnn_unnamed_param.h", 4, "parameter 2 ('aclTensor*') has no type and name"),
])
def test_malformed_declarations_raise_with_file_and_line(name, line, text):
    path = FIX / "bad_headers" / name
    with pytest.raises(ParseError) as info:
        parse_header_text(path.read_text(), f"include/aclnnop/{name}")
    assert info.value.line == line
    assert str(info.value).startswith(f"include/aclnnop/{name}:{line}: ")
    assert text in str(info.value)
    assert info.value.hint


def test_scan_skips_a_bad_declaration_with_a_warning_relative_to_home(tmp_path):
    home = tmp_path / "latest"
    shutil.copytree(HOME, home)
    full = {a.name for a in scan_cann_home(home).apis}
    for name in ("aclnn_no_params.h", "aclnn_unnamed_param.h", "aclnn_unbalanced.h"):
        shutil.copy(FIX / "bad_headers" / name, home / "include/aclnnop/level2")
    warnings: list[str] = []
    res = scan_cann_home(home, warnings)
    assert any(w.startswith("include/aclnnop/level2/aclnn_no_params.h:12: ") for w in warnings)
    assert all(w.endswith("declaration skipped") for w in warnings)
    assert full <= {a.name for a in res.apis}  # the other headers' APIs are all there
    assert f"{len(warnings)} declarations skipped with a warning" in res.provenance[0].description


# ------------------------------------------------------------------ a whole install

def test_scan_fixture_home(scanned):
    names = [a.name for a in scanned.apis]
    assert names == sorted(names)
    assert names == [
        "aclnnAdd", "aclnnAddRmsNormDynamicQuantV2", "aclnnAdds", "aclnnApplyAdamW",
        "aclnnApplyAdamWV2", "aclnnConvolution", "aclnnCumsum", "aclnnElu",
        "aclnnForeachAddScalarList", "aclnnHardsigmoid", "aclnnInnerDistributeBarrier",
        "aclnnInplaceAdd", "aclnnInplaceAdds", "aclnnInplaceElu", "aclnnInplaceHardsigmoid",
        "aclnnMatmulAbftVerify", "aclnnNonMaxSuppression", "aclnnPromptFlashAttentionV2",
        "aclnnQuantMatmul", "aclnnQuantMatmulV4", "aclnnUpsampleBicubic2d"]
    by = {a.name: a for a in scanned.apis}
    # the same header in include/aclnnop and level2/: the top-level copy is kept, no note
    assert by["aclnnElu"].source.path == "include/aclnnop/aclnn_elu.h"
    assert by["aclnnElu"].notes == ()
    assert by["aclnnAdd"].source.path == "include/aclnnop/level2/aclnn_add.h"
    assert {a.source.version for a in scanned.apis} == {"8.3.RC1"}
    assert {a.source.source for a in scanned.apis} == {"cann-install"}
    assert [a.name for a in scanned.apis if a.deprecated] == [
        "aclnnPromptFlashAttentionV2", "aclnnQuantMatmul"]
    (prov,) = scanned.provenance
    assert (prov.source, prov.kind, prov.version, prov.path, prov.rows) == (
        "cann-install", "cann-headers", "8.3.RC1", "include/aclnnop", 21)
    assert prov.description == "17 headers" and len(prov.sha256) == 64


def test_scan_is_deterministic(scanned):
    again = scan_cann_home(HOME)
    assert again.apis == scanned.apis and again.provenance == scanned.provenance


def test_differing_redeclaration_gets_a_note(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    l2 = home / "include/aclnnop/level2/aclnn_elu.h"
    l2.write_text(l2.read_text().replace("const aclScalar* inputScale, aclTensor* out",
                                         "aclTensor* out"))
    elu = {a.name: a for a in scan_cann_home(home).apis}["aclnnElu"]
    assert len(elu.params) == 5
    assert elu.notes == (f"declared differently at include/aclnnop/level2/aclnn_elu.h:"
                         f"{_line_of(l2, 'aclnnEluGetWorkspaceSize(')}",)


def test_run_function_in_another_header_pairs(tmp_path):
    home = tmp_path / "home"
    inc = home / "include" / "aclnnop"
    inc.mkdir(parents=True)
    (inc / "aclnn_gaussian_blur.h").write_text(
        (FIX / "odd_headers" / "aclnn_gaussian_blur.h").read_text())
    (inc / "aclnn_gaussian_blur_run.h").write_text(
        "ACLNN_API aclnnStatus aclnnGaussianBlur(void* workspace, uint64_t workspaceSize,\n"
        "                                        aclOpExecutor* executor, aclrtStream stream);\n")
    res = scan_cann_home(home)
    blur = {a.name: a for a in res.apis}["aclnnGaussianBlur"]
    assert blur.notes == ()
    assert res.provenance[0].version == "unknown"


@pytest.mark.parametrize("layout", ["latest", "x86_64-linux", "latest/aarch64-linux"])
def test_install_layouts(tmp_path, layout):
    root = tmp_path / "ascend-toolkit" / layout
    (root / "include").mkdir(parents=True)
    shutil.copytree(INC, root / "include" / "aclnnop")
    home = tmp_path / "ascend-toolkit"
    assert find_aclnnop_dir(home) == root / "include" / "aclnnop"
    res = scan_cann_home(home)
    assert len(res.apis) == 21
    assert res.apis[0].source.path == f"{layout}/include/aclnnop/level2/aclnn_add.h"


def test_version_files(tmp_path):
    home = tmp_path / "latest"
    (home / "include" / "aclnnop").mkdir(parents=True)
    assert read_cann_version(home) == "unknown"
    (home / "opp").mkdir()
    (home / "opp" / "version.info").write_text("Version=7.0.0\nversion_dir=7.0.0\n")
    assert read_cann_version(home) == "7.0.0"
    (home / "aarch64-linux").mkdir()
    (home / "aarch64-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=Ascend-cann-toolkit\nversion=8.0.RC3\narch=aarch64\n")
    assert read_cann_version(home) == "8.0.RC3"  # the toolkit install info wins


def test_home_without_aclnnop_is_a_user_error(tmp_path):
    with pytest.raises(OpscanError) as info:
        scan_cann_home(tmp_path)
    assert str(info.value).startswith(f"{tmp_path} has no include/aclnnop: ")
    assert info.value.hint == ("point --home at $ASCEND_HOME_PATH, "
                               "e.g. /usr/local/Ascend/ascend-toolkit/latest")


# ------------------------------------------------------------------ against the catalog

@needs_shared
@pytest.mark.parametrize("api", [
    "aclnnAdd", "aclnnAdds", "aclnnInplaceAdd", "aclnnInplaceAdds", "aclnnElu",
    "aclnnInplaceElu", "aclnnConvolution", "aclnnApplyAdamW", "aclnnApplyAdamWV2",
    "aclnnQuantMatmul", "aclnnPromptFlashAttentionV2", "aclnnNonMaxSuppression",
    "aclnnAddRmsNormDynamicQuantV2", "aclnnCumsum", "aclnnUpsampleBicubic2d",
    "aclnnForeachAddScalarList", "aclnnMatmulAbftVerify", "aclnnInplaceHardsigmoid",
    "aclnnInnerDistributeBarrier"])
def test_header_params_equal_catalog(scanned, catalog, api):
    """Fixture headers copy the real parameter lists; both ingesters must agree."""
    header = {a.name: a for a in scanned.apis}[api]
    assert _sig(header) == _sig(catalog[api])
    assert header.internal == catalog[api].internal


@needs_shared
def test_every_catalog_signature_round_trips_through_the_parser(catalog):
    """Render all 1235 catalog prototypes as a header; the parser gets the same params."""
    text = "\n".join(f"ACLNN_API {a.workspace_signature()};\nACLNN_API {a.run_signature()};"
                     for a in catalog.values())
    parsed = {a.name: a for a in parse_header_text(text, "all.h")}
    assert sorted(parsed) == sorted(catalog)
    for name, api in catalog.items():
        assert [(p.name, p.ctype) for p in parsed[name].params] == \
            [(p.name, p.ctype) for p in api.params], name
