"""0-d inputs where torch keeps an element the aclnn API does not compute (docs/opgen.md,
"Eighth audit: the pool at head, torch rows 1-12"): `topk` of a 0-d `self` with k 0 is
`(self, 0)` in torch, while aclnnTopk takes the 0-d input as `[1]` and runs a k = 0 TopK
(ops-nn aclnn_topk.cpp), which fills nothing; op-plugin TopKKernelNpuOpApi.cpp fills the
outputs before the call. A probe (`torch_facts.zero_dim_kept`) finds the `int` arguments
at whose 0 the eager kernel keeps an element on 0-d inputs and none on `[1]` ones; the
adapter runs torch's CPU kernel on that call."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_the_probe_finds_topk_k_only():
    from codegen import torch_facts
    assert torch_facts.zero_dim_kept("aten::topk") == ("k",)
    for op in ("aten::max.dim", "aten::kthvalue", "aten::sort", "aten::narrow", "aten::cummin"):
        assert torch_facts.zero_dim_kept(op) == (), op


def test_the_premise_on_the_cpu():
    import torch
    x = torch.tensor(3.0)
    values, indices = torch.topk(x, 0)
    assert values.shape == () and values.item() == 3.0 and indices.item() == 0
    assert torch.topk(x.reshape(1), 0).values.numel() == 0


@pytest.fixture(scope="module")
def rendered(db):
    r = prepare(db, "aclnnTopk", "torch", op="aten::topk", layout="in-tree")
    return r.files[ADAPTER.format("Topk")]


@pytest.mark.parametrize("sig, ret", [
    ("std::tuple<at::Tensor, at::Tensor> topk(", "return std::make_tuple(values, indices);"),
    ("std::tuple<at::Tensor&, at::Tensor&> topk_out(",
     "return std::forward_as_tuple(values, indices);")])
def test_both_members_take_the_cpu_kernel_on_that_call(rendered, sig, ret):
    body = _fn(rendered, sig)
    route = ("    if (self.dim() == 0 && k == 0) {\n"
             "        auto opgen_cpu_result = at::topk(self.cpu(), k, dim, largest, sorted);\n"
             "        values.copy_(std::get<0>(opgen_cpu_result));\n"
             "        indices.copy_(std::get<1>(opgen_cpu_result));\n"
             f"        {ret}\n"
             "    }\n")
    assert route in body
    # after the outputs are sized (0-d by the meta function), before the call
    assert body.index("auto meta = at::topk(") < body.index(route) \
        < body.index("EXEC_NPU_CMD(aclnnTopk,")
