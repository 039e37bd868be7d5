"""Mechanisms found by scoring the sixth held-out torch sample against op-plugin 517f2e7d
(docs/opgen.md, "Sixth sample"): a CompositeExplicitAutograd kernel of a core-tagged op is
its meta function (constant_pad_nd), the matmul family's cube_math_type follows the
HF32 switch through op-plugin's helper (a reviewed rule corrected), and an in-place
member whose framework value feeds nothing runs the op's meta function for torch's
checks (cumprod_'s dtype). Each test names the upstream adapter; none keys on an API
name in code."""
from __future__ import annotations

import pytest

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_core_composite_explicit_kernel_is_the_meta_function(db):
    """op-plugin ConstantPadNdKernelNpuOpApi.cpp computes the padded shape by hand; torch's
    CompositeExplicitAutograd kernel of constant_pad_nd (tag `core`) gives it on Meta
    tensors. Before, the output was allocated like `self` with a TODO. An op outside the
    core set (`_pack_padded_sequence` reads its lengths) does not count."""
    assert torch_facts.meta_kernel("aten::constant_pad_nd") is True
    assert torch_facts.meta_kernel("aten::_pack_padded_sequence") is False
    # core, but method-only: the adapter's `at::expand(...)` would not compile
    assert torch_facts.meta_kernel("aten::expand") is False
    r = prepare(db, "aclnnConstantPadNd", "torch", op="aten::constant_pad_nd")
    body = _fn(r.files[ADAPTER.format("ConstantPadNd")], "at::Tensor constant_pad_nd(")
    assert "auto meta = at::constant_pad_nd(opgen_meta(self), pad, value);" in body
    assert "apply_tensor_without_format(meta.sizes(), self.options().dtype(meta.scalar_type()))" \
        in body
    assert not r.todos


def test_matmul_family_cube_math_type_uses_the_passthrough_helper(db):
    """op-plugin 517f2e7d MmKernelNpuOpApi.cpp, BmmKernelNpuOpApi.cpp,
    AddmmKernelNpuOpApi.cpp, BaddbmmKernelNpuOpApi.cpp: `op_plugin::utils::
    get_cube_math_type_with_passthrough()` (the HF32 switch unless the passthrough is set).
    The binding stands in for the helper only where it is called."""
    for api, op, stem in (("aclnnBaddbmm", "aten::baddbmm", "Baddbmm"),
                          ("aclnnMm", "aten::mm", "Mm"),
                          ("aclnnAddmm", "aten::addmm", "Addmm")):
        r = prepare(db, api, "torch", op=op)
        text = r.files[ADAPTER.format(stem)]
        assert "int8_t acl_cube_math_type = op_plugin::utils::get_cube_math_type_with_passthrough();" \
            in text, api
        assert "npu_preparation::get_cube_math_type();" not in text, api
        assert "get_cube_math_type_with_passthrough() { return 0; }" in \
            r.files["standalone/src/binding.cpp"], api
        # the helper is hidden in op-plugin's library: a standalone adapter defines it
        # (opgen aclnn aclnnBaddbmm ... --build links; without it ld rejects the hidden
        # undefined symbol)
        i = text.index("#ifdef OPGEN_STANDALONE\n// op-plugin defines this helper")
        assert "int8_t get_cube_math_type_with_passthrough()" in text[i:text.index("#endif", i)]
    gelu = prepare(db, "aclnnGelu", "torch", op="aten::gelu").files
    assert "get_cube_math_type_with_passthrough" not in gelu["standalone/src/binding.cpp"]
    assert not any("get_cube_math_type_with_passthrough" in v for k, v in gelu.items()
                   if k.startswith("in-tree/") and k.endswith(".cpp"))


def test_inplace_member_runs_the_meta_checks_of_a_value_the_api_lacks(db):
    """aclnnInplaceCumprod takes no dtype; torch's cumprod_ meta function raises for a
    dtype other than self's. Before, `dtype` was dropped with a TODO
    and the call ran in self's dtype. (Upstream registers no cumprod_ at all.)"""
    r = prepare(db, "aclnnCumprod", "torch", op="aten::cumprod")
    text = r.files[ADAPTER.format("Cumprod")]
    body = _fn(text, "at::Tensor& cumprod_(")
    assert "at::Tensor meta_self = opgen_meta(self);" in body
    assert "at::_ops::cumprod_::call(meta_self, dim, dtype);" in body
    assert "TODO" not in body
    assert "EXEC_NPU_CMD(aclnnInplaceCumprod, self, acl_dim);" in body
    # the functional and .out members pass dtype to aclnnCumprod and need no such check
    assert "at::_ops::" not in _fn(text, "at::Tensor cumprod(")
    # in-place members whose values all reach the API are unchanged
    add = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor").files[ADAPTER.format("Add")]
    assert "at::_ops::" not in add


def test_meta_check_raises_as_torch_does():
    """What the generated statement runs, on the CPU: the in-place meta function on a Meta
    twin raises for a mismatching dtype and passes for a matching or unset one."""
    import torch
    meta = torch.empty(3, device="meta")
    torch.ops.aten.cumprod_(meta, 0, dtype=torch.float32)
    torch.ops.aten.cumprod_(meta, 0)
    # on Meta tensors the structured meta check says it ("dtype argument and out dtype
    # must match"); the CPU kernel says "Bad in-place call"
    with pytest.raises(RuntimeError, match="must match"):
        torch.ops.aten.cumprod_(meta, 0, dtype=torch.float64)
