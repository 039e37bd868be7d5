"""histogram asked for with aclnnInplaceZero (the eighth audit's draw: upstream's
HistogramKernel zeroes `output` with it, then runs the acl_op Histogram) renders as the
reviewed `body` composition of opdb/sources/forward_compositions.yaml: aclnnHistc (the same
l0op::Histogram, ops-math aclnn_histc.cpp) into the int64 output HistogramInferMeta sets,
through a float32 count for a floating input. Before, the kernel only zeroed `output`
(scored 0, docs/opgen.md "Eighth audit: the pool at head, paddle rows 1-12")."""
from __future__ import annotations


def _render() -> tuple[str, tuple[str, ...]]:
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnInplaceZero", "paddle", op="histogram", layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), tuple(r.todos)


def test_histogram_counts_with_histc_not_only_zeroes():
    cc, todos = _render()
    assert "EXEC_NPU_CMD(aclnnHistc, dev_ctx, input, bins, acl_min, acl_max, acl_counts);" in cc
    assert "EXEC_NPU_CMD(aclnnCast, dev_ctx, acl_counts, acl_to, *output);" in cc
    assert "EXEC_NPU_CMD(aclnnHistc, dev_ctx, input, bins, acl_min, acl_max, *output);" in cc
    assert "EXEC_NPU_CMD(aclnnInplaceZero" not in cc
    assert "PADDLE_ENFORCE_EQ(weight || density, false" in cc
    assert not todos
