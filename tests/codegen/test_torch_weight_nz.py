"""An aclnn API with a `...WeightNz` sibling of the same parameters sends an ND input
times a FRACTAL_NZ weight to the sibling on the chips the sibling's docs name, as
op-plugin 517f2e7d's matmul adapters do (docs/opgen.md, "FRACTAL_NZ weight routes").
The sibling is found in opdb's API list and the weight by its parameter name; nothing
keys on an API or op name in code. The tests name the upstream adapters."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

A2_A3_950 = ("(c10_npu::GetSocVersion() >= c10_npu::SocVersion::Ascend910B1 && "
             "c10_npu::GetSocVersion() < c10_npu::SocVersion::Ascend310B1) || "
             "(c10_npu::GetSocVersion() >= c10_npu::SocVersion::Ascend910_9391)")
# aclnnMatmulWeightNz's docs add the Atlas inference series (310P): upstream's
# DO_MATMUL_COMPATIBILITY has Is310PBoolCheck() too
P310_A2_A3_950 = ("(c10_npu::GetSocVersion() >= c10_npu::SocVersion::Ascend310P1 && "
                  "c10_npu::GetSocVersion() < c10_npu::SocVersion::Ascend310B1) || "
                  "(c10_npu::GetSocVersion() >= c10_npu::SocVersion::Ascend910_9391)")


def test_the_sibling_is_found_by_name_or_op_directory(db):
    """`<API>WeightNz` with the same parameters, else the one WeightNz API of the op
    directory with them: aclnnMm -> aclnnMatmulWeightNz (MmKernelNpuOpApi.cpp)."""
    from codegen.variants import weight_nz_variant
    got = {n: getattr(weight_nz_variant(db, db.aclnn_api(n)), "name", None)
           for n in ("aclnnMm", "aclnnMatmul", "aclnnAddmm", "aclnnBatchMatMul",
                     "aclnnBaddbmm", "aclnnInplaceAddmm", "aclnnMatmulWeightNz", "aclnnAbs")}
    assert got == {"aclnnMm": "aclnnMatmulWeightNz", "aclnnMatmul": "aclnnMatmulWeightNz",
                   "aclnnAddmm": "aclnnAddmmWeightNz",
                   "aclnnBatchMatMul": "aclnnBatchMatMulWeightNz",
                   # other parameters (batch1/batch2, beta, alpha): no sibling
                   "aclnnBaddbmm": None, "aclnnInplaceAddmm": None,
                   "aclnnMatmulWeightNz": None, "aclnnAbs": None}


def test_mm_sends_an_nz_mat2_to_matmul_weight_nz(db):
    """MmKernelNpuOpApi.cpp: `is_nd_nz_format(self, mat2)` -> aclnnMatmulWeightNz, else
    aclnnMm, behind DO_MATMUL_COMPATIBILITY's format gate. Before, every format went to
    aclnnMm (the scoring audit's Addmm finding, the same in Mm)."""
    r = prepare(db, "aclnnMm", "torch", op="aten::mm", layout="in-tree")
    text = r.files[ADAPTER.format("Mm")]
    assert '#include "op_plugin/utils/OpUtils.h"' in text
    cond = f"op_plugin::utils::is_nd_nz_format(self, mat2) && ({P310_A2_A3_950})"
    for sig in ("at::Tensor mm(", "at::Tensor& mm_out("):
        body = _fn(text, sig)
        nz = body.index(f"    if ({cond}) {{")
        assert nz < body.index("EXEC_NPU_CMD(aclnnMatmulWeightNz, self, mat2, out, ") \
            < body.index("    } else {\n", nz) < body.index("EXEC_NPU_CMD(aclnnMm, self, mat2, out, ")
        # the gate: a non-base format the route does not take goes to acl_op
        # (aclnn-only: refused); the NZ API's DO_COMPATIBILITY only on the route
        gate = body[body.index("#ifndef OPGEN_STANDALONE"):body.index("#endif")]
        assert ("if (!at_npu::native::FormatHelper::IsOpInputBaseFormat(self) || "
                "!at_npu::native::FormatHelper::IsOpInputBaseFormat(mat2)) {") in gate
        assert f"if (!({cond})) {{" in gate
        assert "if (!c10_npu::IsAclnnOnly()) {" in gate
        assert "DO_COMPATIBILITY(aclnnMatmulWeightNz, acl_op::mm" in gate
        assert "} else {\n        DO_COMPATIBILITY(aclnnMm, acl_op::mm" in gate
        assert gate.count("DO_COMPATIBILITY(") == 2
    # a standalone build does not link OpUtils.cpp: the same tests are defined there
    standalone = text[text.index("#ifdef OPGEN_STANDALONE\n// op-plugin's format tests"):]
    assert "bool is_nz_format(const at::Tensor& mat2)" in standalone
    assert "return tensor_desc.npu_format_ == ACL_FORMAT_FRACTAL_NZ;" in standalone
    assert "c10_npu::GetSocVersion() > c10_npu::SocVersion::Ascend910_9362" in standalone


def test_addmm_routes_functional_and_out_not_the_inplace_op(db):
    """AddmmKernelNpuOpApi.cpp: is_nd_nd_nz_format (a 1- or 2-d ND bias `self`, ND
    `mat1`, NZ `mat2`) on A2/A3/950 -> aclnnAddmmWeightNz; `addmm_` calls
    aclnnInplaceAddmm, which has no NZ sibling."""
    r = prepare(db, "aclnnAddmm", "torch", op="aten::addmm", layout="in-tree")
    text = r.files[ADAPTER.format("Addmm")]
    cond = ("op_plugin::utils::is_nd_nz_format(mat1, mat2) && self.dim() >= 1 && "
            f"!op_plugin::utils::is_nz_format(self) && ({A2_A3_950})")
    for sig in ("at::Tensor addmm(", "at::Tensor& addmm_out("):
        body = _fn(text, sig)
        assert f"    if ({cond}) {{" in body
        assert "EXEC_NPU_CMD(aclnnAddmmWeightNz, self, mat1, mat2, beta, alpha, out, " in body
        assert "IsOpInputBaseFormat(self) || " in body
    inplace = _fn(text, "at::Tensor& addmm_(")
    assert "WeightNz" not in inplace and "is_nz_format" not in inplace


def test_no_route_for_a_weight_matched_by_position(db):
    """aclnnMatmul for `matmul_backward`: `mat2` is fed `grad` by position, not a weight
    the caller formatted; upstream's MatmulBackwardKernelNpuOpApi.cpp has no NZ route."""
    r = prepare(db, "aclnnMatmul", "torch", op="aten::matmul_backward", layout="in-tree")
    text = "".join(v for k, v in r.files.items() if k.endswith(".cpp"))
    assert "EXEC_NPU_CMD(aclnnMatmul," in text
    assert "WeightNz" not in text and "is_nd_nz_format" not in text


def test_the_soc_test_names_the_docs_chips():
    from codegen.torch_target import _soc_named_cond
    assert _soc_named_cond(("Ascend 950PR/Ascend 950DT",
                            "Atlas A3 训练系列产品/Atlas A3 推理系列产品",
                            "Atlas A2 训练系列产品/Atlas A2 推理系列产品")) == A2_A3_950
    assert _soc_named_cond(()) is None
