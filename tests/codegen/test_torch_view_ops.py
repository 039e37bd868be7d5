"""A torch view op (`permute(Tensor(a) self, ...) -> Tensor(a)`: the result aliases an
input that is not written) has no kernel in torch_npu, which computes views in torch. An
aclnn API that computes its values (aclnnPermute) is adapted as the op's `_copy` variant,
which returns a fresh tensor; before, opgen wrote an in-place-looking adapter that returned
`self` through `at::Tensor&` and did not compile in op-plugin."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from codegen.resolve import _returns_view, resolve


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def test_view_and_mutation_are_told_apart(db):
    assert _returns_view(db.framework_op("torch", "aten::permute"))
    assert _returns_view(db.framework_op("torch", "aten::transpose.int"))
    assert not _returns_view(db.framework_op("torch", "aten::add_.Tensor"))  # (a!): written
    assert not _returns_view(db.framework_op("torch", "aten::permute_copy"))


@pytest.mark.parametrize("op", [None, "aten::permute"])
def test_view_op_is_adapted_as_its_copy_variant(db, op):
    res = resolve(db, "aclnnPermute", "torch", op=op)
    assert res.op.name == "aten::permute_copy"
    assert "returns a view of its input" in res.op_how
    r = prepare(db, "aclnnPermute", "torch", op=op, layout="in-tree")
    src = next(v for k, v in r.files.items() if k.endswith("KernelNpuOpApi.cpp"))
    assert "at::Tensor permute_copy(const at::Tensor& self, at::IntArrayRef dims)" in src
    assert "return self;" not in src
    assert "EXEC_NPU_CMD(aclnnPermute, self, dims, out);" in src


def test_view_op_without_copy_variant_is_kept_with_a_note(db):
    res = resolve(db, "aclnnReal", "torch")
    assert res.op.name == "aten::real" and "no `_copy` variant" in res.op_how
