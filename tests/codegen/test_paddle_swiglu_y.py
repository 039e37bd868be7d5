"""swiglu's optional `y` (class 8 of docs/opgen.md; reviewed `kernel_rules` keyed by
aclnnSwiGlu / aclnnSwiGluGrad): given, upstream (PaddleCustomDevice swiglu_kernel.cc at
77090b64) joins x and y on the last dim before the call and splits the gradient back into
dx and dy. A rule's need `a|b` finds the wheel's names (`z`, `dz`) or upstream's (`out`,
`dout`)."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.test_paddle_grad_inputs import (SWIGLU, SWIGLU_GRAD, SWIGLU_GRAD_OP,
                                                   SWIGLU_OP)

UPSTREAM_GRAD_OP = _op("swiglu_grad",
                       "void SwiGluGradKernel(const Context& dev_ctx, const DenseTensor& x, "
                       "const paddle::optional<DenseTensor>& y, const DenseTensor& dout, "
                       "DenseTensor* dx, DenseTensor* dy)", "backward")


def _guards(k: dict) -> list[str]:
    return [line.strip() for line in k["guards"]]


def test_swiglu_with_y_joins_x_and_y():
    k = build_paddle_kernel(SWIGLU, SWIGLU_OP, framework_dtypes=("float32",))
    g = _guards(k)
    assert g[0].startswith("if (y) {")
    assert "std::vector<const phi::DenseTensor*> acl_y_in = {&x, &acl_y_y};" in g
    assert "EXEC_NPU_CMD(aclnnCat, dev_ctx, acl_y_in, acl_y_dim, acl_y_xy);" in g
    assert "EXEC_NPU_CMD(aclnnSwiGlu, dev_ctx, acl_y_xy, acl_y_dim, *z);" in g
    assert not any(u["name"] == "y" for u in k["unused"])


def test_swiglu_grad_with_y_splits_the_gradient():
    for o, dout in ((SWIGLU_GRAD_OP, "dz"), (UPSTREAM_GRAD_OP, "dout")):
        k = build_paddle_kernel(SWIGLU_GRAD, o, framework_dtypes=("float32",))
        g = _guards(k)
        assert f"EXEC_NPU_CMD(aclnnSwiGluGrad, dev_ctx, {dout}, acl_y_xy, acl_y_dim, acl_y_dxy);" in g
        assert "std::vector<const phi::DenseTensor*> acl_y_out = {&acl_y_dx, &acl_y_dy};" in g
        assert ("EXEC_NPU_CMD(aclnnSplitTensor, dev_ctx, acl_y_dxy, acl_y_sections, acl_y_dim, "
                "acl_y_out);") in g
        assert "acl_y_dy = *dy;" in g and "acl_y_dx = *dx;" in g
        assert not {u["name"] for u in k["unused"]} & {"y", "dy"}
