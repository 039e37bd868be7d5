"""Class 12 (docs/opgen.md "Paddle classes 9, 10, 12, 13"; general over kernels, the words
reviewed in arg_rules.yaml `positions`; not held out): an integer attribute that names a
position (offset, axis, dim, index...) changes which elements the call touches; when the
kernel's own aclnn API cannot express it and nothing reads it, the kernel runs for its
Paddle YAML default only and refuses other values, as upstream fill_diagonal(_grad)
refuses `offset != 0` (fill_diagonal_kernel.cc, 77090b64). The naive rule (refuse every
unused attribute's non-default value) was rejected for refusing knobs that do not matter:
numeric knobs (adamw's min_row_size_to_use_multithread), flags, and attributes of helper
APIs of a composite stay as they were. Before: fill_diagonal ignored `offset` (scored 2)."""
from __future__ import annotations

import pytest


def _render(api: str, op: str):
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=op, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r.todos


@pytest.mark.parametrize("op", ["fill_diagonal", "fill_diagonal_grad"])
def test_fill_diagonal_refuses_an_offset_it_cannot_express(op):
    cc, todos = _render("aclnnInplaceFillDiagonal", op)
    guard = cc.index("PADDLE_ENFORCE_EQ(offset, 0, phi::errors::Unimplemented(")
    assert guard < cc.index("EXEC_NPU_CMD(aclnnInplaceFillDiagonal")
    assert not [t for t in todos if "`offset`" in t]


def test_knobs_flags_and_helper_steps_are_not_refused():
    cc, _ = _render("aclnnApplyAdamW", "adamw")  # an int64 CPU knob, not a position
    assert "PADDLE_ENFORCE_EQ(min_row_size_to_use_multithread" not in cc
    cc, _ = _render("aclnnInplaceFillScalar", "nll_loss")  # a helper of a composite
    assert "PADDLE_ENFORCE_EQ(ignore_index" not in cc


def test_position_words_and_their_parse_errors():
    from opdb.arg_rules import load, parse
    from opdb.errors import ParseError
    pos = load().positions
    assert pos.names_position("offset") and pos.names_position("axis1")
    assert pos.names_position("padding_idx") and not pos.names_position("epsilon")
    assert not pos.names_position("min_row_size_to_use_multithread")
    with pytest.raises(ParseError, match="positions: needs exactly `words`"):
        parse({"aliases": [], "rules": [], "positions": {"words": []}})


def test_a_view_ops_attributes_and_negative_dims_are_not_refused():
    from codegen.paddle_target import build_paddle_kernel
    from opdb.query import OpDB
    db = OpDB.open()
    # flatten is a view (YAML `view : (x -> out)`): start/stop_axis only shape `out`
    k = build_paddle_kernel(db.aclnn_api("aclnnFlatten"), db.framework_op("paddle", "flatten"))
    assert not [g for g in k["guards"] if "PADDLE_ENFORCE" in g]
    # trace's axis1 = -2 is dim 0 of a 2-d x: compared after wrapping by x's rank
    k = build_paddle_kernel(db.aclnn_api("aclnnTrace"), db.framework_op("paddle", "trace"))
    assert ("PADDLE_ENFORCE_EQ((axis1 < 0 ? axis1 + x.dims().size() : axis1), 0, "
            "phi::errors::Unimplemented(") in k["guards"]
    assert "PADDLE_ENFORCE_EQ(offset, 0, phi::errors::Unimplemented(" in k["guards"]
