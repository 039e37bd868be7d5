"""Class 13's flag-sized outputs (docs/opgen.md, "Data-dependent and flag-sized outputs"):
an op tagged `dynamic_output_shape` whose outputs' bounds follow a defaulted `bool` or
`int?` argument (the unique family: `_unique2`'s `inverse` exists only when
`return_inverse`, `unique_consecutive`'s outputs follow `dim`). torch's fake
implementation is probed once per setting of those switches and each output becomes a
choice among bounds. Nothing keys on an API or op name in code; the tests name the
upstream adapters (op-plugin 517f2e7d)."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from codegen.torch_facts import DataDependentOutput as Out, DataDependentSwitch as Switch
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

LONG = ("const", "Long")
EMPTY = Out((("const", 0),), LONG)


def test_unique2_outputs_follow_their_flags():
    """torch's fake `_unique2`: values of at most `self.numel()` whatever the flags,
    `inverse` shaped like `self` when `return_inverse` else `{0}`, `counts` at most the
    numel when `return_counts` else `{0}`; `sorted` changes nothing, so no switch on it.
    `counts` has the values' unbacked size (`resize_as` 0). Before, the probes with
    flipped bools disagreed and no bound was found."""
    assert torch_facts.data_dependent_outputs("aten::_unique2") == (
        Out((("bound",),), ("like", "self")),
        Switch("return_inverse", "bool", Out((("sizes", "self"),), LONG), EMPTY),
        Switch("return_counts", "bool", Out((("bound",),), LONG, 0), EMPTY))


def test_unique_consecutive_outputs_follow_dim_then_flags():
    """`dim` given: values like `self` (the dim bounded), `inverse` and `counts` of
    `self.size(dim)`; unset: the flattened bounds of `_unique2`. The smallest tree asks
    `dim` first (UniqueConsecutiveKernelNpuOpApi.cpp's `has_dim` branches)."""
    assert torch_facts.data_dependent_outputs("aten::unique_consecutive") == (
        Switch("dim", "has_value", Out((("sizes", "self"),), ("like", "self")),
               Out((("bound",),), ("like", "self"))),
        Switch("dim", "has_value", Out((("size_at", "self", "dim"),), LONG),
               Switch("return_inverse", "bool", Out((("sizes", "self"),), LONG), EMPTY)),
        Switch("dim", "has_value", Out((("size_at", "self", "dim"),), LONG),
               Switch("return_counts", "bool", Out((("bound",),), LONG, 0), EMPTY)))


def test_ops_no_switch_changes_keep_plain_bounds():
    """masked_select, nonzero and unique_dim: every setting agrees, so their bounds
    (and renders) are what they were."""
    assert all(isinstance(o, Out) for op in ("aten::masked_select", "aten::nonzero",
                                              "aten::unique_dim")
               for o in torch_facts.data_dependent_outputs(op))


def test_unique_consecutive_allocates_by_dim_and_flags(db):
    """UniqueConsecutiveKernelNpuOpApi.cpp: `y` like `self` with a dim, else
    `self.numel()`; `y_inverse` / `y_counts` int64 by `dim` and the flags;
    `EXEC_NPU_CMD_SYNC` and a resize to `aclGetViewShape`. Before: all three like `self`,
    an asynchronous call, no resize."""
    r = prepare(db, "aclnnUniqueConsecutive", "torch", op="aten::unique_consecutive")
    body = _fn(r.files[ADAPTER.format("UniqueConsecutive")],
               "std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(")
    assert "no meta function is known" not in body
    assert "const int64_t opgen_bound = self.numel();" in body
    assert ("const std::vector<int64_t> opgen_out0_bound = (dim.has_value() ? "
            "self.sizes().vec() : std::vector<int64_t>{opgen_bound});") in body
    assert ("const std::vector<int64_t> opgen_out1_bound = (dim.has_value() ? "
            "std::vector<int64_t>{self.size(dim.value())} : (return_inverse ? "
            "self.sizes().vec() : std::vector<int64_t>{0}));") in body
    assert ("at::Tensor out2 = npu_preparation::apply_tensor_without_format("
            "opgen_out2_bound, self.options().dtype(at::kLong));") in body
    assert ("auto opgen_params = EXEC_NPU_CMD_SYNC(aclnnUniqueConsecutive, self, "
            "return_inverse, return_counts, acl_dim, out0, out1, out2);") in body
    assert "opgen_resize_to_view_shape(opgen_params.Get<4>(), out0);" in body
    # `counts` takes its own reported shape with a dim, the values' without (torch gives
    # both the same unbacked size there)
    assert ("    if (dim.has_value()) {\n"
            "        opgen_resize_to_view_shape(opgen_params.Get<6>(), out2);\n    }\n"
            "    if (!dim.has_value() && return_counts) {\n"
            "        opgen_resize_to_view_shape(opgen_params.Get<4>(), out2);\n    }") in body


def test_unique2_inverse_takes_the_apis_own_shape(db):
    """aclnnUnique2 checks `inverseOut` against `self` when `returnInverse ||
    returnCounts` (ops-nn aclnn_unique2.cpp CheckShapeValid), which torch's `{0}` for
    `return_counts` alone would fail: a reviewed `api_output_shapes` entry (class 19)
    gives Unique2KernelNpuOpApi.cpp's allocation; the rest is the probe's."""
    r = prepare(db, "aclnnUnique2", "torch", op="aten::_unique2")
    body = _fn(r.files[ADAPTER.format("Unique2")],
               "std::tuple<at::Tensor, at::Tensor, at::Tensor> _unique2(")
    assert ("const std::vector<int64_t> opgen_out1_bound = (return_inverse || return_counts)"
            " ? self.sizes().vec() : std::vector<int64_t>{0};") in body
    assert ("const std::vector<int64_t> opgen_out2_bound = (return_counts ? "
            "std::vector<int64_t>{opgen_bound} : std::vector<int64_t>{0});") in body
    assert "EXEC_NPU_CMD_SYNC(aclnnUnique2, self, sorted, return_inverse, return_counts" in body
    # `counts` takes the values' reported shape when asked for, as upstream's
    # `if (return_counts) y_counts.resize_(output_size)` (the API may keep countsOut's)
    assert ("    if (return_counts) {\n"
            "        opgen_resize_to_view_shape(opgen_params.Get<4>(), out2);\n    }") in body
    assert "Get<6>" not in body and "Get<5>" not in body
    # the result takes torch's shape back: `{0}` unless `return_inverse` (upstream's
    # `if (!return_inverse) y_inverse = ...({0}, ...)` after the call)
    assert ("    out1.resize_((return_inverse ? self.sizes().vec() : std::vector<int64_t>{0}));"
            "  // torch's shape for the result\n"
            "    return std::make_tuple(out0, out1, out2);") in body
    out = _fn(r.files[ADAPTER.format("Unique2")], "_unique2_out(")
    assert ("    out1.resize_((return_inverse ? self.sizes().vec() : std::vector<int64_t>{0}));"
            "  // torch's shape for the result\n"
            "    return std::forward_as_tuple(out0, out1, out2);") in out


def test_unique_sorts_as_upstream(db):
    """_UniqueKernelNpuOpApi.cpp passes `sorted = true` (torch's CPU `_unique` always
    sorts): a reviewed rule scoped to aclnnUnique; `inverse` follows `return_inverse`."""
    r = prepare(db, "aclnnUnique", "torch", op="aten::_unique")
    body = _fn(r.files[ADAPTER.format("Unique")],
               "std::tuple<at::Tensor, at::Tensor> _unique(")
    assert "bool acl_sorted = true;" in body
    assert "EXEC_NPU_CMD_SYNC(aclnnUnique, self, acl_sorted, return_inverse, out0, out1)" in body
    assert ("const std::vector<int64_t> opgen_out1_bound = (return_inverse ? "
            "self.sizes().vec() : std::vector<int64_t>{0});") in body
