"""A tensor whose values torch's meta function needs to size the output, and an
optional int that *is* the output's size along a dim: the sixth audit's
RepeatInterleave row (docs/opgen.md, "Sixth audit: the pool at head, torch").
`repeat_interleave.self_Tensor(self, repeats, dim=None, *, output_size=None)`: torch's
meta raises "cannot repeat_interleave a meta tensor without output_size" when `repeats`
is a Meta tensor, so the adapter's meta call threw for every call without
`output_size`; and `output_size.value_or(0)` went to aclnn's `outputSize`, for which
aclnnRepeatInterleaveWithDim returns without writing (hicann/ops-nn e5c3fa93
index/repeat_interleave/op_api/aclnn_repeat_interleave.cpp:525). op-plugin 517f2e7d
RepeatInterLeaveKernelNpuOpApi.cpp sizes the output from `repeats.sum().item()` and
passes the computed size along `dim`. Both facts are probed from torch
(`torch_facts.meta_value_tensors`, `torch_facts.unset_int_sizes_output`), not keyed
on a name."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_probe_finds_tensors_whose_values_size_the_output():
    assert torch_facts.meta_value_tensors("aten::repeat_interleave.self_Tensor") == {"repeats"}
    # a meta function that runs on Meta tensors, a data-dependent op whose result is
    # computed where its only tensor is (not Meta), an unknown op: none
    for op in ("aten::add.Tensor", "aten::index_put", "aten::repeat_interleave.Tensor",
               "aten::nonzero", "aten::masked_select", "aten::no_such_op"):
        assert torch_facts.meta_value_tensors(op) == frozenset(), op


def test_probe_finds_an_optional_int_that_is_an_output_size():
    for op in ("aten::repeat_interleave.self_Tensor", "aten::repeat_interleave.self_int"):
        assert torch_facts.unset_int_sizes_output(op, "output_size") == ("dim_of", "dim", 0), op
    assert torch_facts.unset_int_sizes_output("aten::repeat_interleave.self_Tensor", "dim") is None
    for op, arg in (("aten::cumsum", "dtype"), ("aten::bincount", "minlength"),
                    ("aten::repeat_interleave.Tensor", "output_size"),
                    ("aten::no_such_op", "output_size")):
        assert torch_facts.unset_int_sizes_output(op, arg) is None, (op, arg)


def test_repeat_interleave_sizes_by_host_repeats_and_passes_the_size(db):
    r = prepare(db, "aclnnRepeatInterleave", "torch", op="aten::repeat_interleave.self_Tensor")
    body = _fn(r.files[ADAPTER.format("RepeatInterleave")], "at::Tensor repeat_interleave(")
    assert ("auto meta = at::repeat_interleave(opgen_meta(self), repeats.cpu(), dim, "
            "output_size);") in body
    size = ("int64_t acl_output_size = static_cast<int64_t>((output_size.has_value() ? "
            "*output_size : out.size(dim.has_value() ? at::maybe_wrap_dim(*dim, out.dim()) "
            ": 0)));")
    assert body.count(size) == 2  # the WithDim branch and the flattened one
    assert "output_size.value_or(0)" not in body
    assert "EXEC_NPU_CMD(aclnnRepeatInterleaveWithDim, self, repeats, acl_dim, acl_output_size, out);" in body
    assert "EXEC_NPU_CMD(aclnnRepeatInterleave, self, repeats, acl_output_size, out);" in body
    assert not any("outputSize" in t for t in r.todos)


def test_a_uint8_index_goes_as_a_bool_mask_where_the_api_takes_bool_only(db):
    """The sixth audit's IndexPutImpl row: torch reads a uint8 index in `Tensor?[]` as a
    mask, as a bool one (deprecated, with a warning); op-plugin 517f2e7d expands both
    kinds into long indices (AdvancedIndex.cpp `npu_expand_tensors`), and the API's index
    list takes bool, int32 and int64 (opdb; hicann/ops-nn e5c3fa93
    index/index_put_v2/op_api/aclnn_index_put_impl.cpp:72), so a uint8 mask was refused.
    Read from the API's dtypes in opdb, for every member that builds the list."""
    for api, op, stem, sigs in (
            ("aclnnIndexPutImpl", "aten::index_put", "IndexPut",
             ("at::Tensor index_put(", "at::Tensor& index_put_out(", "at::Tensor& index_put_(")),
            ("aclnnIndex", "aten::index.Tensor", "Index", ("at::Tensor index(",))):
        r = prepare(db, api, "torch", op=op)
        text = r.files[ADAPTER.format(stem)]
        for sig in sigs:
            body = _fn(text, sig)
            assert ("acl_indices_vec.push_back(opgen_e.scalar_type() == at::kByte ? "
                    "opgen_e.to(at::kBool) : opgen_e);") in body, (api, sig)


def test_an_index_that_needs_a_dtype_not_values_stays_on_meta():
    """gather/scatter/take/embedding refuse a float index on Meta but run with an int64
    one on Meta: their meta functions need the index's dtype, not its values, so the
    meta call keeps them as Meta twins (no host copy, no sync)."""
    for op in ("aten::gather", "aten::scatter_add", "aten::take", "aten::embedding",
               "aten::scatter.value"):
        assert torch_facts.meta_value_tensors(op) == frozenset(), op
