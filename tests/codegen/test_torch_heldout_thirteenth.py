"""Mechanism found by scoring the thirteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 13 --before 130`) against op-plugin 517f2e7d
(docs/opgen.md, "Thirteenth sample"): a data-dependent output bounded by a tensor
input's size at an `int` argument (the unique family of class 13: `unique_dim`), probed
from torch's fake implementation. Nothing keys on an API or op name in code; the tests
name the upstream adapter."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from codegen.torch_facts import DataDependentOutput
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_unique_dim_is_bounded_by_the_size_at_dim():
    """torch's fake unique_dim gives values shaped like `self` with the `dim` axis
    data-dependent (at most `self.size(dim)`), `inverse` of `self.size(dim)` and
    `counts` at most that, both int64. Before, no bound was found (a non-tensor argument
    sizes the outputs), and the adapter allocated all three like `self`."""
    assert torch_facts.data_dependent_outputs("aten::unique_dim") == (
        DataDependentOutput((("sizes", "self"),), ("like", "self")),
        DataDependentOutput((("size_at", "self", "dim"),), ("const", "Long")),
        DataDependentOutput((("size_at", "self", "dim"),), ("const", "Long")))


def test_sizes_chosen_by_a_flag_are_switches():
    """`unique_consecutive` and `_unique2` size `inverse`/`counts` by `return_inverse` /
    `return_counts` (empty when false): until branch `ws/h9m1` they got no bound; now each
    such output is a choice by the flag (test_torch_flag_sized_outputs.py)."""
    for op in ("aten::unique_consecutive", "aten::_unique2"):
        assert any(isinstance(o, torch_facts.DataDependentSwitch)
                   for o in torch_facts.data_dependent_outputs(op)), op


def test_unique_dim_allocates_like_upstream_and_resizes_after_a_synchronous_call(db):
    """UniqueDimKernelNpuOpApi.cpp: `y` like `self`, `y_inverse`/`y_counts` int64 of
    `self.size(dim)`, `EXEC_NPU_CMD_SYNC`, then `resize_` to `aclGetViewShape`."""
    r = prepare(db, "aclnnUniqueDim", "torch", op="aten::unique_dim")
    text = r.files[ADAPTER.format("UniqueDim")]
    body = _fn(text, "std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim(")
    assert "no meta function is known" not in body
    assert "const int64_t opgen_bound" not in body  # no numel bound where none is used
    assert "const std::vector<int64_t> opgen_out0_bound = self.sizes().vec();" in body
    assert "const std::vector<int64_t> opgen_out1_bound = {self.size(dim)};" in body
    assert ("at::Tensor out2 = npu_preparation::apply_tensor_without_format("
            "opgen_out2_bound, self.options().dtype(at::kLong));") in body
    assert ("auto opgen_params = EXEC_NPU_CMD_SYNC(aclnnUniqueDim, self, sorted, "
            "return_inverse, dim, out0, out1, out2);") in body
    for k, o in ((4, "out0"), (6, "out2")):
        assert f"opgen_resize_to_view_shape(opgen_params.Get<{k}>(), {o});" in body
    out = _fn(text, "unique_dim_out(")
    assert ("npu_preparation::check_tensor({self}, out1, out1.scalar_type(), "
            "opgen_out1_bound);") in out
