"""Mechanisms found by scoring the eleventh held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 11 --before 106`) against op-plugin 517f2e7d
(docs/opgen.md, "Eleventh sample"): the inflection pairing of names (`train` /
`training`) also pairs lists of numbers (`split_sizes` / `splitSize`). None keys on an
API name in code; the render tests name the upstream adapter."""
from __future__ import annotations

from codegen.argmap import FwParam, map_args
from codegen.api import prepare
from opdb.model import AclnnApi, Param, Source
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()
SRC = Source("test")


def _api(name, *params):
    return AclnnApi(name, tuple(Param(n, t, r) for n, t, r in params), SRC)


def _fw(name, kind, cpp="", **kw):
    return FwParam(name, kind, cpp or kind, **kw)


def _got(m):
    return {p.aclnn.name: (p.fw.name if p.fw else None, p.decision) for p in m.params}


def test_int_lists_pair_up_to_an_inflection():
    """torch `split_sizes` (int[]) is aclnn `splitSize` (aclIntArray*). Before, only
    plain numbers, bools and strings paired, so `splitSize` was a nullptr placeholder."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
             ("splitSize", "const aclIntArray*", "input"), ("dim", "int64_t", "input"),
             ("out", "aclTensorList*", "output"))
    fws = [_fw("self", "tensor"), _fw("split_sizes", "int_array"), _fw("dim", "int"),
           _fw("out", "tensor_list", is_output=True)]
    m = map_args(a, fws, "torch")
    assert _got(m)["splitSize"] == ("split_sizes", "inflection")
    assert not m.todos


def test_int_list_inflection_keeps_kind_and_partner_limits():
    """An int list never pairs with a plain int of an inflected name, nor with a
    float list; two inflected partners pair nothing."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
             ("splitSize", "const aclIntArray*", "input"), ("out", "aclTensor*", "output"))
    base = [_fw("self", "tensor"), _fw("out", "tensor", is_output=True)]
    assert _got(map_args(a, base + [_fw("split_sizes", "int")], "torch"))["splitSize"][0] is None
    assert _got(map_args(a, base + [_fw("split_sizes", "float_array")], "torch"))["splitSize"][0] \
        is None
    two = base + [_fw("split_sizes", "int_array"), _fw("split_sized", "int_array")]
    assert _got(map_args(a, two, "torch"))["splitSize"][0] is None


def test_split_with_sizes_copy_passes_split_sizes(db):
    """op-plugin SplitWithSizesCopyNpuOpApi.cpp: `EXEC_NPU_CMD(aclnnSplitWithSize, self,
    split_sizes, dim, out)`; opgen passed nullptr as the required `splitSize`."""
    r = prepare(db, "aclnnSplitWithSize", "torch", op="aten::split_with_sizes_copy.out")
    body = _fn(r.files[ADAPTER.format("SplitWithSizesCopy")],
               "void split_with_sizes_copy_out(")
    assert "EXEC_NPU_CMD(aclnnSplitWithSize, self, split_sizes, dim, out);" in body
    assert "acl_split_size" not in body
    assert not r.todos
