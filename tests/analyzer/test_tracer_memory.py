"""Issue 16: the tracers keep no tensor alive longer than the framework would (the paddle
recorder's id map used to hold every traced tensor, 2.7x the plain step's peak RSS on
PP-OCRv4). The scripts check at every step's end that earlier steps' tensors are freed,
and raise otherwise, which turns the trace partial. Peak RSS and wall time against the
plain step are measured by benchmarks/scan_cost.py (docs/benchmarks.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.trace import trace

FIX = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def test_paddle_tracer_keeps_no_tensor_alive():
    import paddle  # noqa: F401 - installed by scripts/setup.sh
    tr = trace(FIX / "script_tensor_lifetime_paddle.py", framework="paddle", steps=3,
               script_argv=["-c", "x.yml"])
    assert not tr.partial, tr.error
    assert tr.steps == 3


def test_torch_tracer_keeps_no_tensor_alive():
    import torch  # noqa: F401 - installed by scripts/setup.sh
    from tests.analyzer import npu_adapted

    tr = trace(FIX / "script_tensor_lifetime_torch.py", framework="torch", steps=3,
               script_argv=["-c", "x.yml"], adapted=npu_adapted.adapted_ops())
    assert not tr.partial, tr.error
    assert tr.steps == 3
