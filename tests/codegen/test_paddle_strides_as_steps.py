"""A kernel's own `strides` as aclnnSliceV2's `steps` (docs/opgen.md "Batch L", class 1 of
"Why paddle first passes fail"): a reviewed rule's need `steps~` finds the framework input
by name, alias, or the name PaConvert's torch -> paddle renamings give it up to an
inflection (aclnn `steps` is torch's `step`, renamed `strides` for torch.slice_scatter).
Negative steps are refused (aclnnSliceV2 clamps ends to at least starts). Before, batch
K's strided_slice and batch L's strided_slice_raw got ones per axis (batch J's slice rule)
with `strides` unused: every stride other than 1 sliced wrongly (score 1)."""
from __future__ import annotations

from codegen.argmap import FwParam, _find_first
from codegen.paddle_target import build_paddle_kernel
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import todos as _todos
from tests.codegen.test_paddle_slice_attrs import SLICE, SLICE_V2

STRIDED = _op("strided_slice_raw",
              "void StridedSliceRawKernel(const Context& dev_ctx, const DenseTensor& x, "
              "const std::vector<int>& axes, const IntArray& starts, const IntArray& ends, "
              "const IntArray& strides, const std::vector<int>& infer_flags, "
              "const std::vector<int>& decrease_axis, DenseTensor* out)")


def test_strides_feed_steps_and_negative_ones_are_refused():
    k = build_paddle_kernel(SLICE_V2, STRIDED, framework_dtypes=("float32",))
    steps = _args(k)["steps"]
    assert steps.expr == "acl_steps"
    assert steps.prelude[0] == (
        "std::vector<int64_t> acl_steps = phi::IntArray(strides).GetData();  // the kernel's "
        "own steps (PaConvert renames torch's `step` to Paddle's `strides`)")
    assert steps.prelude[1] == "for (int64_t acl_steps_s : acl_steps) {"
    assert steps.prelude[2].startswith("  PADDLE_ENFORCE_GT(acl_steps_s, 0, phi::errors::Unimplemented(")
    assert not any("`strides`" in t and "not passed" in t for t in _todos(k))


def test_without_strides_steps_stay_ones():
    k = build_paddle_kernel(SLICE_V2, SLICE, framework_dtypes=("float32",))
    assert _args(k)["steps"].prelude[0].startswith("std::vector<int64_t> acl_steps(axes.size(), 1);")


def test_renamed_need_only_with_the_marker_and_never_an_output():
    fw = [FwParam("strides", "int_array", "const phi::IntArray&"),
          FwParam("out", "tensor", "phi::DenseTensor*", is_output=True)]
    assert _find_first("steps~", fw).name == "strides"
    assert _find_first("steps", fw) is None      # without `~`: name and alias only
    assert _find_first("step~", fw).name == "strides"   # the torch name itself
    as_output = [FwParam("strides", "int_array", "phi::IntArray*", is_output=True)]
    assert _find_first("steps~", as_output) is None
