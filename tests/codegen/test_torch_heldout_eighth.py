"""Mechanisms found by scoring the eighth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 8 --before 70`) against op-plugin 517f2e7d
(docs/opgen.md, "Eighth sample"): the in-place member of a tensor-list op with no
Inplace API runs the out-of-place API with out = self, and a CompositeExplicitAutograd
kernel that runs on Meta tensors (probed, not only `core` ops) sizes the outputs,
including a returned `Tensor[]` and the out list of its `.out` member. None keys on an
API name in code; each test names the upstream adapter."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_inplace_list_member_writes_self_through_the_out_of_place_api(db):
    """op-plugin ForeachLog2KernelNpuOpApi.cpp `_foreach_log2_` passes `self` as
    aclnnForeachLog2's `out` (there is no aclnnInplaceForeachLog2). Before, aclnn's
    `out` was a nullptr placeholder with a TODO."""
    r = prepare(db, "aclnnForeachLog2", "torch", op="aten::_foreach_log2")
    body = _fn(r.files[ADAPTER.format("ForeachLog2")], "void _foreach_log2_(")
    assert "at::TensorList out = self;" in body
    assert "nullptr" not in body
    # in calls of at most 48 tensors since the ninth sample (opdb.call_limits)
    assert "auto opgen_out_part = out.slice(opgen_i, opgen_len);" in body
    assert "EXEC_NPU_CMD(aclnnForeachLog2, opgen_x_part, opgen_out_part);" in body


def test_composite_explicit_kernel_that_runs_on_meta_counts_as_the_meta_function():
    """`_foreach_log2` has only a CompositeExplicitAutograd kernel (a loop over
    at::log2) and no `core` tag; probed on Meta tensors it runs, so it is the meta
    function. `_pack_padded_sequence` reads its lengths and `masked_select` has a
    data-dependent shape: neither counts."""
    assert torch_facts.meta_kernel("aten::_foreach_log2") is True
    assert torch_facts.meta_kernel("aten::_foreach_add.ScalarList") is True
    assert torch_facts.meta_kernel("aten::_pack_padded_sequence") is False
    assert torch_facts.meta_kernel("aten::masked_select") is False


def test_returned_tensor_list_is_allocated_from_the_meta_function(db):
    """op-plugin ForeachSqrtKernelNpuOpApi.cpp allocates one output per input tensor
    before calling aclnnForeachSqrt. Before, the functional returned an empty
    std::vector it never allocated (aclnn got an empty list), with a TODO."""
    r = prepare(db, "aclnnForeachSqrt", "torch", op="aten::_foreach_sqrt")
    text = r.files[ADAPTER.format("ForeachSqrt")]
    body = _fn(text, "std::vector<at::Tensor> _foreach_sqrt(")
    assert "auto meta = at::_foreach_sqrt(opgen_meta(self));" in body
    assert ("out.push_back(npu_preparation::apply_tensor_without_format(meta[i].sizes(), "
            "self[i].options().dtype(meta[i].scalar_type())));") in body
    assert "at::TensorList acl_out(out);" in body
    assert "auto opgen_out_part = acl_out.slice(opgen_i, opgen_len);" in body
    assert body.index("out.push_back(") < body.index(
        "EXEC_NPU_CMD(aclnnForeachSqrt, opgen_x_part, opgen_out_part);")
    out_body = _fn(text, "void _foreach_sqrt_out(")
    assert "TORCH_CHECK(out.size() == meta.size()" in out_body
    assert ("npu_preparation::check_tensor({self[i]}, out_i, out_i.scalar_type(), "
            "meta[i].sizes());") in out_body
    assert not r.todos


def test_two_list_op_takes_element_options_and_checks_against_both_inputs(db):
    """A binary list op (`_foreach_mul.List`, op-plugin ForeachMulKernelNpuOpApi.cpp):
    the same list allocation, its `.out` checks each out tensor against both inputs'
    elements."""
    r = prepare(db, "aclnnForeachMulList", "torch", op="aten::_foreach_mul.List")
    text = r.files[ADAPTER.format("ForeachMul")]
    body = _fn(text, "std::vector<at::Tensor> _foreach_mul(")
    assert "auto meta = at::_foreach_mul(opgen_meta(self), opgen_meta(other));" in body
    assert "self[i].options().dtype(meta[i].scalar_type())" in body
    out_body = _fn(text, "void _foreach_mul_out(")
    assert "check_tensor({self[i], other[i]}, out_i," in out_body


def test_list_out_of_a_tensor_op_is_checked_against_the_tensor_input(db):
    """`split_with_sizes_copy.out` (a Tensor in, a Tensor[] out): before, one
    check_tensor on the whole TensorList (which takes one at::Tensor&). Now one check
    per out tensor against `self` and the meta function's sizes."""
    r = prepare(db, "aclnnSplitWithSize", "torch", op="aten::split_with_sizes_copy.out")
    text = r.files[ADAPTER.format("SplitWithSizesCopy")]
    out_body = _fn(text, "void split_with_sizes_copy_out(")
    assert "npu_preparation::check_tensor({self}, out_i, out_i.scalar_type(), meta[i].sizes());" \
        in out_body


def test_api_that_updates_its_lists_in_place_gets_no_out_alias(db):
    """aclnnForeachZeroInplace writes its `x` list itself (no output parameter): the
    in-place member passes the list alone, as op-plugin ForeachZeroInplaceKernelNpuOpApi.cpp,
    and no `out = self` alias is made up."""
    r = prepare(db, "aclnnForeachZeroInplace", "torch", op="aten::_foreach_zero_")
    body = _fn(r.files[ADAPTER.format("ForeachZero")], "void _foreach_zero_(")
    assert "at::TensorList out = self;" not in body
    assert "EXEC_NPU_CMD(aclnnForeachZeroInplace, opgen_x_part);" in body
