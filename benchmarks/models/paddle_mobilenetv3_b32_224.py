"""`paddle.vision.models.mobilenet_v3_small` unchanged at its real input size, batch 32 of
224x224 images, one Adam step (a CPU step of about a second here): the bundled example
(examples/paddle_mobilenetv3.py, whose build() this calls) at 2x64x64 has the same module
calls on tensors 12x (resolution) x 16 (batch) smaller."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import paddle_mobilenetv3  # noqa: E402


def build():
    return paddle_mobilenetv3.build(batch=32, size=224, classes=1000)
