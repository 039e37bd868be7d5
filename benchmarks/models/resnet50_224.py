"""A model whose real CPU training step takes more than 10 s here: ResNet-50 (the bundled
example's network) at batch 16, 224x224, one SGD step. `make_build(batch)` gives the same
model at another batch (benchmarks/models/resnet50_224_b64.py: a step of about a minute)."""
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from torch_resnet50 import ResNet50  # noqa: E402


def make_build(batch: int):
    def build():
        torch.manual_seed(0)
        model = ResNet50(num_classes=1000)
        images = torch.randn(batch, 3, 224, 224)
        labels = torch.randint(0, 1000, (batch,))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            opt.step()
            return loss

        return model, (images,), step

    return build


build = make_build(16)
