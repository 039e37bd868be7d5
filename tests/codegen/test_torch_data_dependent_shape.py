"""Class 13 of "Why torch first passes fail" (docs/opgen.md): an op whose output size
depends on its input's values (torch's tag `dynamic_output_shape`). op-plugin's six
such adapters (MaskedSelectKernelNpuOpApi.cpp, NonzeroKernelNpuOpApi.cpp, the Unique
ones, 517f2e7d) share one pattern: allocate an upper bound, run with
`EXEC_NPU_CMD_SYNC`, read the output's real shape with `aclGetViewShape` and
`resize_` to it. The bound and the other dims come from torch's own fake
implementation (probed, `torch_facts.data_dependent_outputs`), the trigger from the
tag and a Meta kernel that raises; nothing keys on an API or op name."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from codegen.torch_facts import DataDependentOutput
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_bounds_from_torchs_fake_implementation():
    """masked_select: one dim, at most the broadcast numel of its tensors, `self`'s
    dtype; nonzero: that many rows by `self.dim()` columns, int64. Ops that torch does
    not bound (`bincount`) get no bound; an op without the tag gets None. (`unique_dim`,
    bounded by `self.size(dim)`, has a bound since branch `ws/h9t11`:
    test_torch_heldout_thirteenth.py; outputs that follow a flag, `_unique2`'s
    `return_inverse`, since `ws/h9m1`: test_torch_flag_sized_outputs.py.)"""
    assert torch_facts.data_dependent_outputs("aten::masked_select") == (
        DataDependentOutput((("bound",),), ("like", "self")),)
    assert torch_facts.data_dependent_outputs("aten::nonzero") == (
        DataDependentOutput((("bound",), ("dim", "self")), ("const", "Long")),)
    for op in ("aten::bincount",
               "aten::repeat_interleave.Tensor", "aten::add.Tensor", "aten::no_such_op"):
        assert torch_facts.data_dependent_outputs(op) is None, op


def test_a_meta_kernel_that_raises_is_no_meta_kernel():
    """torch registers a Meta kernel for `nonzero` that raises NotImplementedError ("a
    correct data-independent implementation does not exist"): the adapter used to call
    it for its output sizes. `index.Tensor` (also tagged) runs on Meta with integer
    indices and keeps its Meta kernel."""
    assert torch_facts.meta_kernel("aten::nonzero") is False
    assert torch_facts.meta_kernel("aten::masked_select") is False
    assert torch_facts.meta_kernel("aten::index.Tensor") is True
    assert torch_facts.meta_kernel("aten::add.Tensor") is True


def test_masked_select_allocates_the_bound_and_resizes_after_a_synchronous_call(db):
    """MaskedSelectKernelNpuOpApi.cpp: `masked_select_npu_output_size` is the numel of
    self and mask broadcast; `EXEC_NPU_CMD_SYNC`, `aclGetViewShape` on argument 2, then
    `out.resize_`. Before: `out` shaped like `self`, asynchronous, never resized."""
    r = prepare(db, "aclnnMaskedSelect", "torch", op="aten::masked_select")
    text = r.files[ADAPTER.format("MaskedSelect")]
    assert not r.todos
    assert 'GetOpApiFuncAddr("aclGetViewShape")' in text
    body = _fn(text, "at::Tensor masked_select(")
    assert ("const int64_t opgen_bound = c10::multiply_integers(at::infer_size("
            "self.sizes(), mask.sizes()));") in body
    assert "const std::vector<int64_t> opgen_out_bound = {opgen_bound};" in body
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format(opgen_out_bound, "
            "self.options().dtype(self.scalar_type()));") in body
    assert ("    auto opgen_params = EXEC_NPU_CMD_SYNC(aclnnMaskedSelect, self, mask, out);\n"
            "    opgen_resize_to_view_shape(opgen_params.Get<2>(), out);\n"
            "    return out;") in body
    assert "EXEC_NPU_CMD(" not in body
    out = _fn(text, "at::Tensor& masked_select_out(")
    assert ("npu_preparation::check_tensor({self, mask}, out, out.scalar_type(), "
            "opgen_out_bound);") in out
    # on a contiguous copy of a strided `out`, copied back (test_torch_audit9_rows.py)
    assert "opgen_resize_to_view_shape(opgen_params.Get<2>(), opgen_out_flat);" in out
    # the standalone binding cannot read the view shape: said, not hidden
    binding = r.files.get("standalone/src/binding.cpp")
    if binding is not None:
        assert "does not read the shape aclnn reports" in binding


def test_nonzero_rows_by_rank_in_int64(db):
    """NonzeroKernelNpuOpApi.cpp: `nonzero_npu_max_output_size(self)` ({numel, dim}),
    int64, EXEC_NPU_CMD_SYNC and a resize to `aclGetViewShape` of argument 1. Before:
    sized by torch's Meta kernel for nonzero, which raises."""
    r = prepare(db, "aclnnNonzero", "torch", op="aten::nonzero")
    text = r.files[ADAPTER.format("Nonzero")]
    body = _fn(text, "at::Tensor nonzero(")
    assert "opgen_meta(" not in text
    assert "const int64_t opgen_bound = self.numel();" in body
    assert "const std::vector<int64_t> opgen_out_bound = {opgen_bound, self.dim()};" in body
    assert "self.options().dtype(at::kLong)" in body
    assert "auto opgen_params = EXEC_NPU_CMD_SYNC(aclnnNonzero, self, out);" in body
    assert "opgen_resize_to_view_shape(opgen_params.Get<1>(), out);" in body
    assert not r.todos


def test_other_ops_keep_the_asynchronous_call(db):
    """The helper and the synchronous call appear only where an output is data-dependent."""
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor")
    text = r.files[ADAPTER.format("Add")]
    assert "aclGetViewShape" not in text and "EXEC_NPU_CMD_SYNC" not in text
