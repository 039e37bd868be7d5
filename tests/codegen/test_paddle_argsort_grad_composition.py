"""argsort_grad asked for with aclnnScatterNd (the tenth audit's draw) renders as the
reviewed `body` composition of opdb/sources/forward_compositions.yaml: out_grad scattered
along `axis` at `indices` (aclnnScatter, any rank), a copy for a 0-d input, nothing for an
empty one, as PaddleCustomDevice argsort_grad_kernel.cc (77090b64; transpose, row offsets
and aclnnScatterNd) and Paddle's CPU FullAssign compute. Before, the indices went to
aclnnScatterNd as index tuples, right for a 1-D input only (scored 1, docs/opgen.md
"Tenth audit: the pool at head, paddle rows 1-12")."""
from __future__ import annotations


def _render() -> str:
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnScatterNd", "paddle", op="argsort_grad", layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc"))


def test_argsort_grad_scatters_along_the_axis_at_any_rank():
    cc = _render()
    assert "const int64_t acl_axis = axis < 0 ? axis + input.dims().size() : axis;" in cc
    assert ("EXEC_NPU_CMD(aclnnScatter, dev_ctx, out_grad, acl_axis, indices, out_grad, "
            "acl_reduce, *in_grad);") in cc
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *in_grad, out_grad);" in cc
    assert "EXEC_NPU_CMD(aclnnScatterNd" not in cc
