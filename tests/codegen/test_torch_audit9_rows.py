"""Defects the ninth audit's torch rows 1-12 found (docs/opgen.md, "Ninth audit: the pool at
head, torch rows 1-12"), each fixed by a mechanism.

- Integral lists: op-plugin's ForeachAddcmulTensorKernelNpuOpApi.cpp sends a list with an
  integral tensor to torch's kernel (`has_integral_tensor(input, true)`) although torch does
  not promote `_foreach_addcmul`'s integer inputs, because the API's `scalars` must have the
  list's dtype. opdb.call_limits reads that guard from the adapter (`integral_slow`).
- `*_like` memory format: the default (preserve) keeps the input's strides.
- A caller's strided `out` of a data-dependent output runs on a contiguous copy."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, shipped_db_fixture

db = shipped_db_fixture()

_ADAPTER_SRC = """
void _split(at::TensorList a, at::TensorList r, bool is_inplace) {
  size_t max_tensor_count = is_inplace ? 16 : 12;
  EXEC_NPU_CMD(aclnnForeachX, a, r);
}
std::vector<at::Tensor> _foreach_x(at::TensorList a) {
  if (!at::native::can_use_fast_route(a)%s) {
    return at::native::foreach_tensor_x_slow(a);
  }
}
"""


def test_the_extract_records_an_integral_guard_only_where_the_adapter_has_one():
    with_guard = rows_of_file(_ADAPTER_SRC % " || at::native::has_integral_tensor(a, true)",
                              "op_plugin/ops/opapi/ForeachXKernelNpuOpApi.cpp", {})
    without = rows_of_file(_ADAPTER_SRC % "", "op_plugin/ops/opapi/ForeachXKernelNpuOpApi.cpp", {})
    assert [r.get("integral_slow") for r in with_guard] == [True]
    assert [r.get("integral_slow") for r in without] == [None]


def test_shipped_limits_carry_upstreams_integral_guard():
    assert tensors_per_call("aclnnForeachAddcmulScalarList").integral_slow
    # ForeachAddScalarList's adapter has no such guard (int lists run on the API upstream)
    assert not tensors_per_call("aclnnForeachAddScalarList").integral_slow


def test_foreach_addcmul_tensor_sends_integral_lists_to_torchs_kernel(db):
    r = prepare(db, "aclnnForeachAddcmulScalarList", "torch", op="aten::_foreach_addcmul.Tensor",
                layout="in-tree")
    text = r.files[ADAPTER.format("ForeachAddcmul")]
    for fn in ("void _foreach_addcmul_out(", "std::vector<at::Tensor> _foreach_addcmul(",
               "void _foreach_addcmul_("):
        body = text.split(fn, 1)[1].split("\n}\n", 1)[0]
        guard = next(line for line in body.splitlines() if "can_use_fast_route" in line)
        assert "|| at::native::has_integral_tensor(self, true)) {" in guard


def test_a_like_ops_default_memory_format_keeps_the_inputs_strides(db):
    """`ones_like(self)` keeps `self`'s strides (preserve_format, torch's default for `*_like`;
    op-plugin OnesLikeKernelNpuOpApi.cpp's `empty_like(...)` for an unset device): the output
    is allocated with the meta function's strides unless another format is asked for."""
    r = prepare(db, "aclnnInplaceOne", "torch", op="aten::ones_like", layout="in-tree")
    text = r.files[ADAPTER.format("OnesLike")]
    assert ("at::Tensor out = memory_format.value_or(at::MemoryFormat::Preserve) == "
            "at::MemoryFormat::Preserve ? at::empty_strided(meta.sizes(), meta.strides(), ") in text
    assert ".merge_memory_format(memory_format));" in text


def test_the_meta_function_gives_preserved_strides():
    import torch
    m = torch.empty_strided((2, 3, 4, 5), (60, 1, 15, 3), device="meta")
    assert torch.ones_like(m).stride() == (60, 1, 15, 3)
    assert torch.ones_like(m, memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)


def test_a_given_strided_out_of_a_data_dependent_output_runs_on_a_contiguous_copy(db):
    """aclnnMaskedSelect writes its output flat (ops-math aclnn_masked_select.cpp, no
    ViewCopy); a strided `out` whose size the resize keeps would hold the values in the
    wrong places. op-plugin MaskedSelectKernelNpuOpApi.cpp runs on `result.contiguous()` and
    copies back; so does `.out` here. The functional member allocates contiguously: as before."""
    r = prepare(db, "aclnnMaskedSelect", "torch", op="aten::masked_select", layout="in-tree")
    text = r.files[ADAPTER.format("MaskedSelect")]
    out_fn = text.split("at::Tensor& masked_select_out(", 1)[1].split("\n}\n", 1)[0]
    assert "at::Tensor opgen_out_flat = out.is_contiguous() ? out : out.contiguous();" in out_fn
    assert "EXEC_NPU_CMD_SYNC(aclnnMaskedSelect, self, mask, opgen_out_flat);" in out_fn
    assert "opgen_resize_to_view_shape(opgen_params.Get<2>(), opgen_out_flat);" in out_fn
    assert ("    if (!opgen_out_flat.is_same(out)) {\n        out.resize_(opgen_out_flat.sizes());\n"
            "        out.copy_(opgen_out_flat);\n    }") in out_fn
    fn = text.split("at::Tensor masked_select(", 1)[1].split("\n}\n", 1)[0]
    assert "opgen_out_flat" not in fn
    assert "EXEC_NPU_CMD_SYNC(aclnnMaskedSelect, self, mask, out);" in fn
