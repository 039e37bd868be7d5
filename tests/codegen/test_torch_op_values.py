"""A reviewed constant upstream passes for an aclnn number when an API serves several ops
told apart by it (arg_rules.yaml `op_values`: aclnnForeachRoundOffNumberV2's `roundMode`,
3 for `_foreach_ceil`; the seventh audit's ForeachRoundOffNumber row, docs/opgen.md
"Seventh audit: the pool at head, torch rows 13-24"). The code keys on no API or op name;
the per-API fact is the reviewed yaml entry, with upstream line evidence."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_the_reviewed_entries_parse_and_select_by_api_param_and_op():
    from opdb.arg_rules import load, parse
    from opdb.errors import OpscanError
    rules = load()
    api = "aclnnForeachRoundOffNumberV2"
    assert rules.op_value_for(api, "round_mode", "aten::_foreach_ceil").value == "3"
    assert rules.op_value_for(api, "round_mode", "aten::_foreach_floor").value == "2"
    assert rules.op_value_for(api, "round_mode", "aten::_foreach_ceil_") is None  # functional only
    assert rules.op_value_for(api, "round_mode", "aten::ceil") is None
    assert rules.op_value_for("aclnnForeachRoundOffNumber", "round_mode",
                              "aten::_foreach_ceil") is None  # V1 takes a tensor
    with pytest.raises(OpscanError):
        parse({"aliases": [], "rules": [], "op_values": [{"apis": "^aclnnX$", "ops": "x"}]})


def test_every_member_passes_the_rounding_mode_upstream_passes(db):
    """op-plugin ForeachRoundOffNumberKernelNpuOpApi.cpp runs _foreach_ceil and
    _foreach_ceil_ on aclnnForeachRoundOffNumberV2 with at::Scalar(char(3)); before this
    ours passed a nullptr placeholder `roundMode` (with a TODO), which the API refuses."""
    r = prepare(db, "aclnnForeachRoundOffNumber", "torch", op="aten::_foreach_ceil")
    text = r.files[ADAPTER.format("ForeachCeil")]
    assert "const aclScalar* acl_round_mode = nullptr;" not in text
    for sig in ("_foreach_ceil(at::TensorList self)", "_foreach_ceil_(at::TensorList self)",
                "_foreach_ceil_out(at::TensorList self, at::TensorList out)"):
        body = _fn(text, sig)
        assert "at::Scalar acl_round_mode = 3;" in body, sig
        assert body.index("acl_round_mode = 3") < body.index("EXEC_NPU_CMD")
    assert not any("roundMode" in t for t in r.todos)
    floor = prepare(db, "aclnnForeachRoundOffNumber", "torch", op="aten::_foreach_floor")
    assert "at::Scalar acl_round_mode = 2;" in floor.files[ADAPTER.format("ForeachFloor")]
