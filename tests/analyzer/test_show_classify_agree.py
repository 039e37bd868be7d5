"""`opdb show X` and `opscan classify X` agree by construction: both read the one
`OpFacts` record of X (opdb.facts). Checked for every op in a trace of each bundled
example (torch in meta mode, paddle in its real dygraph mode)."""
from pathlib import Path

import pytest

from analyzer.classify import ClassifyContext, classify_op
from opdb.names import normalize_op_name
from opdb.query import OpDB
from opdb.show import describe, render_text

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def db():
    return OpDB.open(overlay=False)


def _trace(path: Path, db):
    from analyzer.trace.entry import detect_framework

    if detect_framework(path) == "torch":
        from analyzer.trace.torch.tracer import trace_torch

        return "torch", trace_torch(path, adapted=db.adapted_ops("torch", None), mode="meta")
    from analyzer.trace.paddle.tracer import trace_paddle

    return "paddle", trace_paddle(path, mode="real")


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_show_and_classify_agree_on_every_traced_op(db, example):
    framework, trace = _trace(example, db)
    assert not trace.partial, trace.error
    ctx = ClassifyContext.create(db, framework)
    ops = sorted({normalize_op_name(framework, c.overload or c.op) if framework == "torch" else c.op
                  for c in trace.calls})
    assert ops
    for op in ops:
        facts = ctx.facts(op)
        if not facts.known:
            continue  # not in any catalog: both refuse it (tested in test_labelled_cases)
        desc = describe(db, op, framework, ctx.soc)
        assert desc.facts is facts, op  # the same record, not a recomputation
        v = classify_op(ctx, op, tuple(sorted({t.dtype for c in trace.calls for t in c.inputs[:1]})))
        text = render_text(desc)
        assert {a.target for a in desc.adapters} >= ({v.adapter.split(" ")[0]} if v.adapter else set()), op
        for c in v.candidates:
            assert c.api in text, (op, c.api)
        if v.category == "supported" and not v.decomposes_into and "structured delegate" not in v.action:
            assert desc.adapters, op
