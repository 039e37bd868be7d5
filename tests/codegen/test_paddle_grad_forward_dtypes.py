"""A grad kernel is registered for the dtypes its forward kernel has on the other
backends too (docs/opgen.md "Third audit: the pool at head, paddle rows"): autograd runs
the grad in the dtype the forward ran in. `tril_triu_grad` was registered without
bfloat16, which upstream PaddleCustomDevice tril_triu_kernel.cc registers and aclnnTril
takes on A2/A3 (ops-math aclnn_tril.cpp DTYPE_SUPPORT_LIST_910B), because the wheel's
CPU grad and the other backends' grads lack it while the forward `tril_triu` has it
there; `softmax_grad` the same (the first scoring audit's note)."""
from __future__ import annotations

from tests.codegen.paddle_kernel_parts import registered_in_tree


def test_forward_kernels_from_the_yaml_and_from_the_grad_name():
    from codegen.paddle_target import forward_kernels
    assert forward_kernels("softmax_grad") == ("softmax",)  # backward.yaml `forward`
    assert forward_kernels("tril_triu_grad") == ("tril_triu",)  # not in the YAML: phi's name
    assert forward_kernels("softmax") == ()


def test_tril_triu_grad_registers_bfloat16_as_its_forward():
    assert "phi::dtype::bfloat16" in registered_in_tree("tril_triu_grad", "aclnnTril")


def test_softmax_grad_registers_bfloat16_as_its_forward():
    assert "phi::dtype::bfloat16" in registered_in_tree("softmax_grad", "aclnnSoftmaxBackward")
