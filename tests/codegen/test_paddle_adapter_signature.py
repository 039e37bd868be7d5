"""A kernel the installed Paddle registers but declares in no phi header (docs/opgen.md
"Batch J", class 14 of "Why paddle first passes fail"): its signature comes from
PaddleCustomDevice's registration in opdb (develop first), and the README's op line says
so. Before, batch I's one_hot_raw rendered with no parameters at all (score 0); over the
catalog 10 kernels are of this kind (dropout, isfinite, isinf, isnan, one_hot_raw, ...)."""
from __future__ import annotations

import pytest

from codegen.resolve import _best_op_for_api, resolve


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def test_one_hot_raw_takes_upstreams_signature(db):
    res = resolve(db, "aclnnOneHot", "paddle", op="one_hot_raw")
    assert [p.name for p in res.op.params] == ["x", "depth_scalar", "dtype",
                                               "allow_out_of_range", "out"]
    assert res.op.function == "OneHotRawKernel"
    assert ("signature from PaddleCustomDevice develop backends/npu/kernels/one_hot_kernel.cc"
            in res.op_how) and "declares no `one_hot_raw` kernel" in res.op_how


def test_a_kernel_paddle_declares_keeps_paddles_signature(db):
    res = resolve(db, "aclnnOneHot", "paddle", op="one_hot")
    assert res.op.source.source == "paddle-wheel" and "signature from" not in res.op_how
    assert [p.name for p in res.op.params] == [p.name for p in db.framework_op("paddle", "one_hot").params]


def test_the_op_an_api_maps_to_gets_it_too(db):
    # the sweep's choice of op (and `opgen aclnn aclnnIsInf` without --op) goes through
    # the same place
    op, how = _best_op_for_api(db, "paddle", db.aclnn_api("aclnnIsInf"))
    assert op.name == "isinf" and [p.name for p in op.params] == ["x", "out"]
    assert "signature from PaddleCustomDevice" in how


def test_the_render_reads_the_parameters(db):
    from codegen.api import prepare
    r = prepare(db, "aclnnOneHot", "paddle", op="one_hot_raw", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert "void OneHotRawKernel(const Context& dev_ctx,\n" in cc
    assert "const phi::Scalar& depth_scalar," in cc
    assert "EXEC_NPU_CMD(aclnnOneHot, dev_ctx, acl_self_1d," in cc
