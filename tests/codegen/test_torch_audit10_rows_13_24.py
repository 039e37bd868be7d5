"""Defects the tenth audit's torch rows 13-24 found (docs/opgen.md, "Tenth audit: the pool at
head, torch rows 13-24"), each fixed by a mechanism.

- Scalar values the API does not compute: op-plugin's ForeachNormKernelOpApi.cpp sends every
  `ord` but 1 and 2 to torch's kernel (`checkData`: `!(p == L1_NORM || p == L2_NORM)`); the
  A2/A3 kernel (ops-nn foreach/foreach_norm/op_kernel/foreach_norm.cpp:51-57) computes the
  2-norm for any `ord` whose integer part is not 1. opdb.call_limits reads the value set
  from the adapter (`scalar_values`) and the list route sends the other values to torch."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, shipped_db_fixture

db = shipped_db_fixture()

_ADAPTER_SRC = """
constexpr int ONE = 1;
bool check(at::TensorList a, const at::Scalar& s) {
  double p = 0.0;
  read(s, &p);
  return !at::native::can_use_fast_route(a)%s;
}
void _split(at::TensorList a, const at::Scalar& s, at::TensorList r, bool is_inplace) {
  size_t max_tensor_count = is_inplace ? 16 : 12;
  EXEC_NPU_CMD(aclnnForeachX, a, s, r);
}
"""


def test_the_extract_records_the_scalar_values_upstream_lets_reach_the_api():
    path = "op_plugin/ops/opapi/ForeachXKernelNpuOpApi.cpp"
    (row,) = rows_of_file(_ADAPTER_SRC % " || !(p == static_cast<double>(ONE) || p == 2)", path, {})
    assert row["scalar_values"] == [1, 2] and row["scalar_values_line"] == 6
    # a set with a value that is no constant (a regbase chip's +inf) leaves the others
    (row,) = rows_of_file(_ADAPTER_SRC % " || !(p == 1 || p == std::numeric_limits<double>::infinity())"
                          " || !(p == static_cast<double>(ONE) || p == 2)", path, {})
    assert row["scalar_values"] == [1, 2]
    (row,) = rows_of_file(_ADAPTER_SRC % "", path, {})
    assert "scalar_values" not in row
    # a negated set over something that is no `double` local is no value set
    (row,) = rows_of_file(_ADAPTER_SRC % " || !(q == 1 || q == 2)", path, {})
    assert "scalar_values" not in row


def test_shipped_limits_carry_upstreams_norm_orders():
    limit = tensors_per_call("aclnnForeachNorm")
    assert limit.scalar_values == (1, 2)
    assert limit.scalar_values_where.endswith("ForeachNormKernelOpApi.cpp:47")
    assert tensors_per_call("aclnnForeachAddListV2").scalar_values == ()


def test_foreach_norm_sends_other_orders_to_torchs_kernel(db):
    r = prepare(db, "aclnnForeachNorm", "torch", op="aten::_foreach_norm.Scalar", layout="in-tree")
    text = r.files[ADAPTER.format("ForeachNorm")]
    for fn in ("void _foreach_norm_out(", "std::vector<at::Tensor> _foreach_norm("):
        body = text.split(fn, 1)[1].split("\n}\n", 1)[0]
        guard = next(line for line in body.splitlines() if "can_use_fast_route" in line)
        assert "|| !(ord.toDouble() == 1 || ord.toDouble() == 2)) {" in guard


def test_an_alpha_is_no_value_set(db):
    """ForeachAddList's `alpha` reaches the API whatever its value (no set upstream)."""
    r = prepare(db, "aclnnForeachAddList", "torch", op="aten::_foreach_add.List", layout="in-tree")
    assert "alpha.toDouble() ==" not in r.files[ADAPTER.format("ForeachAdd")]
