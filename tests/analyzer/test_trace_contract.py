"""analyzer.trace: one tracer contract for both frameworks, one partial-trace finisher, and
no side-effect import needed before tracing torch."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.errors import ModelError
from analyzer.model import OpCall, Trace
from analyzer.trace import trace
from analyzer.trace.partial import finish

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "models"


def test_one_contract_for_both_frameworks():
    t = trace(FIX / "tiny_mlp.py", framework="torch", adapted={"aten::addmm"})
    assert t.framework == "torch" and t.mode == "real" and t.calls
    assert any(c.op == "aten::addmm" for c in t.calls)
    p = trace(FIX / "script_paddle_train.py", framework="paddle", script_argv=[])
    assert p.framework == "paddle" and {"matmul", "sgd"} <= {c.op for c in p.calls}


def test_contract_rejects_unknown_framework_and_mode():
    with pytest.raises(ModelError, match="unknown framework 'jax'"):
        trace(FIX / "tiny_mlp.py", framework="jax")
    with pytest.raises(ModelError, match="unknown mode 'fast'"):
        trace(FIX / "tiny_mlp.py", framework="torch", mode="fast")


def test_finisher_marks_partial_or_raises():
    err = ModelError("m.py: step 2 raised ValueError: boom\n  File ...")
    empty = Trace(framework="torch", mode="real", model="m.py", steps=2)
    with pytest.raises(ModelError):
        finish(empty, err)
    t = Trace(framework="torch", mode="real", model="m.py", steps=2,
              calls=[OpCall(0, "aten::add.Tensor", "aten::add.Tensor", "forward", [], [])])
    assert finish(t, None) is t and not t.partial
    finish(t, err)
    assert t.partial and t.error.startswith("m.py: step 2 raised ValueError: boom")  # one line
    assert str(err) in t.notes


def test_torch_backward_before_the_first_scan_is_fine():
    """The emulated device may be registered after torch already ran a backward:
    scan() needs no side-effect import first."""
    code = ("import torch\n"
            "x = torch.ones(2, requires_grad=True); (x * 2).sum().backward()\n"
            "from analyzer.trace import trace\n"
            f"t = trace({str(FIX / 'tiny_mlp.py')!r}, framework='torch')\n"
            "print(sorted({c.phase for c in t.calls}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert "'backward'" in out.stdout and "'optimizer'" in out.stdout


@pytest.mark.parametrize("framework,model", [("torch", "eval_style_step.py"),
                                             ("paddle", "eval_style_paddle.py")])
@pytest.mark.parametrize("mode", ["real", "meta"])
def test_eval_style_step_is_traced_in_both_modes(framework, model, mode):
    t = trace(FIX / model, framework=framework, mode=mode)
    assert not t.partial, t.error
    assert {"forward", "backward", "optimizer"} <= {c.phase for c in t.calls}


def test_backward_kernels_from_op_plugin_derivatives():
    from analyzer.trace.torch.derivatives import _applies, backward_kernels, backward_names

    assert backward_names("aten::matmul", "2.13.0") == ("aten::matmul_backward",)
    assert backward_names("npu::npu_lstm", "2.13.0") == ("npu::npu_lstm_backward",)
    # formulas calling torch's own autograd helpers name no kernel
    assert backward_names("aten::linalg_cholesky", "2.13.0") == ()
    assert "aten::kl_div" in backward_kernels("2.13.0")
    allv = ["v2.1", "v2.2", "v2.13", "v2.15"]
    assert _applies("all_version", "v2.13", allv) and _applies(["v2.1", "newest"], "v2.13", allv)
    assert not _applies("v2.1", "v2.13", allv) and _applies(["v2.2", "v2.13"], "v2.13", allv)
    assert not _applies(["v2.1", "v2.2"], "v2.13", allv)
