"""A new npu kernel is registered for the aclnn dtypes the phi kernel has on GPU/XPU in
Paddle's source too (opdb/sources/paddle/phi_kernels.jsonl), not only on the CPU wheel and
the other PaddleCustomDevice backends (docs/opgen.md "Dtypes and registration bodies").
Upstream PaddleCustomDevice (77090b64) registers bfloat16 silu (activation_kernel.cc),
float16 group_norm (group_norm_kernel.cc) and double fused_gemm_epilogue
(fused_gemm_epilogue_kernel.cc), which phi has on GPU only."""
from __future__ import annotations

import pytest

from tests.codegen.paddle_kernel_parts import registered_in_tree


@pytest.mark.parametrize("kernel,api,dtype", [
    ("silu", "aclnnSilu", "phi::dtype::bfloat16"),
    ("silu_grad", "aclnnSiluBackward", "phi::dtype::bfloat16"),
    ("group_norm", "aclnnGroupNorm", "phi::dtype::float16"),
    ("fused_gemm_epilogue", "aclnnGemm", "double"),
])
def test_registers_the_dtypes_phi_has_on_gpu(kernel, api, dtype):
    assert dtype in registered_in_tree(kernel, api)


def test_gpu_dtypes_also_narrow_a_kernel_the_wheel_lacks():
    # fused_linear_param_grad_add is GPU/XPU-only in phi: no CPU or other-backend row,
    # so its list was every dtype aclnnReduceSum takes; phi's GPU list bounds it now.
    got = registered_in_tree("fused_linear_param_grad_add", "aclnnReduceSum")
    assert "bool" not in got and "int32" not in got and "float" in got
