"""dtypes of aclnn parameters the docs give none for (experimental APIs without a doc
table), read from the op_api C++ checks (extract_op_api_dtypes.undocumented ->
aclnn_op_api_undocumented_dtypes.jsonl) and registered by opgen's paddle target
(docs/opgen.md "Paddle registration lists: the last gaps"). aclnnAtanGrad had no dtypes,
so atan_grad was registered for float (+ double computed in float32) only; upstream
registers float16 too, and aclnn_atan_grad.cpp checks FLOAT16, FLOAT, BF16."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "opdb" / "sources" / "cann"))
import extract_op_api_dtypes as ex  # noqa: E402

# the shape of ops-math experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp (c4193324)
SRC = """
static const std::initializer_list<op::DataType> ATAN_GRAD_DTYPE_SUPPORT_LIST = {
    DataType::DT_FLOAT16, DataType::DT_FLOAT, DataType::DT_BF16};

static bool CheckDtypeValid(const aclTensor* x, const aclTensor* dy, const aclTensor* dx)
{
    // x, dy, dx: one dtype
    OP_CHECK_DTYPE_NOT_MATCH(dy, x->GetDataType(), return false);
    OP_CHECK_DTYPE_NOT_MATCH(dx, x->GetDataType(), return false);

    if (!CheckType(x->GetDataType(), ATAN_GRAD_DTYPE_SUPPORT_LIST)) {
        OP_LOGE(ACLNN_ERR_PARAM_INVALID, "AtanGrad: unsupported dtype=%d.", 1);
        return false;
    }
    return true;
}
"""


def test_a_checktype_list_and_its_ties_are_read():
    rows = ex.undocumented(SRC, {"x", "dy", "dx"})
    assert rows == [{"param": p, "allow": ["BFLOAT16", "FLOAT", "FLOAT16"], "line": 11}
                    for p in ("dx", "dy", "x")]


def test_only_the_params_the_docs_are_silent_on():
    assert [r["param"] for r in ex.undocumented(SRC, {"dy"})] == []  # x not asked: no tie
    assert ex.restrictions(SRC, {"x", "dy", "dx"}) == []  # the same on every chip


def test_a_list_checked_on_some_chips_only_is_no_undocumented_list():
    src = SRC.replace("    if (!CheckType(", "    if (Ops::NN::AclnnUtil::IsRegbase()) {\n"
                      "    if (!CheckType(").replace("    return true;\n}", "    }\n    return true;\n}")
    assert ex.undocumented(src, {"x", "dy", "dx"}) == []


def test_the_shipped_rows_give_atan_grad_its_dtypes():
    from opdb.soc_dtypes import undocumented_dtypes
    got = undocumented_dtypes("aclnnAtanGrad", "x")
    assert got is not None and set(got[0]) == {"float16", "float32", "bfloat16"}
    assert got[1].endswith("experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp:60")


def test_atan_grad_registers_float16_and_bfloat16():
    from tests.codegen.paddle_kernel_parts import registered_in_tree
    regs = registered_in_tree("atan_grad", "aclnnAtan")
    for d in ("float", "phi::dtype::float16", "phi::dtype::bfloat16"):
        assert d in regs, regs


def test_a_checktype_conjunct_of_another_condition_is_skipped():
    # aclnn_scatter.cpp-like: a float-only list checked for one reduction mode only
    src = SRC.replace("if (!CheckType(x->GetDataType(), ATAN_GRAD_DTYPE_SUPPORT_LIST))",
                      "if (reduce != 0 && !CheckType(x->GetDataType(), ATAN_GRAD_DTYPE_SUPPORT_LIST))")
    assert ex.undocumented(src, {"x", "dy", "dx"}) == []
    src = SRC.replace("if (!CheckType(x->GetDataType(), ATAN_GRAD_DTYPE_SUPPORT_LIST))",
                      "if (!CheckType(x->GetDataType(), ATAN_GRAD_DTYPE_SUPPORT_LIST) || reduce)")
    assert ex.undocumented(src, {"x", "dy", "dx"}) == []


def test_a_checktype_that_logs_no_error_is_a_route_choice():
    # aclnn_index.cpp:264 check_index_aicore: `if (!CheckType(...)) { return false; }`
    # picks the AI CPU route, it rejects nothing
    src = SRC.replace('        OP_LOGE(ACLNN_ERR_PARAM_INVALID, "AtanGrad: unsupported dtype=%d.", 1);\n', "")
    assert ex.undocumented(src, {"x", "dy", "dx"}) == []


def test_the_readme_names_the_cpp_line():
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnAtan", "paddle", op="atan", layout="in-tree")
    assert ("aclnnAtanGrad on ascend910b: dtypes cut by `x`'s op_api check (the docs list no "
            "dtypes): hicann/ops-math experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp:60"
            ) in r.files["README.md"]
