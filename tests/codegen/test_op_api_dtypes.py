"""Per-chip dtype restrictions read from the aclnn op_api C++ (opdb/sources/cann/
extract_op_api_dtypes.py -> aclnn_op_api_dtypes.jsonl), merged into opdb.soc_dtypes where
the doc is silent, and the int32 output opgen's torch target allocates from them
(audit defect 2, branch ws/h9fix: aclnnMaxPool3dWithArgmax's `indices`)."""
from __future__ import annotations

import sys
from pathlib import Path

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "opdb" / "sources" / "cann"))
import extract_op_api_dtypes as ex  # noqa: E402

db = shipped_db_fixture()

# the shape of ops-nn aclnn_max_pool3d_with_argmax.cpp (e5c3fa93): a list chosen by a
# function of the arch, and an if/else on IsRegbase() around the indices check
SRC = """
static const std::initializer_list<DataType> NULL_SUPPORT_LIST = {};
static const std::initializer_list<DataType> OUT_LIST = {DataType::DT_BF16, DataType::DT_FLOAT};
static const std::initializer_list<op::DataType> IDX = {op::DataType::DT_INT32};
static const std::initializer_list<op::DataType> IDX_REGBASE = {op::DataType::DT_INT32,
                                                                op::DataType::DT_INT64};
static const std::initializer_list<DataType>& GetDtypeSupportList()
{
    auto curArch = GetCurrentPlatformInfo().GetCurNpuArch();
    if (curArch == NpuArch::DAV_2201 || Ops::NN::AclnnUtil::IsRegbase(curArch)) {
        return OUT_LIST;
    } else {
        return NULL_SUPPORT_LIST;
    }
}
static bool CheckDtypeValid(const aclTensor* self, const aclTensor* indices)
{
    auto dtypeSupportList = GetDtypeSupportList();
    OP_CHECK_DTYPE_NOT_SUPPORT(self, dtypeSupportList, return false);
    if (Ops::NN::AclnnUtil::IsRegbase()) {
        OP_CHECK_DTYPE_NOT_SUPPORT(indices, IDX_REGBASE, return false);
    } else {
        OP_CHECK_DTYPE_NOT_SUPPORT(indices, IDX, return false);  // "DT_INT64" in a comment
    }
    if (self->GetDataType() == DataType::DT_FLOAT) {
        OP_CHECK_DTYPE_NOT_SUPPORT(out, IDX, return false);
    }
    return true;
}
"""


def test_lists_chosen_by_the_chip_are_extracted():
    rows = ex.restrictions(SRC, {"self", "indices", "out"})
    assert rows == [
        {"param": "indices", "socs": ["ascend910b", "ascend910_93", "ascend910", "ascend310p",
                                      "ascend310b"], "allow": ["INT32"], "line": 23},
        {"param": "indices", "socs": ["ascend950"], "allow": ["INT32", "INT64"], "line": 21},
        {"param": "self", "socs": ["ascend910b", "ascend910_93", "ascend950"],
         "allow": ["BFLOAT16", "FLOAT"], "line": 19},
        {"param": "self", "socs": ["ascend910", "ascend310p", "ascend310b"], "allow": [], "line": 19},
    ]  # `out`'s check is under a dtype test, not a chip test: not read


def test_an_unconditional_check_is_no_per_chip_fact():
    src = ("static const std::initializer_list<op::DataType> L = {op::DataType::DT_INT32};\n"
           "static bool C(const aclTensor* x) { OP_CHECK_DTYPE_NOT_SUPPORT(x, L, return false); }\n")
    assert ex.restrictions(src, {"x"}) == []


