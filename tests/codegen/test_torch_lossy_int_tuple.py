"""A torch Scalar an aclnn API takes as an int64 (`correction`) that is not a whole int64
runs the op on the CPU, now also for ops with a tuple of Tensor results: op-plugin
517f2e7d StdMeanKernelNpuOpApi.cpp std_mean computes `at::std_mean(self.cpu(), ...)` when
`correction_fits_aclnn_int64` fails and moves both results back. Before, the route took
one-result ops only, so `torch.std_mean(x, correction=0.5)` truncated 0.5 to 0 on the
NPU. No test keys on an API name in code (docs/opgen.md, "Why torch first passes fail,
by mechanism", class 9)."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import function_body as _fn

ADAPTER = "in-tree/op_plugin/ops/opapi/StdMeanKernelNpuOpApi.cpp"


@pytest.fixture(scope="module")
def r():
    from opdb.query import OpDB
    return prepare(OpDB.open(overlay=False), "aclnnStdMeanCorrection", "torch",
                   op="aten::std_mean.correction")


def test_functional_with_two_results_runs_on_the_cpu(r):
    body = _fn(r.files[ADAPTER], "std::tuple<at::Tensor, at::Tensor> std_mean(")
    route = body[:body.index("DO_COMPATIBILITY")]
    assert "if (correction.has_value() && !(correction->isIntegral(true) || " in route
    assert "auto opgen_cpu_result = at::std_mean(self.cpu(), dim, correction, keepdim);" in route
    assert ("return std::make_tuple(std::get<0>(opgen_cpu_result).to(self.options()), "
            "std::get<1>(opgen_cpu_result).to(self.options()));") in route


def test_out_with_two_results_copies_both(r):
    body = _fn(r.files[ADAPTER], "std::tuple<at::Tensor&, at::Tensor&> std_mean_out(")
    route = body[:body.index("auto meta =")]
    assert "auto opgen_cpu_result = at::std_mean(self.cpu(), dim, correction, keepdim);" in route
    for i, out in enumerate(("out0", "out1")):
        assert f"{out}.resize_(std::get<{i}>(opgen_cpu_result).sizes());" in route
        assert f"{out}.copy_(std::get<{i}>(opgen_cpu_result));" in route
    assert "return std::forward_as_tuple(out0, out1);" in route
    # the aclnn call is still there for whole values
    assert "EXEC_NPU_CMD(aclnnStdMeanCorrection, self, acl_dim, acl_correction, keepdim, " \
           "out0, out1);" in body
