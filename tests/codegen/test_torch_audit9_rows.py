"""Defects the ninth audit's torch rows 1-12 found (docs/opgen.md, "Ninth audit: the pool at
head, torch rows 1-12"), each fixed by a mechanism.

- Integral lists: op-plugin's ForeachAddcmulTensorKernelNpuOpApi.cpp sends a list with an
  integral tensor to torch's kernel (`has_integral_tensor(input, true)`) although torch does
  not promote `_foreach_addcmul`'s integer inputs, because the API's `scalars` must have the
  list's dtype. opdb.call_limits reads that guard from the adapter (`integral_slow`)."""
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
