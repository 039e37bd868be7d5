"""Paddle tracer: kernel names, real vs meta, profiler recall, errors (small models, fast)."""
from __future__ import annotations

import json
import textwrap

import pytest

import paddle  # installed by scripts/setup.sh

from analyzer.trace.entry import load_entry  # noqa: E402
from analyzer.errors import ModelError  # noqa: E402
from analyzer.trace.paddle.meta import dygraph_equivalent  # noqa: E402
from analyzer.trace.paddle.names import aliases_for, kernel_for, registered_kernels  # noqa: E402
from analyzer.trace.paddle.tracer import trace_paddle  # noqa: E402
from opdb.build import default_sources_dir  # noqa: E402

REPO_SOURCES = default_sources_dir()

TINY = '''
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class Tiny(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 4, 3)
        self.bn = nn.BatchNorm2D(4)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.fc(paddle.flatten(x, 1))


def build():
    paddle.seed(0)
    model = Tiny()
    x = paddle.randn([2, 3, 8, 8])
    target = paddle.randn([2, 5])
    opt = paddle.optimizer.{opt}(parameters=model.parameters())

    def step():
        loss = F.mse_loss(model(x), target)   # LOSS LINE
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, (x,), step
'''


def _model(tmp_path, opt="Adam", body=TINY):
    path = tmp_path / "tiny.py"
    path.write_text(textwrap.dedent(body).replace("{opt}", opt))
    return path


def _line(path, text):
    """`tiny.py:N` for the first line of the model file containing `text`."""
    lines = path.read_text().splitlines()
    return f"{path.name}:{next(i for i, l in enumerate(lines, 1) if text in l)}"


def _ops(trace):
    return {c.op for c in trace.calls}


# ------------------------------------------------------------------ names

def test_kernel_names_follow_the_installed_registry():
    reg = registered_kernels()
    assert {"adam", "momentum", "conv2d_grad", "cross_entropy_with_softmax"} <= reg
    assert "adam_" not in reg
    assert kernel_for("adam_") == "adam"
    assert kernel_for("pd_op.batch_norm_") == "batch_norm"
    assert kernel_for("softmax_with_cross_entropy") == "cross_entropy_with_softmax"
    assert kernel_for("conv2d_grad") == "conv2d_grad"
    # the black list speaks fluid names: keep them as aliases
    assert aliases_for("cross_entropy_with_softmax") == ["softmax_with_cross_entropy"]
    assert aliases_for("adam", "adam_") == ["adam_"]
    assert aliases_for("matmul_grad") == ["matmul_v2_grad"]


# ------------------------------------------------------------------ real mode

def test_real_records_forward_grad_and_optimizer_kernels(tmp_path):
    path = _model(tmp_path)
    trace = trace_paddle(path)
    assert trace.framework == "paddle" and trace.mode == "real" and not trace.partial
    ops = _ops(trace)
    assert {"conv2d", "batch_norm", "relu", "matmul", "add"} <= ops
    assert {"conv2d_grad", "batch_norm_grad", "relu_grad", "matmul_grad"} <= ops
    assert "adam" in ops and "adam_" not in ops
    by_op = {}
    for c in trace.calls:
        by_op.setdefault(c.op, []).append(c)
    conv = by_op["conv2d"][0]
    assert conv.phase == "forward" and conv.module == "conv"
    assert conv.dtypes == ("float32",)
    assert [t.shape for t in conv.inputs] == [(2, 3, 8, 8), (4, 3, 3, 3)]
    assert conv.source == _line(path, "self.conv(x)")
    # the grad kernel is attributed to its forward layer and sees dout
    grad = by_op["conv2d_grad"][0]
    assert grad.phase == "backward" and grad.module == "conv"
    assert (2, 4, 6, 6) in [t.shape for t in grad.inputs]
    adam = by_op["adam"]
    assert len(adam) == 6 and all(c.phase == "optimizer" for c in adam)
    assert adam[0].aliases == ["adam_"] and adam[0].dtypes == ("float32",)
    # producer -> consumer ids: conv2d -> add (bias) -> batch_norm
    add = next(c for c in trace.calls if c.op == "add" and c.module == "conv")
    bn = by_op["batch_norm"][0]
    assert add.op == "add" and add.inputs[0].id == conv.outputs[0].id
    assert bn.inputs[0].id == add.outputs[0].id
    # the loss is computed at the LOSS LINE outside any layer
    mse = [c for c in trace.calls if c.source == _line(path, "LOSS LINE") and c.phase == "forward"]
    assert mse and all(c.module == "" for c in mse)


def test_real_two_steps_are_numbered(tmp_path):
    trace = trace_paddle(_model(tmp_path, "Momentum"), steps=2)
    steps = {c.step for c in trace.calls}
    assert steps == {1, 2}
    first = [c.op for c in trace.calls if c.step == 1 and c.phase != "optimizer"]
    second = [c.op for c in trace.calls if c.step == 2 and c.phase != "optimizer"]
    assert first == second
    assert "momentum" in {c.op for c in trace.calls if c.step == 2}


def test_real_accepts_a_built_entry(tmp_path):
    entry = load_entry(_model(tmp_path), "paddle")
    trace = trace_paddle(entry)
    assert "conv2d_grad" in _ops(trace)


