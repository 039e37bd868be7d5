"""An integer dtype a value-moving kernel's API lacks goes as an exact copy in a wider
integer the API takes, and is registered (docs/opgen.md "Seventh audit: the pool at head,
paddle rows 13-24"): `slice` registered no int16 where PaddleCustomDevice slice_kernel.cc
does, because aclnnSliceV2 lacks INT16 (ops-math aclnn_slice_v2.cpp DTYPE_SUPPORT_LIST).
A slice only moves elements, so int16 -> int32 -> slice -> int16 gives them back exactly."""
from __future__ import annotations

import pytest

from codegen.paddle_callsite import widened_dtypes


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def _cc(db, api, op):
    from codegen.api import prepare
    r = prepare(db, api, "paddle", op=op, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r


def test_widened_dtypes_take_the_narrowest_wider_integer():
    api = ["float32", "int32", "bool", "uint8", "int8", "int64", "float16", "bfloat16"]
    assert widened_dtypes(api, ("float32", "int16", "int8", "float64")) == {"int16": "int32"}
    assert widened_dtypes(["float32", "int64"], ("int8", "int16", "int32")) == {
        "int8": "int64", "int16": "int64", "int32": "int64"}
    assert widened_dtypes(api, None) == {}
    assert widened_dtypes(["float32", "float16"], ("int16",)) == {}  # no wider integer


def test_slice_registers_int16_through_an_int32_copy(db):
    cc, r = _cc(db, "aclnnSliceV2", "slice")
    assert not r.todos
    reg = cc.split("PD_REGISTER_PLUGIN_KERNEL(slice,")[1]
    assert "int16_t," in reg
    body = [ln.strip() for ln in cc.split("void SliceKernel")[1].splitlines()]
    assert any(ln.startswith("phi::DenseTensor acl_self_int32 = opgen_compute_as(dev_ctx, "
                             "acl_self_int64, {phi::DataType::INT16}, phi::DataType::INT32, "
                             "/*copy=*/true);") for ln in body)
    assert any(ln.startswith("phi::DenseTensor acl_out_int32 = opgen_compute_as(dev_ctx, "
                             "acl_out_int64, {phi::DataType::INT16}, phi::DataType::INT32, "
                             "/*copy=*/false);") for ln in body)
    call = body.index("EXEC_NPU_CMD(aclnnSliceV2, dev_ctx, acl_self_int32, starts, "
                      "acl_ends_last, axes, acl_steps, acl_out_int32);")
    assert body[call + 1] == "opgen_cast_back(dev_ctx, acl_out_int32, &acl_out_int64);"
    assert "OPGEN_COMPUTE_AS_DEFINED" in cc  # the helper is in the file
    readme = next(t for p, t in r.files.items() if p.endswith("README.md"))
    assert "int16: the API lacks it on ascend910b and the kernel only moves values" in readme


def test_strided_slice_reversed_route_widens_int16(db):
    # the negative-stride route slices `x` itself (arg_rules.yaml aclnnSliceV2 `steps`): its
    # int16 input goes as an int32 copy there too, flipped and cast into the output
    cc, _ = _cc(db, "aclnnSliceV2", "strided_slice")
    body = [ln.strip() for ln in cc.split("void StridedSliceKernel")[1].splitlines()]
    at = body.index("EXEC_NPU_CMD(aclnnCast, dev_ctx, acl_steps_in, acl_steps_wt, acl_steps_w);")
    assert body[at + 1] == "acl_steps_in = acl_steps_w;"
    assert body.index("EXEC_NPU_CMD(aclnnSliceV2, dev_ctx, acl_steps_in, acl_steps_b, "
                      "acl_steps_e, acl_steps_ax, acl_steps_st, acl_steps_fwd);") > at


def test_a_computing_kernel_is_not_widened(db):
    # integer arithmetic in a wider type cast back is not the narrow type's arithmetic
    # (overflow, rounding): only value-moving kernels (phi_view_kernels.jsonl) take the
    # route. aclnnExp lacks INT32 and takes INT64, phi's exp has int32: not registered
    from codegen.paddle_callsite import value_moving_kernels
    from codegen.paddle_target import framework_dtypes_of, paddle_dtypes
    assert "exp" not in value_moving_kernels()
    api = paddle_dtypes(db.aclnn_api("aclnnExp"), None, None, None)[0]
    assert widened_dtypes(api, framework_dtypes_of(db.framework_op("paddle", "exp"))) == {
        "int32": "int64"}
    cc, _ = _cc(db, "aclnnExp", "exp")
    assert "INT32}" not in cc
    assert "                          int,\n" not in cc.split("PD_REGISTER_PLUGIN_KERNEL(exp,")[1]
