"""A grad kernel rendered as a gradient identity registers float64 when the phi kernel has
it elsewhere and no step takes it on the chip: the kernel runs its float32 instantiation
on float32 copies and casts its outputs back (docs/opgen.md "Paddle registration lists:
the last gaps"). Upstream matmul_kernel.cc's MatmulGradKernel registers double and casts
x, y, dout to float32 around its aclnnMatmul steps (TensorCast / OutCast); opgen's
identity registered float, float16, bfloat16 only."""
from __future__ import annotations

from tests.codegen.paddle_kernel_parts import registered_in_tree


def _cc(api: str, kernel: str) -> str:
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=kernel, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc"))


def test_matmul_grad_registers_double_in_npu_order():
    assert registered_in_tree("matmul_grad", "aclnnMatmul") == [
        "float", "phi::dtype::float16", "double", "phi::dtype::bfloat16"]


def test_the_double_instantiation_runs_the_float_one_on_copies():
    cc = _cc("aclnnMatmul", "matmul_grad")
    assert "if (std::is_same<T, double>::value) {" in cc
    assert ("MatmulGradKernel<float, Context>(dev_ctx, x_float32, y_float32, dout_float32, "
            "transpose_x, transpose_y, dx ? &dx_float32 : nullptr, "
            "dy ? &dy_float32 : nullptr);") in cc
    assert "opgen_cast_back(dev_ctx, dx_float32, dx);" in cc
    assert "phi::DenseTensor opgen_compute_as(" in cc  # the helpers are emitted


def test_reentry_lines_for_optional_inputs_and_none_for_lists():
    from codegen.paddle_callsite import compute_as_reentry
    lines = compute_as_reentry("FooGradKernel", [
        ("x", "const phi::DenseTensor&"), ("r", "const paddle::optional<phi::DenseTensor>&"),
        ("alpha", "float"), ("dx", "phi::DenseTensor*")], "float64")
    assert "  paddle::optional<phi::DenseTensor> r_float32;" in lines
    assert ("  FooGradKernel<float, Context>(dev_ctx, x_float32, r_float32, alpha, "
            "dx ? &dx_float32 : nullptr);") in lines
    assert compute_as_reentry("FooGradKernel", [
        ("xs", "const std::vector<const phi::DenseTensor*>&"), ("dx", "phi::DenseTensor*")],
        "float64") is None
    assert compute_as_reentry("FooGradKernel", [("x", "const phi::DenseTensor&")],
                              "int64") is None


def test_a_composition_lists_its_float64_in_npu_order_not_last():
    # the dropout composition (forward_compositions.yaml, float64_as_float32) appended
    # double after bfloat16; PaddleCustomDevice's npu registrations put double before it
    assert registered_in_tree("dropout", "aclnnDropoutDoMask") == [
        "float", "phi::dtype::float16", "double", "phi::dtype::bfloat16"]
