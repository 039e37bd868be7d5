"""The registration of a paddle kernel follows the tensor input Paddle keys the kernel's
dtype on (docs/opgen.md "Third audit: the pool at head, paddle rows"): `where`
(condition, x, y) was registered for `bool` only, the dtypes of aclnnSWhere's first
tensor input `condition`, so no float or integer `where` ever selected it. Paddle's
ops.yaml gives `where` no `data_type`, and phi's KernelKeyParser takes the dtype of each
tensor input in turn, so the last (`y`, aclnn's `other`) decides; upstream
PaddleCustomDevice where_kernel.cc registers int32, int64, float64, float32, float16,
bfloat16."""
from __future__ import annotations

from tests.codegen.paddle_kernel_parts import FLOATS, api, op, registered_dtypes, tensor


def test_key_is_the_last_tensor_input_without_data_type():
    from codegen.paddle_target import kernel_key_input
    assert kernel_key_input("where", ("condition", "x", "y")) == "y"


def test_key_is_the_data_type_argument_when_the_yaml_names_one():
    from codegen.paddle_target import kernel_key_input
    # ops.yaml index_select: `data_type : x` (the index input comes after it)
    assert kernel_key_input("index_select", ("x", "index")) == "x"


def test_no_key_for_a_kernel_the_yaml_does_not_list():
    from codegen.paddle_target import kernel_key_input
    assert kernel_key_input("tril_triu_grad", ("out_grad",)) is None
    assert kernel_key_input("where", ("condition", "x")) is None  # the key is no input


def test_where_registers_the_data_dtypes_not_the_mask_dtype():
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnSWhere", "paddle", op="where", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    regs = registered_dtypes(cc, "where")
    for d in ("float", "double", "int", "int64_t", "phi::dtype::float16",
              "phi::dtype::bfloat16"):
        assert d in regs, (d, regs)
    assert "aclnn dtypes of `other`, the input Paddle keys the kernel's dtype on" in \
        r.files["README.md"]


def test_a_mask_first_input_does_not_pick_the_dtypes():
    from codegen.paddle_target import build_paddle_kernel
    # built from parts: the first tensor input is a bool mask, the keyed one is floating
    a = api("aclnnSWhere", tensor("condition", dtypes=("bool",)), tensor("self"),
            tensor("other"), tensor("out", "output"))
    k = build_paddle_kernel(a, op("where", "void WhereKernel(const Context& dev_ctx, "
                                  "const DenseTensor& condition, const DenseTensor& x, "
                                  "const DenseTensor& y, DenseTensor* out)"),
                            framework_dtypes=("bool",) + FLOATS)
    assert k["dtype_names"] == [d for d in k["dtype_names"] if d in FLOATS]
    assert set(k["dtype_names"]) == set(FLOATS)
    assert k["dtype_key"] == "other"
