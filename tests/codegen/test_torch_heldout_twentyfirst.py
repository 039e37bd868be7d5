"""Mechanisms found by scoring the twenty-first held-out torch sample (the last 8 units of
the pool, `benchmarks/opgen_heldout_draw.py --seed 21 -n 12 --before 226`) against
op-plugin 517f2e7d (docs/opgen.md, "Twenty-first sample"). Nothing keys on an API or op
name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_an_out_op_without_functional_member_is_sized_by_its_own_meta(db):
    """op-plugin LogSpaceKernelNpuOpApi.cpp resizes `out` to `{steps}`; ops-math
    aclnn_logspace.cpp checks only `out`'s dtype before a ViewCopy into it. torch's
    `logspace` takes TensorOptions, so it is no member of `logspace.out`'s family, and
    before, the `.out` adapter neither checked nor resized `out` (a TODO). Now the `.out`
    op's own meta function runs on a Meta twin of `out` and `out` is checked/resized
    (with no source tensor: an `out` in check_tensor's source list is refused, not
    resized; test_torch_check_sources.py)."""
    r = prepare(db, "aclnnLogSpace", "torch", op="aten::logspace.out")
    body = _fn(r.files[ADAPTER.format("Logspace")], "at::Tensor& logspace_out(")
    assert "at::Tensor meta_out = at::empty({0}, out.options().device(at::kMeta));" in body
    assert "at::_ops::logspace_out::call(start, end, steps, base, meta_out);" in body
    assert ("npu_preparation::check_tensor({}, out, out.scalar_type(), "
            "meta_out.sizes());") in body
    assert body.index("meta_out.sizes()") < body.index("EXEC_NPU_CMD(aclnnLogSpace")
    assert "TODO(opgen)" not in body


def test_the_out_meta_runs_on_meta_twins_of_tensor_inputs():
    """The same rule for an `.out` op with tensor inputs: the inputs go as `opgen_meta`
    twins, each out as an empty Meta twin in its own dtype, and the check names the
    inputs (op-plugin's `check_tensor({self}, out, ...)`). A list out, or an op that is
    not aten (no Meta kernel known), gets nothing."""
    from codegen.kinds import parse_torch_schema
    from codegen.torch_target import _own_out_meta
    s = parse_torch_schema("aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, "
                           "Tensor(a!) out) -> Tensor(a!)")
    got = _own_out_meta(s, ["out"], [], ["self"])
    assert got["lines"] == [
        "at::Tensor meta_out = at::empty({0}, out.options().device(at::kMeta));",
        "at::_ops::cumsum_out::call(opgen_meta(self), dim, dtype, meta_out);",
        "npu_preparation::check_tensor({self}, out, out.scalar_type(), meta_out.sizes());"]
    assert _own_out_meta(s, ["out"], ["out"], ["self"]) is None
    npu = parse_torch_schema("npu::npu_foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    assert _own_out_meta(npu, ["out"], [], ["self"]) is None


def test_an_input_whose_values_the_op_never_reads_gives_way_to_the_one_it_reads(db):
    """op-plugin ForeachCopyKernelOpApi.cpp runs aclnnForeachCopy(src, self). Before,
    aclnn `x` was paired with `self` by alias and the in-place member wrote `self` onto
    itself (`src` unused): `_foreach_copy_` changed nothing. torch's `_foreach_copy`
    reads no value of `self` (probed on the CPU), and `src` is the one unused list."""
    from codegen import torch_facts
    assert torch_facts.reads_values("aten::_foreach_copy", "self") is False
    assert torch_facts.reads_values("aten::_foreach_copy", "src") is True
    assert torch_facts.reads_values("aten::_foreach_add.List", "self") is True
    r = prepare(db, "aclnnForeachCopy", "torch", op="aten::_foreach_copy_")
    text = r.files[ADAPTER.format("ForeachCopy")]
    body = _fn(text, "void _foreach_copy_(")
    assert "at::TensorList out = self;" in body
    # `x` is `src` (whole, or sliced by the list split)
    assert ("EXEC_NPU_CMD(aclnnForeachCopy, src, out);" in body
            or "auto opgen_x_part = src.slice(" in body)
    assert "self.slice(" not in body.split("EXEC_NPU_CMD")[0].split("opgen_out_part")[0]
    assert "`src` (at::TensorList) is not passed" not in body
    body = _fn(text, "std::vector<at::Tensor> _foreach_copy(")
    assert ("EXEC_NPU_CMD(aclnnForeachCopy, src, acl_out);" in body
            or "auto opgen_x_part = src.slice(" in body)
    # an op that reads `self` keeps it (`x1` <- `self` by position)
    r = prepare(db, "aclnnForeachMaximumList", "torch", op="aten::_foreach_maximum.List")
    body = _fn(r.files[ADAPTER.format("ForeachMaximum")], "std::vector<at::Tensor> _foreach_maximum(")
    assert "EXEC_NPU_CMD(aclnnForeachMaximumList, opgen_x1_part, opgen_x2_part" in body
    assert "auto opgen_x1_part = self.slice(" in body


def test_a_list_limit_reached_through_a_file_local_helper_is_extracted():
    """op-plugin ForeachCopyKernelOpApi.cpp splits at `SINGLE_FOREACH_OP_TENSOR_COUNT` (48)
    in `split_and_exec_npu_cmd_copy` but runs aclnnForeachCopy in a helper,
    `exec_npu_cmd_copy`. Before, the limit function had no EXEC_NPU_CMD of its own, so
    no row: ForeachCopy rendered with neither the list route nor the split."""
    from opdb.sources.torch.extract_call_limits import rows_of_file
    text = """
void exec_npu_cmd_copy(const at::TensorList dst, at::TensorList src, bool non_blocking) {
  EXEC_NPU_CMD(aclnnForeachCopy, src, dst);
}
void split_and_exec_npu_cmd_copy(const at::TensorList dst, at::TensorList src, bool nb) {
  size_t tensor_count = src.size();
  size_t max_tensor_count = SINGLE_FOREACH_OP_TENSOR_COUNT;
  if (tensor_count <= max_tensor_count) {
    exec_npu_cmd_copy(dst, src, nb);
    return;
  }
}
void _foreach_copy_(const at::TensorList self, const at::TensorList src, bool nb) {
  if (!at::native::can_use_fast_route(self, src)) { return; }
  split_and_exec_npu_cmd_copy(self, src, true);
}
"""
    rows = rows_of_file(text, "ForeachCopyKernelOpApi.cpp", {"SINGLE_FOREACH_OP_TENSOR_COUNT": 48})
    assert [(r["api"], r["inplace"], r["out_of_place"], r["fast_route"]) for r in rows] == \
        [("aclnnForeachCopy", 48, 48, True)]
    assert rows[0]["source"]["line"] == 7


def test_foreach_copy_takes_the_list_route_and_split(db):
    """With the extracted limit, `_foreach_copy_` sends what torch's fast route rejects
    (mixed devices, so host<->device lists, or dtypes) to torch's
    foreach_tensor_copy_list_kernel_slow_ and splits at 48, as upstream."""
    r = prepare(db, "aclnnForeachCopy", "torch", op="aten::_foreach_copy_")
    body = _fn(r.files[ADAPTER.format("ForeachCopy")], "void _foreach_copy_(")
    assert "if (!at::native::can_use_fast_route({self, src})" in body
    assert "at::native::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);" in body
    assert "opgen_i += 48" in body and "auto opgen_x_part = src.slice(" in body


def test_the_list_dtype_route_reads_the_list_that_feeds_the_api(db):
    """ForeachCopy's `x` is `src` (the in-place member writes `self` through `out`), so the
    dtype route looked for the API param fed by `self`, found none, and left every dtype
    to the API: a complex list failed there, where op-plugin's
    `check_tensor_dtype_support_base` sends it to torch's kernel. The route now reads the
    first list that feeds an API input; uint16/uint32 have at:: names, so the API's list
    (ops-nn aclnn_foreach_copy.cpp) is rendered whole."""
    r = prepare(db, "aclnnForeachCopy", "torch", op="aten::_foreach_copy_")
    body = _fn(r.files[ADAPTER.format("ForeachCopy")], "void _foreach_copy_(")
    assert "src[0].scalar_type() == at::kFloat" in body
    assert "src[0].scalar_type() == at::kUInt16" in body
    assert "at::kComplexFloat" not in body