def test_profiler_dump_recall(tmp_path):
    """The porting guides' "dump op" method: export the profiler's trace and list ops.

    Every kernel it saw is in our trace, every op (API) name it saw is a kernel or an
    alias there, and the trace lists nothing the profiler did not see run.
    """
    from paddle import profiler

    entry = load_entry(_model(tmp_path), "paddle")
    entry.run_step()  # warm the optimizer state so both runs see the same kernels
    out = tmp_path / "dump.json"
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                             on_trace_ready=lambda p: None)
    prof.start()
    entry.run_step()
    prof.stop()
    prof.export(str(out), format="json")
    prof.profiler = None  # one live profiler per process: let the tracer make its own
    events = json.loads(out.read_text())["traceEvents"]
    kernels, apis = set(), set()
    for e in events:
        name = e.get("name", "").rsplit("[", 1)[0]
        if e.get("cat") == "DygraphKernelLaunch":
            kernels.add(name.removesuffix(" kernel launch"))
        elif e.get("cat") == "Operator" and name.endswith(" dygraph"):
            apis.add(name.removesuffix(" dygraph"))
    trace = trace_paddle(entry)  # the same entry, its third step
    ops = _ops(trace)
    names = ops | {a for c in trace.calls for a in c.aliases}
    assert kernels, "profiler recorded no kernel launches"
    assert kernels <= ops
    assert apis <= names
    assert ops <= kernels


# ------------------------------------------------------------------ meta mode

def test_meta_matches_real_on_a_small_model(tmp_path):
    path = _model(tmp_path)
    real = trace_paddle(path, mode="real")
    meta = trace_paddle(path, mode="meta")
    assert meta.mode == "meta" and not meta.partial
    assert {dygraph_equivalent(op) for op in _ops(meta)} == _ops(real)
    conv = next(c for c in meta.calls if c.op == "conv2d")
    assert conv.module == "conv" and conv.source == _line(path, "self.conv(x)")
    assert [t.shape for t in conv.inputs] == [(2, 3, 8, 8), (4, 3, 3, 3)]
    grad = next(c for c in meta.calls if c.op == "conv2d_grad")
    assert grad.phase == "backward" and grad.module == "conv"
    adam = [c for c in meta.calls if c.op == "adam"]
    assert len(adam) == 6 and adam[0].phase == "optimizer" and "adam_" in adam[0].aliases


def test_meta_allocates_nothing(tmp_path):
    # 2 x 50000 x 50000 float32 weights = 20 GB: only a program can hold this here
    body = '''
    import paddle
    import paddle.nn as nn


    def build():
        model = nn.Sequential(nn.Linear(50000, 50000), nn.ReLU(), nn.Linear(50000, 50000))
        x = paddle.randn([4, 50000])
        opt = paddle.optimizer.SGD(parameters=model.parameters())

        def step():
            loss = model(x).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()

        return model, (x,), step
    '''
    trace = trace_paddle(_model(tmp_path, body=body), mode="meta")
    ops = _ops(trace)
    assert {"matmul", "matmul_grad", "relu_grad", "sgd"} <= ops
    w = next(c for c in trace.calls if c.op == "matmul").inputs[1]
    assert w.shape == (50000, 50000) and w.nbytes() == 10 ** 10


# ------------------------------------------------------------------ errors

def test_failing_step_gives_a_partial_trace(tmp_path):
    body = TINY.replace("        loss.backward()\n",
                        "        loss.backward()\n        raise ValueError('boom')\n")
    trace = trace_paddle(_model(tmp_path, body=body))
    assert trace.partial and "ValueError: boom" in trace.error
    assert "conv2d_grad" in _ops(trace) and "adam" not in _ops(trace)


def test_bad_inputs_raise_model_errors(tmp_path):
    with pytest.raises(ModelError, match="no such model file"):
        trace_paddle(tmp_path / "missing.py")
    with pytest.raises(ModelError, match="unknown trace mode"):
        trace_paddle(_model(tmp_path), mode="fast")
    entry = load_entry(_model(tmp_path), "paddle")
    with pytest.raises(ModelError, match="meta mode needs the model file"):
        trace_paddle(entry, mode="meta")


def test_name_tables_match_the_paddle_yaml():
    from analyzer.trace.paddle import names_data
    from analyzer.trace.paddle.names import tables_from_yaml

    yaml_dir = REPO_SOURCES / "paddle/yaml"  # committed with the repository
    op_kernel, fluid = tables_from_yaml(yaml_dir)
    assert op_kernel == names_data.OP_KERNEL
    assert {k: tuple(v) for k, v in fluid.items()} == names_data.FLUID_NAMES


def test_real_script_mode_stops_after_the_requested_steps(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent('''
        import paddle
        import paddle.nn as nn

        model = nn.Linear(4, 2)
        opt = paddle.optimizer.SGD(parameters=model.parameters())
        for i in range(5):
            loss = model(paddle.randn([3, 4])).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
    '''))
    trace = trace_paddle(script, steps=2, script_argv=[])
    assert not trace.partial
    sgd = [c for c in trace.calls if c.op == "sgd"]
    assert [c.step for c in sgd] == [1, 1, 2, 2]
    assert {"matmul", "matmul_grad", "mean_grad"} <= _ops(trace)
