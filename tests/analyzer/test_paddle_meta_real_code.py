"""Paddle --mode meta on real model code (issue 12, item 5): a build that registers
buffers and calls set_value, and a PP-OCR-det-like loss that reads tensor values
(`int(Tensor)`), scan in meta mode with the real-mode op set but for the documented
static-vs-dygraph differences; the report notes say what meta mode did."""
from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest

import paddle  # installed by scripts/setup.sh

from analyzer.trace.paddle.meta import DYGRAPH_ONLY, STATIC_ONLY, dygraph_equivalent  # noqa: E402
from analyzer.trace.paddle.real import CPU_ACCUMULATE  # noqa: E402
from analyzer.trace.paddle.tracer import trace_paddle  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "tests/fixtures/models"

# model -> (meta-only kernels, real-only kernels), each explained in analyzer.trace.paddle.meta
CASES = {
    "paddle_buffers.py": (set(), {"not_equal", "cast", "multiply", "mean_all",
                                  "mean_all_grad"}),
    "paddle_db_loss.py": (set(), {"div_scale"}),
    "paddle_fanout.py": (set(), set()),
    "paddle_tensor_index.py": ({"gather_nd", "gather_nd_grad", "stack", "unsqueeze"},
                               {"index_elementwise_get", "index_elementwise_get_grad"}),
}


def _ops(trace):
    return {dygraph_equivalent(c.op) for c in trace.calls}


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_gives_the_real_op_set(name):
    real = trace_paddle(MODELS / name, mode="real")
    meta = trace_paddle(MODELS / name, mode="meta")
    assert not meta.partial, meta.error
    meta_only, real_only = CASES[name]
    assert _ops(meta) - _ops(real) == meta_only
    assert _ops(real) - _ops(meta) == real_only
    assert meta_only <= set(STATIC_ONLY) and real_only <= set(DYGRAPH_ONLY)
    # the NPU's gradient accumulations: counted from dygraph fan-in in real mode, from
    # append_backward's add_n in meta mode; two derivations, one answer
    acc = [sum(1 for c in t.calls if CPU_ACCUMULATE in c.cpu_ops) for t in (real, meta)]
    assert acc[0] == acc[1]


def test_buffers_and_set_value_are_noted():
    meta = trace_paddle(MODELS / "paddle_buffers.py", mode="meta")
    notes = "\n".join(meta.notes)
    assert "meta mode: 2 register_buffer call(s)" in notes
    assert "meta mode: 2 set_value call(s) were shape-checked and not applied" in notes
    # the buffer is read by the step: the positional table's slice and add are there
    pos = [c for c in meta.calls if c.module == "pos" and c.phase == "forward"]
    assert [c.op for c in pos] == ["slice", "add"]
    assert pos[0].inputs[0].shape == (64, 16)


def test_db_loss_value_reads_are_computed():
    meta = trace_paddle(MODELS / "paddle_db_loss.py", mode="meta")
    note = next(n for n in meta.notes if "computed on CPU" in n)
    assert "int(Tensor) at paddle_db_loss.py:32" in note
    assert not any("placeholder" in n for n in meta.notes)
    # the hardest-negatives branch ran: sort (argsort) and a slice of the computed length
    ops = Counter(c.op for c in meta.calls)
    assert ops["argsort"] == 1 and ops["slice"] == 1
    sl = next(c for c in meta.calls if c.op == "slice")
    assert 0 < sl.outputs[0].shape[0] < sl.inputs[0].shape[0]


def test_a_value_read_of_model_output_gets_a_placeholder(tmp_path):
    path = tmp_path / "reads_output.py"
    path.write_text(textwrap.dedent('''
        import paddle
        import paddle.nn as nn


        def build():
            model = nn.Linear(8, 4)
            x = paddle.randn([16, 8])
            opt = paddle.optimizer.SGD(parameters=model.parameters())

            def step():
                out = model(x)
                k = int((out > 0).astype("int32").sum())      # depends on the weights
                loss = out.reshape([-1]).topk(max(k, 1))[0].mean()
                loss.backward()
                opt.step()
                opt.clear_grad()

            return model, (x,), step
    '''))
    meta = trace_paddle(path, mode="meta")
    assert not meta.partial, meta.error
    note = next(n for n in meta.notes if "placeholder" in n)
    assert "1 tensor value read(s) depend on parameters" in note
    assert "int(Tensor) at reads_output.py:13" in note
    assert {"topk", "topk_grad", "sgd"} <= {c.op for c in meta.calls}


def test_set_value_with_a_wrong_shape_still_fails(tmp_path):
    path = tmp_path / "bad_set_value.py"
    path.write_text(textwrap.dedent('''
        import numpy as np
        import paddle.nn as nn


        def build():
            model = nn.Linear(8, 4)
            model.weight.set_value(np.zeros([4, 8], dtype="float32"))
            return model, ()
    '''))
    from analyzer.errors import ModelError

    with pytest.raises(ModelError, match=r"set_value: the shape \[4, 8\]"):
        trace_paddle(path, mode="meta")
