"""`opdb show X` and `opscan classify X` agree by construction: both read the one
`OpFacts` record of X (opdb.facts). Checked for every op in a trace of each bundled
example (torch in meta mode, paddle in its real dygraph mode)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.classify import ClassifyContext, classify_op
from opdb.query import OpDB
from opdb.show import describe, render_text

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def db():
    return OpDB.open(overlay=False)


_TRACE = """
import json, sys
from pathlib import Path
from analyzer.trace.entry import detect_framework
from opdb.names import normalize_op_name
from opdb.query import OpDB
path = Path(sys.argv[1])
fw = detect_framework(path)
if fw == "torch":
    from analyzer.trace.torch.tracer import trace_torch
    trace = trace_torch(path, adapted=OpDB.open(overlay=False).adapted_ops("torch", None), mode="meta")
else:
    from analyzer.trace.paddle.tracer import trace_paddle
    trace = trace_paddle(path, mode="real")
ops = sorted({normalize_op_name(fw, c.overload or c.op) if fw == "torch" else c.op for c in trace.calls})
dtypes = sorted({t.dtype for c in trace.calls for t in c.inputs[:1]})
print(json.dumps({"framework": fw, "ops": ops, "dtypes": dtypes, "partial": trace.partial,
                  "error": trace.error}))
"""


def _trace(path: Path) -> dict:
    """Trace one example in its own process, as `opscan` does: one model per process (a
    paddle trace after many torch and paddle traces in one long-lived process has crashed
    inside Paddle's C++ runtime)."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", _TRACE, str(path)], capture_output=True,
                          text=True, env=env, cwd=root, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_show_and_classify_agree_on_every_traced_op(db, example):
    traced = _trace(example)
    framework = traced["framework"]
    assert not traced["partial"], traced["error"]
    ctx = ClassifyContext.create(db, framework)
    ops = traced["ops"]
    assert ops
    for op in ops:
        facts = ctx.facts(op)
        if not facts.known:
            continue  # not in any catalog: both refuse it (tested in test_labelled_cases)
        desc = describe(db, op, framework, ctx.soc)
        assert desc.facts is facts, op  # the same record, not a recomputation
        v = classify_op(ctx, op, tuple(traced["dtypes"]))
        text = render_text(desc)
        assert {a.target for a in desc.adapters} >= ({v.adapter.split(" ")[0]} if v.adapter else set()), op
        for c in v.candidates:
            assert c.api in text, (op, c.api)
        if v.category == "supported" and not v.decomposes_into and "structured delegate" not in v.action:
            assert desc.adapters, op
