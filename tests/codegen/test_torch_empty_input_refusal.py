"""torch's refusal of an empty input, made by the op's CPU kernel and not by its meta
function (which sizes a non-empty output from it), probed and generated before the call
(the seventh audit's Min row, docs/opgen.md "Seventh audit: the pool at head, torch rows
13-24"). Nothing keys on an API or op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_the_probe_finds_an_empty_input_refusal_the_meta_function_misses():
    """min and max (no dim) refuse an empty input on the CPU while their meta functions
    give a 0-d output: a fact. amax/argmax refuse it in the meta function too (the meta
    call already checks), fft_fft's meta output is empty (nothing left unwritten), sum
    takes it, min.dim has a required `dim`: none of those fits."""
    from codegen import torch_facts
    got = torch_facts.empty_input_refusal("aten::min")
    assert got is not None and got.tensor == "self"
    assert got.message.startswith("min(): Expected reduction dim to be specified for "
                                  "input.numel() == 0.")
    assert torch_facts.empty_input_refusal("aten::max") is not None
    for op in ("aten::amax", "aten::argmax", "aten::fft_fft", "aten::sum", "aten::min.dim",
               "aten::sgn"):
        assert torch_facts.empty_input_refusal(op) is None, op


def test_every_member_refuses_an_empty_input_before_the_call(db):
    """op-plugin MinKernelNpuOpApi.cpp TORCH_CHECKs `self.numel() > 0` in min(self);
    aclnnMin returns early on an empty `self` (ops-math aclnn_min.cpp:117-121) and torch's
    meta function gives a 0-d output, so before this ours returned that output
    uninitialized where torch raises."""
    r = prepare(db, "aclnnMin", "torch", op="aten::min")
    text = r.files[ADAPTER.format("Min")]
    check = 'TORCH_CHECK(self.numel() > 0, "min(): Expected reduction dim'
    for sig in ("at::Tensor min(const at::Tensor& self)",
                "min_out(const at::Tensor& self, at::Tensor& out)"):
        body = _fn(text, sig)
        assert check in body, sig
        assert body.index(check) < body.index("EXEC_NPU_CMD")
        assert body.index(check) < body.index("opgen_meta(self)")
