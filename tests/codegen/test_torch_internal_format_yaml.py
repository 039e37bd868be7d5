"""A member whose body routes inputs in a non-base format itself (the FRACTAL_NZ weight
route, `codegen.torch_weight_nz`) gets `internal_format_opapi: all_version` in its
op_plugin_functions.yaml entry. Without that key op-plugin's generated wrapper
(op-plugin 517f2e7d `torchnpugen/gen.py:325-343`) sends any non-base-format input to
`acl_op::` (or refuses it when the chip is aclnn-only) before `op_api::` runs, so the
route is dead code. Upstream's entries for addmm, addmm.out, mm, mm.out, bmm, bmm.out,
matmul and matmul.out carry the key (`op_plugin_functions.yaml:964-973`); `addmm_` (no
route) does not (docs/opgen.md, "Seventh audit: the pool at head, torch rows 1-12").
Nothing keys on an API or op name in code; the tests name the upstream entries."""
from __future__ import annotations

import yaml

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import shipped_db_fixture

db = shipped_db_fixture()

ENTRY = "in-tree/op_plugin/config/op_plugin_functions.yaml.entry"


def _entries(db, api: str, op: str) -> dict[str, dict]:
    """{func name.overload: the entry's other keys} of the rendered yaml entry."""
    r = prepare(db, api, "torch", op=op, layout="in-tree")
    rows = yaml.safe_load(r.files[ENTRY])
    return {e["func"].split("(")[0]: {k: v for k, v in e.items() if k != "func"} for e in rows}


def test_members_with_the_nz_route_take_internal_formats(db):
    """addmm and addmm.out (the route to aclnnAddmmWeightNz) carry the key, as upstream's
    entries; addmm_ (aclnnInplaceAddmm, no sibling, no route) does not."""
    got = _entries(db, "aclnnAddmm", "aten::addmm")
    route = {"acl_op": "all_version", "op_api": "all_version",
             "internal_format_opapi": "all_version"}
    assert got == {"addmm.out": route, "addmm": route,
                   "addmm_": {"acl_op": "all_version", "op_api": "all_version"}}
    got = _entries(db, "aclnnMm", "aten::mm")
    assert got == {"mm.out": route, "mm": route}


def test_members_without_a_route_keep_base_formats(db):
    """An adapter with no format route keeps op-plugin's default (non-base inputs to
    acl_op): Baddbmm (no WeightNz sibling) and a pointwise reduction."""
    for api, op in (("aclnnBaddbmm", "aten::baddbmm"), ("aclnnCumsum", "aten::cumsum")):
        r = prepare(db, api, "torch", op=op, layout="in-tree")
        assert "internal_format_opapi" not in r.files[ENTRY]
        assert all(set(v) <= {"acl_op", "op_api"} for v in _entries(db, api, op).values())
