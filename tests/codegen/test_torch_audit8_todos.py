"""Review notes that were wrong on right calls (docs/opgen.md, "Eighth audit: the pool at
head, torch rows 1-12"): `_cummin_helper(Tensor self, Tensor(a!) values, Tensor(b!)
indices, int dim)` writes `values`/`indices`, which feed aclnnCummin's `valuesOut` /
`indicesOut`, yet each got "aclnn role is output but the framework value is written"; and
aclnnAll/aclnnAny's `keepdim`, which a torch reduction without a keepdim argument passes as
false (op-plugin AllKernelNpuOpApi.cpp / AnyKernelNpuOpApi.cpp), got a placeholder TODO
because the reviewed rule was spelled `keep_dim` only."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, aclnn_api, fw_param, shipped_db_fixture

db = shipped_db_fixture()


def test_a_mutable_framework_tensor_may_feed_an_aclnn_output():
    from codegen.argmap import map_args
    api = aclnn_api("aclnnX", ("self", "const aclTensor*", "input"),
                    ("valuesOut", "aclTensor*", "output"))
    written = map_args(api, [fw_param("self", "tensor"), fw_param("values", "tensor", mutable=True)],
                       target="torch")
    assert [p.todo for p in written.params if p.aclnn.name == "valuesOut"] == [""]
    # a read-only one still is no output (`_writes_const`: never matched to it)
    read = map_args(api, [fw_param("self", "tensor"), fw_param("values", "tensor")],
                    target="torch")
    assert not any(p.fw is not None and p.fw.name == "values" and p.aclnn.name == "valuesOut"
                   and not p.todo for p in read.params)


def test_cummin_helper_has_no_review_notes(db):
    r = prepare(db, "aclnnCummin", "torch", op="aten::_cummin_helper", layout="in-tree")
    text = r.files[ADAPTER.format("CumminHelper")]
    assert "// TODO(opgen):" not in text
    assert "EXEC_NPU_CMD(aclnnCummin, self, dim, values, indices);" in text


@pytest.mark.parametrize("api, op, cls", [("aclnnAll", "aten::all", "All"),
                                          ("aclnnAny", "aten::any", "Any")])
def test_a_full_reduction_passes_keepdim_false_without_a_todo(db, api, op, cls):
    r = prepare(db, api, "torch", op=op, layout="in-tree")
    text = r.files[ADAPTER.format(cls)]
    assert "bool acl_keepdim = false;" in text
    assert "// TODO(opgen):" not in text
