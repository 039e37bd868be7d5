"""torch's refusal of a zero-size dim other than the op's `dim`, probed on its CPU kernel
and generated where no meta function makes torch's checks (the scoring audit's defect 3,
docs/opgen.md "Zero-size refusals probed on the CPU kernel"). Nothing keys on an API or
op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_the_cpu_kernel_probe_finds_a_refusal_relative_to_the_int_argument():
    """unique_dim refuses a zero-size dim other than `dim` and takes one at `dim`;
    max.dim refuses the opposite (a zero-size reduced dim), cumsum refuses neither:
    only the first fits."""
    from codegen import torch_facts
    assert torch_facts.zero_size_refusal("aten::unique_dim") == ("self", "dim")
    assert torch_facts.zero_size_refusal("aten::max.dim") is None
    assert torch_facts.zero_size_refusal("aten::cumsum") is None
    assert torch_facts.zero_size_refusal("aten::nonzero") is None  # no `int` argument


def test_a_data_dependent_adapter_refuses_what_torch_refuses_before_the_call(db):
    """op-plugin UniqueDimKernelNpuOpApi.cpp:33-50 TORCH_CHECKs that no dim other than
    `dim` has size 0; aclnnUniqueDim returns early on an empty input, leaving the
    outputs at their bound unwritten. Before, ours called the API; now the functional
    and the `.out` check every dim but `dim` before allocating (or checking) the outs."""
    r = prepare(db, "aclnnUniqueDim", "torch", op="aten::unique_dim")
    text = r.files[ADAPTER.format("UniqueDim")]
    check = ("TORCH_CHECK(opgen_d == c10::maybe_wrap_dim(dim, self.dim()) || "
             "self.size(opgen_d) != 0,")
    for sig in ("unique_dim(const at::Tensor& self", "unique_dim_out(const at::Tensor& self"):
        body = _fn(text, sig)
        assert "for (int64_t opgen_d = 0; opgen_d < self.dim(); ++opgen_d) {" in body
        assert check in body
        assert body.index(check) < body.index("opgen_out0_bound")
        assert body.index(check) < body.index("EXEC_NPU_CMD")
