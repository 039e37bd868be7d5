"""Which torch op an aclnn API is rendered for when no op is given (`opgen aclnn API
--target torch`, the sweep's choice, `codegen.resolve._best_op_for_api`). An op whose own
op-plugin adapter calls the API beats a guessed mapping (cross-framework, name):
aclnnEqTensor was rendered for `aten::equal` (PaddleCustomDevice's `equal` kernel calls
it), whose op-plugin adapter EqualKernelNpuOpApi.cpp calls aclnnEqual; EqKernelNpuOpApi.cpp's
`eq.Tensor` calls aclnnEqTensor itself (and aclnnEqScalar for a CPU scalar), a
`composite` mapping that was never a candidate."""
from __future__ import annotations

from codegen.resolve import _best_op_for_api
from tests.codegen.torch_adapter_parts import shipped_db_fixture

db = shipped_db_fixture()


def test_the_op_whose_adapter_calls_the_api_beats_a_guess(db):
    op, how = _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqTensor"))
    assert op.name == "aten::eq.Tensor"
    assert "role composite" in how and "cross-framework guess aten::equal" in how


def test_adapter_primaries_and_ops_reached_through_another_op_are_unchanged(db):
    assert _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqScalar"))[0].name == "aten::eq.Scalar"
    assert _best_op_for_api(db, "torch", db.aclnn_api("aclnnEqual"))[0].name == "aten::equal"
    # a guess with no adapter calling the API stays (aclnnCumsumV2: op-plugin's cumsum
    # calls aclnnCumsum; the guess is paddle's)
    assert _best_op_for_api(db, "torch", db.aclnn_api("aclnnCumsumV2"))[0].name == "aten::cumsum"
    # paddle's choice is not changed by this torch rule
    assert _best_op_for_api(db, "paddle", db.aclnn_api("aclnnEqTensor"))[0].name == "equal"


def test_inplace_op_on_an_out_of_place_api_without_evidence_is_a_clear_error(db):
    """`opgen aclnn aclnnCumsumV2 --op aten::cumsum_` ended in `KeyError:
    'inplace_out_evidence'` (found while measuring this rule): cumsum is not pointwise, the
    API does not update its input and op-plugin never runs cumsum_ on it, so the API must
    not write `self` as its output. Now a one-line error naming the fix; nothing written."""
    import pytest

    from codegen.api import prepare
    from opdb.errors import OpscanError

    with pytest.raises(OpscanError) as e:
        prepare(db, "aclnnCumsumV2", "torch", op="aten::cumsum_")
    assert str(e.value) == (
        "aten::cumsum_ is in place, aclnnCumsumV2 has no Inplace variant, and the op is not "
        "pointwise, so the API cannot write `self` as its output (render the functional op "
        "instead: --op aten::cumsum)")
