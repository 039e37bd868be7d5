"""Every traced Paddle step is recorded from its own kernels, even after the steps before it
repeated each other: a step that branches differently (a data-dependent path, here every
third step) shows its own kernels with its own tensors and is not taken for a copy of the
step before. Guards any future steady-state shortcut of the real tracer (one was tried
and measured, docs/benchmarks.md, "This round (hpd)")."""
from __future__ import annotations

import textwrap

from analyzer.trace.paddle.tracer import trace_paddle

BRANCHY = '''
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


def build():
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = paddle.randn([4, 8])
    target = paddle.randn([4, 4])
    opt = paddle.optimizer.Adam(parameters=model.parameters())
    n = [0]

    def step():
        n[0] += 1
        out = model(x)
        if n[0] % 3 == 0:           # the branch a step 3 takes
            out = paddle.tanh(out)
        loss = F.mse_loss(out, target)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, (x,), step
'''


def _by_step(trace):
    steps: dict[int, list] = {}
    for c in trace.calls:
        steps.setdefault(c.step, []).append(c)
    return steps


def test_a_step_that_branches_is_recorded_in_full(tmp_path):
    path = tmp_path / "branchy.py"
    path.write_text(textwrap.dedent(BRANCHY))
    steps = _by_step(trace_paddle(path, steps=4))
    assert sorted(steps) == [1, 2, 3, 4]
    ops = {k: [c.op for c in calls] for k, calls in steps.items()}
    # steps 2 and 4 repeat each other (Adam's state exists from step 1 on) ...
    assert ops[2] == ops[4] and "tanh" not in ops[2]
    # ... step 3 runs tanh forward and backward, in place in the step's order
    assert ops[3].count("tanh") == 1 and ops[3].count("tanh_grad") == 1
    assert [o for o in ops[3] if o not in ("tanh", "tanh_grad")] == ops[2]
    # its calls carry their own tensors: nothing shared with step 2's activations
    fwd3 = [c for c in steps[3] if c.phase == "forward"]
    tanh = next(c for c in fwd3 if c.op == "tanh")
    assert tanh.inputs and tanh.outputs and tanh.inputs[0].shape == (4, 4)
    ids2 = {t.id for c in steps[2] if c.phase == "forward" for t in c.outputs}
    assert ids2.isdisjoint({t.id for c in fwd3 for t in c.outputs})
