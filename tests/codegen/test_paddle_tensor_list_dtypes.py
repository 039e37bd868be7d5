"""A paddle kernel whose dtype Paddle keys on a `Tensor[]` input registers that list's aclnn
dtypes, and no dtype a list would carry uncast (docs/opgen.md "Paddle registration lists:
the last gaps"). check_finite_and_unscale (ops.yaml `data_type : x`, `x` a Tensor[], the
kernel's `xs`; `inplace : (x -> out)`, aclnnForeachNonFiniteCheckAndUnscale updates
`scaledGrads` <- `outs` in place) was registered for float and double, the dtypes of the
float32-only `foundInf`: upstream registers float16 and bfloat16, the dtypes AMP runs it
for. add_n registered double with only `out` computed in float32 while its float64
members reached aclnnSum uncast (aclnn_sum.cpp rejects DT_DOUBLE)."""
from __future__ import annotations

from tests.codegen.paddle_kernel_parts import FLOATS, api, op, registered_in_tree, tensor
from opdb.model import Param


def test_a_tensor_list_key_spelled_otherwise_on_the_kernel():
    from codegen.paddle_target import kernel_key_input
    # the YAML's `x` is the kernel's `xs`: the same position among the tensor inputs
    assert kernel_key_input("check_finite_and_unscale", ("xs", "scale")) == "xs"
    assert kernel_key_input("check_finite_and_unscale", ("xs",)) is None  # counts differ


def test_the_outputs_written_in_place_of_the_key():
    from codegen.paddle_target import inplace_outputs
    assert inplace_outputs("check_finite_and_unscale", "xs", ("xs", "scale"),
                           ("outs", "found_infinite")) == ("outs",)
    assert inplace_outputs("check_finite_and_unscale", "scale", ("xs", "scale"),
                           ("outs", "found_infinite")) == ()


def test_check_finite_and_unscale_registers_the_lists_dtypes():
    assert registered_in_tree("check_finite_and_unscale",
                              "aclnnForeachNonFiniteCheckAndUnscale") == [
        "float", "phi::dtype::float16", "phi::dtype::bfloat16"]


def test_add_n_registers_no_dtype_its_list_would_carry_uncast():
    regs = registered_in_tree("add_n", "aclnnSum")
    assert "double" not in regs and "float" in regs, regs


def test_a_list_member_dtype_is_not_computed_as_float32():
    from codegen.paddle_target import build_paddle_kernel
    # built from parts: the API's list lacks float64, the kernel has it elsewhere
    a = api("aclnnSum", Param("tensors", "const aclTensorList*", "input", FLOATS),
            tensor("out", "output"))
    k = build_paddle_kernel(a, op("add_n", "void AddNKernel(const Context& dev_ctx, "
                                  "const std::vector<const DenseTensor*>& x, DenseTensor* out)"),
                            framework_dtypes=FLOATS + ("float64",))
    assert "float64" not in k["dtype_names"] and k["compute_as"] == []
    assert any("`tensors`, a tensor list (float64" in c for c in k["soc_cut"])
