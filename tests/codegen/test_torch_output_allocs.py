"""Outputs of an op torch gives no Meta kernel, allocated as upstream's adapter does
(docs/opgen.md, "Eighth audit: the pool at head, torch rows 1-12"): a reviewed per-API
entry (arg_rules.yaml `api_output_allocs`) gives each output's sizes, dtype and the flag it
is allocated under. aclnnBatchNormReduceBackward's four outputs were allocated like
`grad_out` (the API refuses anything but `{C}`, ops-nn aclnn_batch_norm_backward_reduce.cpp
CheckShape); op-plugin BatchNormBackwardReduceKernelNpuOpApi.cpp allocates `sum_dy` /
`sum_dy_xmu` like `mean`, `grad_weight` / `grad_bias` of `{C}`, float32 (half when input
and mean are), each only when its flag is set."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

_DT = "(input.scalar_type() == at::kHalf && mean.scalar_type() == at::kHalf) ? at::kHalf : at::kFloat"


@pytest.fixture(scope="module")
def rendered(db):
    r = prepare(db, "aclnnBatchNormReduceBackward", "torch",
                op="aten::batch_norm_backward_reduce", layout="in-tree")
    return r.files[ADAPTER.format("BatchNormBackwardReduce")]


def test_functional_allocates_each_output_under_its_flag(rendered):
    body = _fn(rendered, "std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> "
                         "batch_norm_backward_reduce(")
    for name, flag, sizes in (("out0", "input_g", "mean.sizes()"),
                              ("out1", "input_g", "mean.sizes()"),
                              ("out2", "weight_g", "std::vector<int64_t>{input.size(1)}"),
                              ("out3", "bias_g", "std::vector<int64_t>{input.size(1)}")):
        assert (f"at::Tensor {name} = ({flag}) ? npu_preparation::apply_tensor_without_format("
                f"{sizes}, grad_out.options().dtype({_DT})) : at::Tensor();") in body, name
    assert "apply_tensor_without_format(grad_out)" not in body
    assert "no meta function is known for aten::batch_norm_backward_reduce" not in body


def test_out_member_checks_each_out_under_its_flag(rendered):
    body = _fn(rendered, "std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> "
                         "batch_norm_backward_reduce_out(")
    assert ("    if (weight_g) {\n        npu_preparation::check_tensor({grad_out, input, mean, "
            "invstd}, out2, out2.scalar_type(), std::vector<int64_t>{input.size(1)});\n    }") in body
    assert "check/resize the outputs" not in body


def test_an_entry_is_strict():
    from opdb.arg_rules import parse
    from opdb.errors import OpscanError
    entry = {"apis": "^aclnnX$", "output": "out0", "sizes": "{a}.sizes()",
             "dtype": "at::kFloat", "when": "true", "evidence": "x"}
    assert parse({"api_output_allocs": [entry]}).output_alloc_for("aclnnX", "out0").when == "true"
    with pytest.raises(OpscanError, match=r"api_output_allocs\[0\].*needs exactly"):
        parse({"api_output_allocs": [{"apis": "^aclnnX$", "output": "out0", "sizes": "{a}",
                                      "dtype": "at::kFloat", "evidence": "x"}]})


def test_no_meta_kernel_in_torch():
    """The entry's premise, probed: torch has no Meta kernel for the op."""
    import torch
    m = lambda *s: torch.empty(*s, device="meta")  # noqa: E731
    with pytest.raises(NotImplementedError):
        torch.ops.aten.batch_norm_backward_reduce(m(2, 3, 4), m(2, 3, 4), m(3), m(3), m(3),
                                                   True, True, True)


_QKV = "std::vector<int64_t>{qkv.size(0), num_heads, qkv.size(1), qkv_bias.size(0) / 3 / num_heads}"


def test_transform_bias_rescale_qkv_outputs_as_upstream(db):
    """Ninth audit, torch row 19 (docs/opgen.md): q, k and v were allocated like `qkv`
    ([B, T, 3D]); upstream (TransfromBiasRescaleQKVKernelNpuOpApi.cpp:32-47,66-70) and
    torch's CPU kernel give [B, num_heads, T, D / num_heads] in qkv's dtype."""
    r = prepare(db, "aclnnTransformBiasRescaleQkv", "torch",
                op="aten::_transform_bias_rescale_qkv", layout="in-tree")
    text = r.files[ADAPTER.format("TransformBiasRescaleQkv")]
    body = _fn(text, "std::tuple<at::Tensor, at::Tensor, at::Tensor> _transform_bias_rescale_qkv(")
    for name in ("out0", "out1", "out2"):
        assert (f"at::Tensor {name} = (true) ? npu_preparation::apply_tensor_without_format("
                f"{_QKV}, qkv.options().dtype(qkv.scalar_type())) : at::Tensor();") in body, name
    assert "apply_tensor_without_format(qkv)" not in body
    out = _fn(text, "std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> _transform_bias_rescale_qkv_out(")
    assert f"out2, out2.scalar_type(), {_QKV});" in out
    assert "check/resize the outputs" not in out


def test_transform_bias_rescale_qkv_sizes_match_torch():
    """The entry's premises, probed: no Meta kernel, and the CPU kernel's sizes are the
    entry's formula."""
    import torch
    with pytest.raises(NotImplementedError):
        torch.ops.aten._transform_bias_rescale_qkv(torch.empty(2, 3, 24, device="meta"),
                                                   torch.empty(24, device="meta"), 2)
    q, k, v = torch.ops.aten._transform_bias_rescale_qkv(torch.randn(2, 3, 24), torch.randn(24), 2)
    assert q.shape == k.shape == v.shape == (2, 2, 3, 24 // 3 // 2) and q.dtype == torch.float32
