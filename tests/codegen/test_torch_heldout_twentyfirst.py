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
    op's own meta function runs on a Meta twin of `out` and `out` is checked/resized."""
    r = prepare(db, "aclnnLogSpace", "torch", op="aten::logspace.out")
    body = _fn(r.files[ADAPTER.format("Logspace")], "at::Tensor& logspace_out(")
    assert "at::Tensor meta_out = at::empty({0}, out.options().device(at::kMeta));" in body
    assert "at::_ops::logspace_out::call(start, end, steps, base, meta_out);" in body
    assert ("npu_preparation::check_tensor({out}, out, out.scalar_type(), "
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
    assert "EXEC_NPU_CMD(aclnnForeachCopy, src, out);" in body
    assert "`src` (at::TensorList) is not passed" not in body
    body = _fn(text, "std::vector<at::Tensor> _foreach_copy(")
    assert "EXEC_NPU_CMD(aclnnForeachCopy, src, acl_out);" in body
    # an op that reads `self` keeps it (`x1` <- `self` by position)
    r = prepare(db, "aclnnForeachMaximumList", "torch", op="aten::_foreach_maximum.List")
    body = _fn(r.files[ADAPTER.format("ForeachMaximum")], "std::vector<at::Tensor> _foreach_maximum(")
    assert "EXEC_NPU_CMD(aclnnForeachMaximumList, opgen_x1_part, opgen_x2_part" in body
    assert "auto opgen_x1_part = self.slice(" in body
