"""Issue 16: ops a training script runs once before its first step (weight
initialisation, a precomputed positional table) are the "setup" phase, step 0, in both
tracers; they are not counted as the first step's forward. An argparse script stands in
for PaddleOCR's tools/train.py."""
from __future__ import annotations

from collections import Counter
from pathlib import Path


from analyzer.trace import trace

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "models"
ARGV = ["-c", "configs/rec.yml", "-o", "Global.epoch_num=1"]


def _per_step(tr, step):
    return Counter((c.op, c.phase) for c in tr.calls if c.step == step)


def test_torch_script_setup_phase():
    import torch  # noqa: F401 - installed by scripts/setup.sh
    from tests.analyzer import npu_adapted

    tr = trace(FIX / "script_setup_torch.py", framework="torch", steps=2, script_argv=ARGV,
               adapted=npu_adapted.adapted_ops())
    assert not tr.partial, tr.error
    setup = Counter(c.op for c in tr.calls if c.phase == "setup")
    for op in ("aten::normal_", "aten::uniform_", "aten::arange", "aten::exp", "aten::sin",
               "aten::cos"):
        assert setup[op] >= 1, (op, setup)
    assert {c.step for c in tr.calls if c.phase == "setup"} == {0}
    # nothing of the __init__ leaks into the steps: their forward passes are identical
    fwd1 = {k: n for k, n in _per_step(tr, 1).items() if k[1] == "forward"}
    fwd2 = {k: n for k, n in _per_step(tr, 2).items() if k[1] == "forward"}
    assert fwd1 == fwd2 and fwd1
    assert ("aten::sin", "forward") not in fwd1


def test_paddle_script_setup_phase():
    import paddle  # noqa: F401 - installed by scripts/setup.sh
    tr = trace(FIX / "script_setup_paddle.py", framework="paddle", steps=2, script_argv=ARGV)
    assert not tr.partial, tr.error
    setup = Counter(c.op for c in tr.calls if c.phase == "setup")
    for op in ("gaussian", "uniform", "arange_tensor", "exp", "sin", "cos", "concat"):
        assert setup[op] >= 1, (op, setup)
    assert {c.step for c in tr.calls if c.phase == "setup"} == {0}
    fwd1 = {k: n for k, n in _per_step(tr, 1).items() if k[1] == "forward"}
    fwd2 = {k: n for k, n in _per_step(tr, 2).items() if k[1] == "forward"}
    assert fwd1 == fwd2 and fwd1
    assert ("gaussian", "forward") not in fwd1 and ("sin", "forward") not in fwd1


def test_build_mode_has_no_setup_phase():
    """build() runs before tracing starts: the traced step is all step."""
    import torch  # noqa: F401 - installed by scripts/setup.sh
    from tests.analyzer import npu_adapted

    tr = trace(FIX / "tiny_mlp.py", framework="torch", adapted=npu_adapted.adapted_ops())
    assert tr.calls and not any(c.phase == "setup" for c in tr.calls)
