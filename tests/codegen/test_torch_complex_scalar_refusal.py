"""torch's refusal of a complex Scalar for a non-complex tensor, made by the op's CPU
kernel and not by its meta function, probed and generated before the call (the fourth
audit's IndexFill row, docs/opgen.md "Fourth audit: the pool at head"). Nothing keys on
an API or op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_the_probe_finds_a_cpu_only_refusal_of_a_complex_scalar():
    """index_fill refuses `value=2+1j` for a float `self` on the CPU, takes it for a
    complex `self`, and its meta function takes it: a fact. add.Scalar promotes to
    complex (no refusal), fill.Scalar refuses only a value with an imaginary part; a mutable-self overload is not probed (its functional is)."""
    from codegen import torch_facts
    got = torch_facts.complex_scalar_refusal("aten::index_fill.int_Scalar")
    assert got is not None and (got.scalar, got.tensor) == ("value", "self")
    assert "Converting complex Scalar to non-complex type is not supported" in got.message
    assert torch_facts.complex_scalar_refusal("aten::add.Scalar") is None
    # fill refuses 2+1j (an overflow of the value) but takes 2+0j: not a refusal of the type
    assert torch_facts.complex_scalar_refusal("aten::fill.Scalar") is None
    assert torch_facts.complex_scalar_refusal("aten::index_fill_.int_Scalar") is None
    assert torch_facts.complex_scalar_refusal("aten::cumsum") is None  # no Scalar


def test_every_member_refuses_a_complex_value_before_the_call(db):
    """op-plugin IndexFillKernelNpuOpApi.cpp TORCH_CHECKs `self.is_complex() ||
    !value.isComplex()` in index_fill and index_fill_; aclnnIndexFill converts the value
    to `self`'s dtype (ops-nn aclnn_index_fill.cpp:208) and torch's meta function does not
    check it, so before this ours ran a call torch refuses."""
    r = prepare(db, "aclnnIndexFill", "torch", op="aten::index_fill.int_Scalar")
    text = r.files[ADAPTER.format("IndexFill")]
    check = "TORCH_CHECK(self.is_complex() || !value.isComplex(), "
    for sig in ("index_fill(const at::Tensor& self", "index_fill_out(const at::Tensor& self",
                "index_fill_(at::Tensor& self"):
        body = _fn(text, sig)
        assert check in body, sig
        assert body.index(check) < body.index("EXEC_NPU_CMD")
