"""aclnnGemm's constants and addend (docs/opgen.md "Batch L", classes 1 and 2 of "Why
paddle first passes fail"): out = alpha * op(A) op(B) + beta * C. A kernel's `bias` is
the addend C with beta 1, and alpha is 1 (reviewed rules scoped to aclnnGemm; evidence
PaddleCustomDevice fused_gemm_epilogue_kernel.cc, fused_gemm_epilogue_grad_kernel.cc,
fused_linear_param_grad_add_kernel.cc at 77090b64). Before, batch L's fused_gemm_epilogue
passed C nullptr, alpha 0 and beta read from `bias` as a host number (alias beta/bias,
through the 1-element-tensor read; it throws for a bias of more than one element)."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t

GEMM = _api("aclnnGemm", _t("A"), _t("B"), _t("C"), Param("alpha", "float", "input"),
            Param("beta", "float", "input"), Param("transA", "int64_t", "input"),
            Param("transB", "int64_t", "input"), _t("out", "output"),
            Param("cubeMathType", "int8_t", "input"))
EPILOGUE = _op("fused_gemm_epilogue",
               "void FusedGemmEpilogueKernel(const Context& dev_ctx, const DenseTensor& x, "
               "const DenseTensor& y, const DenseTensor& bias, const bool trans_x, "
               "const bool trans_y, const std::string& activation, DenseTensor* out, "
               "DenseTensor* reserve_space)")


def test_bias_is_the_addend_added_once_and_alpha_is_one():
    args = _args(build_paddle_kernel(GEMM, EPILOGUE, framework_dtypes=("float32",)))
    assert args["C"].prelude == [
        "phi::DenseTensor acl_c(bias);  // the epilogue's bias is Gemm's addend C (beta 1)"]
    assert args["alpha"].prelude == ["float acl_alpha = 1.0f;  // out = op(A) op(B) (+ beta C)"]
    assert args["beta"].prelude == ["float acl_beta = 1.0f;  // C is the bias, added once"]
    assert not any("opgen_host_scalar" in line for a in args.values() for line in a.prelude)


def test_without_bias_beta_is_left_to_the_engineer():
    op = _op("gemm_nobias", "void GemmKernel(const Context& dev_ctx, const DenseTensor& x, "
                            "const DenseTensor& y, DenseTensor* out)")
    args = _args(build_paddle_kernel(GEMM, op, framework_dtypes=("float32",)))
    assert args["alpha"].expr == "acl_alpha"
    assert "1.0f" not in " ".join(args["beta"].prelude)
