"""gather_grad on aclnnScatterNd (docs/opgen.md "Paddle classes 9, 10, 12, 13", classes 2
and 6; not held out). Class 2, general: an aclnn input fed by an input Paddle's backward
YAML marks `no_need_buffer` (only its meta is kept) gets zeros of its shape, never its data,
as upstream gather_grad, gather_nd_grad, index_sample_grad and masked_select_grad scatter
into zeros like x. Class 6, a reviewed entry keyed by aclnnScatterNd: an index with an
`axis` attribute is one position per entry, viewed [N, 1] (upstream GatherGradKernel), and a
0-d index's update keeps a 1 at `axis`. Before: `data` <- x by position (x's possibly freed
data as the scatter base), the index as it was (scored 1)."""
from __future__ import annotations


def _cc(api: str, op: str):
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=op, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r.todos


def test_backward_yaml_no_need_buffer_is_parsed():
    from codegen.paddle_target import no_buffer_inputs
    assert no_buffer_inputs("gather_grad") == frozenset({"x"})
    assert no_buffer_inputs("gather_nd_grad") == frozenset({"x"})
    assert no_buffer_inputs("gather") == frozenset()  # a forward op keeps its inputs


def test_gather_grad_scatters_into_zeros_like_x_with_a_depth_1_index():
    cc, todos = _cc("aclnnScatterNd", "gather_grad")
    assert "acl_data_zeros.Resize(x.dims());" in cc
    assert "FillNpuTensorWithConstant<T>(&acl_data_zeros, dev_ctx, static_cast<T>(0));" in cc
    assert ("acl_indices.Resize(phi::make_ddim({index.dims().size() == 0 ? 1 : "
            "index.dims()[0], 1}));") in cc
    assert "acl_updates_d.insert(acl_updates_d.begin() + acl_updates_ax, 1);" in cc
    call = next(line for line in cc.splitlines() if "EXEC_NPU_CMD(aclnnScatterNd" in line)
    assert "acl_indices" in call and "dev_ctx, x," not in call
    assert "compute_as(dev_ctx, x," not in cc  # x's data is never read
