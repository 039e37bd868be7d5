"""The bundled Paddle examples trace in both modes and agree (full models: slow)."""
from __future__ import annotations

from pathlib import Path

import pytest

import paddle  # installed by scripts/setup.sh

from analyzer.trace.paddle.meta import DYGRAPH_ONLY, STATIC_ONLY, dygraph_equivalent  # noqa: E402
from analyzer.trace.paddle.real import CPU_ACCUMULATE  # noqa: E402
from analyzer.trace.paddle.tracer import trace_paddle  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# example -> (kernels the real step must launch, the optimizer kernel,
#             differences meta vs real explained in analyzer.trace.paddle.meta)
CASES = {
    "paddle_resnet50.py": (
        {"conv2d", "conv2d_grad", "batch_norm", "batch_norm_grad", "pool2d", "pool2d_grad",
         "relu_grad", "matmul_grad", "cross_entropy_with_softmax",
         "cross_entropy_with_softmax_grad"},
        "momentum",
        {"mean", "mean_grad"},
        {"not_equal", "cast", "multiply", "mean_all", "mean_all_grad"}),
    "paddle_mobilenetv3.py": (
        {"conv2d", "depthwise_conv2d", "depthwise_conv2d_grad", "batch_norm_grad",
         "hardswish", "hardswish_grad", "hardsigmoid_grad", "dropout", "dropout_grad"},
        "adam",
        {"mean", "mean_grad"}, {"not_equal", "cast", "mean_all", "mean_all_grad"}),
    "paddle_crnn.py": (
        {"conv2d_grad", "batch_norm_grad", "pool2d_grad", "rnn", "rnn_grad", "warpctc",
         "warpctc_grad", "transpose_grad"},
        "adam",
        set(), set()),
}


@pytest.fixture(scope="module")
def traces():
    out = {}
    for name in CASES:
        path = EXAMPLES / name
        out[name] = (trace_paddle(path, mode="real"), trace_paddle(path, mode="meta"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_example_real_trace(traces, name):
    real, _ = traces[name]
    must, optimizer, _, _ = CASES[name]
    ops = {c.op for c in real.calls}
    assert not real.partial, real.error
    assert must <= ops, sorted(must - ops)
    opt_calls = [c for c in real.calls if c.op == optimizer]
    assert opt_calls and all(c.phase == "optimizer" for c in opt_calls)
    assert f"{optimizer}_" in opt_calls[0].aliases
    for op in must | {optimizer}:
        call = next(c for c in real.calls if c.op == op)
        assert "float32" in call.dtypes, (op, call.dtypes)
    # every grad kernel of the backbone is attributed to a layer
    grads = [c for c in real.calls if c.op == "conv2d_grad"]
    assert grads and all(c.module and c.source.startswith(name + ":") for c in grads)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_example_meta_matches_real(traces, name):
    real, meta = traces[name]
    _, _, static_only, dygraph_only = CASES[name]
    assert not meta.partial, meta.error
    real_ops = {c.op for c in real.calls}
    meta_ops = {dygraph_equivalent(c.op) for c in meta.calls}
    # the op sets are equal but for the documented differences, and those are exact
    assert meta_ops - real_ops == static_only
    assert real_ops - meta_ops == dygraph_only
    assert static_only <= set(STATIC_ONLY) and dygraph_only <= set(DYGRAPH_ONLY)
    # the NPU's gradient-accumulation adds: dygraph fan-in (real) == program add_n (meta)
    acc = [sum(1 for c in t.calls if CPU_ACCUMULATE in c.cpu_ops) for t in (real, meta)]
    assert acc[0] == acc[1]
    # same layers issue the same forward kernels (scalar -> tensor `full` helpers follow
    # each mode's own Python branch and are left out)
    skip = set(STATIC_ONLY) | set(DYGRAPH_ONLY) | {"full"}

    def per_layer(trace):
        return {(c.module, dygraph_equivalent(c.op)) for c in trace.calls
                if c.phase == "forward" and c.module and dygraph_equivalent(c.op) not in skip}
    assert per_layer(meta) == per_layer(real)
