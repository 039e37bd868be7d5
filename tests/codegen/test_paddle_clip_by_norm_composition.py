"""clip_by_norm asked for with aclnnNorm (the tenth audit's draw) renders as the reviewed
`body` composition of opdb/sources/forward_compositions.yaml: the 2-norm over every axis
(aclnnNorm p 2, keepdim), read on the host, then a copy of `x` within the bound or
aclnnMuls by max_norm / (norm + eps), as PaddleCustomDevice clip_by_norm_kernel.cc
(77090b64) and Paddle's clip_by_norm_kernel_impl.h. Before, the kernel wrote the norm into
`out` (scored 0, docs/opgen.md "Tenth audit: the pool at head, paddle rows 1-12")."""
from __future__ import annotations


def _render() -> tuple[str, tuple[str, ...]]:
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnNorm", "paddle", op="clip_by_norm", layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), tuple(r.todos)


def test_clip_by_norm_clips_x_not_only_computes_the_norm():
    cc, todos = _render()
    assert "EXEC_NPU_CMD(aclnnNorm, dev_ctx, x, acl_p, acl_axes, acl_keepdim, acl_norm);" in cc
    assert "if (acl_v <= max_norm) {" in cc
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *out, x);" in cc
    assert "phi::Scalar acl_scale(max_norm / (acl_v + acl_eps));" in cc
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, x, acl_scale, *out);" in cc
    assert "EXEC_NPU_CMD(aclnnNorm, dev_ctx, acl_self_1d" not in cc
    assert not todos
