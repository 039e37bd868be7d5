"""Issue 15: side B on the NPU (torch_npu / PaddleCustomDevice). Needs the hardware."""
from __future__ import annotations

import os

import pytest

from analyzer.align.compare import compare_dumps

from .conftest import MODELS

pytestmark = pytest.mark.npu


@pytest.mark.skipif(not os.environ.get("ASCEND_HOME_PATH"), reason="needs an Ascend NPU with CANN")
def test_npu_bf16_side_against_cpu(align_dumps):
    model = MODELS / "torch_tiny_vit.py"
    a = align_dumps("torch-tiny-mod-a", model, "torch", save_inputs=True)
    ref = align_dumps("torch-tiny-mod-ref", model, "torch", inputs_from=str(a), reference="fp64")
    floor = align_dumps("torch-tiny-mod-bf16", model, "torch", inputs_from=str(a), amp="bf16")
    npu = align_dumps("torch-tiny-npu-bf16", model, "torch", inputs_from=str(a), amp="bf16", device="npu")
    rep = compare_dumps(a, npu, reference=str(ref), floors=(str(floor),))
    assert "side B floor from --floor" in rep.floor_source
    assert rep.counts["calls"] > 0
