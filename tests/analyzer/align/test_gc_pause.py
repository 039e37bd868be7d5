"""The collector is paused for a dumped step and resumed at its end (also when the step
failed), and a collector the user disabled stays disabled."""
from __future__ import annotations

import gc

import pytest


def _recorders():
    import paddle
    import torch

    from analyzer.align.hooks_paddle import PaddleRecorder
    from analyzer.align.hooks_torch import TorchRecorder
    return [(TorchRecorder, lambda: torch.nn.Sequential(torch.nn.Linear(3, 2)), lambda m: m(torch.ones(1, 3)).sum().backward()),
            (PaddleRecorder, lambda: paddle.nn.Sequential(paddle.nn.Linear(3, 2)), lambda m: m(paddle.ones([1, 3])).sum().backward())]


@pytest.mark.parametrize("i", [0, 1], ids=["torch", "paddle"])
def test_collector_paused_during_the_step_only(i):
    cls, build, step = _recorders()[i]
    model = build()
    rec = cls(model).install()
    assert gc.isenabled()
    try:
        rec.begin_step(0)
        assert not gc.isenabled()
        step(model)
        d = rec.end_step()
        assert gc.isenabled()
        assert any(".backward." in k for k in d.data) and d.data["Module.0.Linear.forward.0"]["output"][0]["Norm"] > 0
        rec.begin_step(1)  # a step that fails: end_step still runs (the runner's except) ...
        rec.end_step()
        assert gc.isenabled()
        rec.begin_step(2)  # ... or the recorder is removed
        rec.remove()
        assert gc.isenabled()
        gc.disable()  # the user's choice survives a step
        rec.install().begin_step(3)
        rec.end_step()
        assert not gc.isenabled()
    finally:
        gc.enable()
        rec.remove()
