"""How many SQLite statements classifying an op costs (opdb.name_index and OpDB's per-key
records), and that the shortcuts answer exactly what the plain queries answer.

A scan classifies every unique op of a trace; `related_ops` asks about ~50 spellings of
each, almost none of which exist. Before the name index that was ~90 statements per op
(3,243 for shufflenetv2's 36 ops); a regression here costs every scan silently."""
from __future__ import annotations

import pytest

from analyzer.classify import ClassifyContext, classify_op
from opdb.model import FRAMEWORKS
from opdb.query import OpDB

TORCH_OPS = ("aten::convolution", "aten::convolution_backward", "aten::add.Tensor",
             "aten::native_batch_norm", "aten::native_batch_norm_backward", "aten::relu_",
             "aten::threshold_backward", "aten::_foreach_add_.List", "aten::addmm",
             "aten::erfinv", "aten::max_pool2d_with_indices", "aten::nll_loss_forward",
             "aten::_log_softmax_backward_data", "aten::mm", "aten::sum.dim_IntList",
             "aten::channel_shuffle", "aten::view", "aten::linalg_vector_norm")
PADDLE_OPS = ("conv2d", "conv2d_grad", "depthwise_conv2d", "batch_norm", "batch_norm_grad",
              "hardswish", "hardswish_grad", "pool2d", "pool2d_grad", "adam", "adam_",
              "matmul_v2", "cross_entropy_with_softmax", "add_n", "embedding_grad", "relu")
# statements per op, averaged over the lists above (measured: ~8 torch, ~5 paddle), and
# the fixed reads of the name index and the target list
PER_OP = 12
FIXED = 10


def _count(db: OpDB) -> list[str]:
    seen: list[str] = []
    db.con.set_trace_callback(seen.append)
    return seen


@pytest.mark.parametrize("framework, ops", [("torch", TORCH_OPS), ("paddle", PADDLE_OPS)])
def test_statements_per_classified_op_are_bounded(framework, ops):
    db = OpDB.open()  # a fresh instance: opdb.facts caches per OpDB, so nothing is warm
    ctx = ClassifyContext.create(db, framework)
    seen = _count(db)
    for op in ops:
        classify_op(ctx, op, ("float32",))
    assert len(seen) <= FIXED + PER_OP * len(ops), (
        f"{len(seen)} SQLite statements for {len(ops)} {framework} ops; the busiest: "
        + "; ".join(sorted(set(seen), key=seen.count, reverse=True)[:3]))
    again = len(seen)
    for op in ops:  # the same ops again (other dtypes): answered from the records kept
        classify_op(ctx, op, ("float16",))
    assert len(seen) == again


def _names_to_try(db: OpDB, framework: str) -> list[str]:
    """Existing ops, aliases, adapted and mapped names, and near misses of each."""
    sample = {}
    for sql in ("SELECT name FROM framework_ops WHERE framework=? ORDER BY name LIMIT 40",
                "SELECT alias FROM op_aliases WHERE framework=? ORDER BY alias LIMIT 20",
                "SELECT DISTINCT op FROM adapters WHERE framework=? ORDER BY op LIMIT 40",
                "SELECT DISTINCT op FROM op_aclnn_map WHERE framework=? ORDER BY op LIMIT 20",
                "SELECT DISTINCT op FROM known_failures WHERE framework=? ORDER BY op LIMIT 10"):
        for (name,) in db.con.execute(sql, (framework,)):
            for n in (name, name + "_", name + "_grad", name.removeprefix("aten::"),
                      name + ".default", "no_such_" + name):
                sample[n] = None
    return list(sample)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_index_shortcuts_answer_what_the_queries_answer(framework):
    db = OpDB.open()
    target = db.default_target(framework)
    for name in _names_to_try(db, framework):
        assert db.framework_op(framework, name) == db._framework_op(framework, name, None), name
        assert db.adapters(framework, name) == db._adapters(framework, name, None), name
        assert db.adapters(framework, name, target) == db._adapters(framework, name, target), name
        assert db.mappings(framework, name) == db._mappings(framework, name, None), name
        assert db.known_failures(framework, name) == db._known_failures(framework, name), name
    for name in ("aclnnAdd", "aclnnErfinv", "aclnnNoSuchApi", "Add"):
        assert db.aclnn_api(name) == db._aclnn_api(name)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_adapter_releases_name_what_the_adapter_records_name(framework):
    db = OpDB.open()
    for name in _names_to_try(db, framework):
        assert db.adapter_releases(framework, name) == {
            (a.provider, a.version) for a in db._adapters(framework, name, None)}, name