def test_an_early_return_on_the_chip_guards_the_checks_after_it():
    src = """static const std::initializer_list<op::DataType> A = {op::DataType::DT_INT32};
static const std::initializer_list<op::DataType> B = {op::DataType::DT_INT32, op::DataType::DT_INT64};
static bool C(const aclTensor* x) {
    if (GetCurrentPlatformInfo().GetSocVersion() == SocVersion::ASCEND950) {
        OP_CHECK_DTYPE_NOT_SUPPORT(x, B, return false);
        return true;
    }
    OP_CHECK_DTYPE_NOT_SUPPORT(x, A, return false);
    return true;
}
"""
    rows = ex.restrictions(src, {"x"})
    assert [(r["socs"], r["allow"]) for r in rows] == [
        (["ascend910b", "ascend910_93", "ascend910", "ascend310p", "ascend310b"], ["INT32"]),
        (["ascend950"], ["INT32", "INT64"])]


def test_a_list_returned_in_a_switch_case_is_unknown():
    """ops-nn aclnn_ascend_anti_quant.cpp returns its lists from `switch (npuArch) { case
    NpuArch::DAV_2201: {...} }`; cases are not read, so no chip may take another's list."""
    src = """static const std::initializer_list<op::DataType> A = {op::DataType::DT_INT8};
static const std::initializer_list<op::DataType> B = {op::DataType::DT_INT8, op::DataType::DT_INT4};
static const std::initializer_list<DataType>& L()
{
    if (Ops::NN::AclnnUtil::IsRegbase()) {
        return B;
    }
    switch (GetCurrentPlatformInfo().GetCurNpuArch()) {
        case NpuArch::DAV_2201: {
            return A;
        }
        default: {
            return A;
        }
    }
}
static bool C(const aclTensor* x) { OP_CHECK_DTYPE_NOT_SUPPORT(x, L(), return false); }
"""
    assert ex.restrictions(src, {"x"}) == []


def test_the_cpp_fact_applies_where_the_doc_is_silent():
    from opdb.soc_dtypes import soc_dtypes
    kept, why = soc_dtypes("aclnnMaxPool3dWithArgmax", "ascend910b", ["int32", "int64"], "indices")
    assert kept == ["int32"]
    assert why == ["hicann/ops-nn pooling/max_pool3d_with_argmax_v2/op_api/"
                   "aclnn_max_pool3d_with_argmax.cpp:75"]
    assert soc_dtypes("aclnnMaxPool3dWithArgmax", "ascend950", ["int32", "int64"],
                      "indices")[0] == ["int32", "int64"]
    # a doc line naming the parameter wins on its chips (aclnnAdaptiveMaxPool3d.md:177)
    _, why = soc_dtypes("aclnnAdaptiveMaxPool3d", "ascend910b", ["int32", "int64"], "indicesOut")
    assert all(w.endswith(".md:177") for w in why)


def test_max_pool3d_indices_are_allocated_int32_on_a2(db):
    """MaxPool3dWithIndicesKernelNpuOpApi.cpp:104-105 allocates `indices` at::kInt; the API
    takes only INT32 off regbase. Before, the meta function's int64 went to it."""
    r = prepare(db, "aclnnMaxPool3dWithArgmax", "torch", op="aten::max_pool3d_with_indices")
    body = _fn(r.files[ADAPTER.format("MaxPool3dWithIndices")],
               "std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(")
    assert ("self.options().dtype(std::get<1>(meta).scalar_type() == at::kLong ? at::kInt : "
            "std::get<1>(meta).scalar_type()));") in body
    assert "aclnn_max_pool3d_with_argmax.cpp:75" in body
    r950 = prepare(db, "aclnnMaxPool3dWithArgmax", "torch", op="aten::max_pool3d_with_indices",
                   soc="ascend950")
    assert "at::kInt" not in r950.files[ADAPTER.format("MaxPool3dWithIndices")]


def test_the_shipped_extract_is_sorted_and_names_its_source():
    import json
    rows = [json.loads(line) for line in ex.OUT.read_text().splitlines()]
    assert rows == sorted(rows, key=lambda r: (r["api"], r["param"], r["source"]["line"], r["socs"]))
    assert all(r["source"]["path"].endswith(".cpp") and len(r["source"]["commit"]) == 40 for r in rows)
