"""A kernel's own `strides` as aclnnSliceV2's `steps` (docs/opgen.md "Batch L", class 1 of
"Why paddle first passes fail"): a reviewed rule's need `steps~` finds the framework input
by name, alias, or the name PaConvert's torch -> paddle renamings give it up to an
inflection (aclnn `steps` is torch's `step`, renamed `strides` for torch.slice_scatter).
A negative stride (Paddle's `x[::-1]`; aclnnSliceV2 refuses steps <= 0) takes upstream's
route: the same elements sliced forward, then the negative-stride axes flipped (sixth audit,
paddle: was refused with `Unimplemented`). Before batch L, batch K's strided_slice and batch
L's strided_slice_raw got ones per axis (batch J's slice rule) with `strides` unused: every
stride other than 1 sliced wrongly (score 1)."""
from __future__ import annotations

import itertools
import subprocess

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


def _steps(k=None):
    k = k or build_paddle_kernel(SLICE_V2, STRIDED, framework_dtypes=("float32",))
    return _args(k)["steps"]


def test_strides_feed_steps_and_negative_ones_take_the_reversed_route():
    k = build_paddle_kernel(SLICE_V2, STRIDED, framework_dtypes=("float32",))
    steps = _steps(k)
    assert steps.expr == "acl_steps"
    assert steps.prelude[0] == (
        "std::vector<int64_t> acl_steps = phi::IntArray(strides).GetData();  // the kernel's "
        "own steps (PaConvert renames torch's `step` to Paddle's `strides`)")
    body = "\n".join(steps.prelude)
    assert "Unimplemented" not in body
    assert steps.prelude[1].startswith("if (std::any_of(acl_steps.begin(), acl_steps.end(),")
    # the forward slice reads the call's own self / starts / ends / axes expressions, then
    # the flip writes `out`
    assert "  phi::DenseTensor acl_steps_in = x;" in steps.prelude
    assert "acl_steps_e = phi::IntArray(ends).GetData()" in body
    assert "phi::IntArray(acl_axes).GetData()" in body
    assert ("EXEC_NPU_CMD(aclnnSliceV2, dev_ctx, acl_steps_in, acl_steps_b, acl_steps_e, "
            "acl_steps_ax, acl_steps_st, acl_steps_fwd);") in body
    assert "EXEC_NPU_CMD(aclnnFlip, dev_ctx, acl_steps_fwd, acl_steps_flip, acl_steps_res);" in body
    assert "phi::DenseTensor acl_steps_res(*out);" in body
    assert steps.prelude[-2:] == ["  return;", "}"]
    # float64 (which aclnnSliceV2 lacks) goes as the same bytes in int64: a slice and a flip
    # move values; no float32 copy rounds them
    assert "      acl_steps_m.dtype = phi::DataType::INT64;" in steps.prelude
    assert "FLOAT32" not in body
    assert not any("`strides`" in t and "not passed" in t for t in _todos(k))


def _axis_loop(prelude: list[str]) -> list[str]:
    """The rendered per-axis normalisation loop (the lines of the `for` over the axes)."""
    start = next(i for i, line in enumerate(prelude) if line.startswith("  for (size_t acl_steps_i"))
    end = next(i for i in range(start, len(prelude)) if prelude[i] == "  }")
    return prelude[start:end + 1]


_HARNESS = r"""
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>
#define PADDLE_ENFORCE_NE(a, b, msg) do { if ((a) == (b)) std::exit(3); } while (0)
namespace phi { namespace errors { inline int InvalidArgument(const char*) { return 0; } } }
int main() {
  long n, b, e, s;
  while (std::scanf("%ld %ld %ld %ld", &n, &b, &e, &s) == 4) {
    std::vector<int64_t> acl_steps_b{b}, acl_steps_e{e}, acl_steps_st{s}, acl_steps_ax{0}, acl_steps_flip;
    std::vector<int64_t> acl_steps_d{n};
    const int64_t acl_steps_rank = 1;
LOOP
    std::printf("%ld %ld %ld %d %ld\n", (long)acl_steps_b[0], (long)acl_steps_e[0],
                (long)acl_steps_st[0], (int)acl_steps_flip.size(), (long)acl_steps_d[0]);
  }
}
"""


def _paddle_slice(n: int, b: int, e: int, s: int) -> list[int]:
    """The indices Paddle 3.x's strided_slice takes on an axis of `n`: phi funcs
    StridedSliceFunctor and StridedSliceOutDims both go through slice_utils.h
    normalize_interval, which is Python's slice rule (an end below -n with a negative stride
    reaches the front: Paddle's own `x[::-1]` passes start INT_MAX, end INT_MIN; an end of -1
    is n - 1, not "to the front" as in Paddle 2.x's functor). Checked against the 3.3.1 CPU
    wheel: strided_slice(arange(5), [0], [2**31-1], [-2**31], [-1]) = [4 3 2 1 0],
    strided_slice(arange(5), [0], [4], [-6], [-1]) = [4 3 2 1 0]."""
    return list(range(n))[b:e:s]


_FAR = (-2**31, -2**31 + 1, 2**31 - 1)   # what Paddle's __getitem__ passes for an omitted bound


def test_reversed_route_takes_paddles_elements(tmp_path):
    """The rendered normalisation, compiled and run: slicing [lo, hi) by |stride| forward
    and flipping gives the indices Paddle takes, for every start/end/stride on small axes
    and the far bounds Paddle's `x[::-1]` passes (before the fix, an end below -n was
    floored at 0 and element 0 was dropped: [4 3 2 1] for x[::-1])."""
    loop = _axis_loop(_steps().prelude)
    src = tmp_path / "route.cc"
    src.write_text(_HARNESS.replace("LOOP", "\n".join(loop)))
    exe = tmp_path / "route"
    subprocess.run(["g++", "-std=c++17", "-o", str(exe), str(src)], check=True)
    bounds = list(range(-8, 9)) + list(_FAR)
    cases = [(n, b, e, s) for n in (1, 2, 5, 6) for b, e in itertools.product(bounds, repeat=2)
             for s in (-4, -3, -2, -1, 1, 2)]
    out = subprocess.run([str(exe)], input="\n".join(" ".join(map(str, c)) for c in cases),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert len(out) >= len(cases)
    for (n, b, e, s), line in zip(cases, out):
        lo, hi, st, flips, d = map(int, line.split())
        taken = list(range(lo, hi, st))[::-1] if flips else list(range(lo, hi, st))
        assert d == len(taken), (n, b, e, s, line)
        assert taken == _paddle_slice(n, b, e, s), (n, b, e, s, line)  # also `out`'s size


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
