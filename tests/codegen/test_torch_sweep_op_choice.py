"""Which torch op an aclnn API is rendered for when no op is given (`opgen aclnn API
--target torch`, the sweep's choice, `codegen.resolve._best_op_for_api`). A guessed
mapping (cross-framework, name) loses to the op's own op-plugin adapter: aclnnEqTensor
was rendered for `aten::equal` (PaddleCustomDevice's `equal` kernel calls it), whose
op-plugin adapter EqualKernelNpuOpApi.cpp calls aclnnEqual; EqKernelNpuOpApi.cpp's
`eq.Tensor` calls aclnnEqTensor itself (and aclnnEqScalar for a CPU scalar), a
`composite` mapping that was never a candidate."""
from __future__ import annotations

from codegen.resolve import _best_op_for_api, rank_ops_for_api
from tests.codegen.torch_adapter_parts import shipped_db_fixture

db = shipped_db_fixture()


def test_a_guess_the_ops_own_adapter_contradicts_is_dropped(db):
    ranked = [m.op for _, m, _ in rank_ops_for_api(db, "torch", "aclnnEqTensor")]
    assert "aten::equal" not in ranked
    # the op's own adapter mapping stays; so does a guess no adapter contradicts
    assert [m.op for _, m, _ in rank_ops_for_api(db, "torch", "aclnnEqual")][0] == "aten::equal"
    # paddle's choices are not changed by this torch rule
    assert "equal" in [m.op for _, m, _ in rank_ops_for_api(db, "paddle", "aclnnEqTensor")]


def test_an_api_the_ops_adapter_calls_among_others_is_rendered_for_that_op(db):
    op, how = _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqTensor"))
    assert op.name == "aten::eq.Tensor"
    assert "role composite" in how
    # a primary mapping still wins, and an op reached through another op is no candidate
    assert _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqScalar"))[0].name == "aten::eq.Scalar"
    assert _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqual"))[0].name == "aten::equal"
