"""transformers' MobileNetV2ForImageClassification from a small config (no weights
downloaded): depthwise convolutions, ReLU6, BatchNorm in training mode (running stats),
TF-style padding; 32x32 images, one SGD-momentum step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import MobileNetV2Config, MobileNetV2ForImageClassification


def build():
    torch.manual_seed(0)
    cfg = MobileNetV2Config(image_size=32, depth_multiplier=0.35, num_labels=10)
    model = MobileNetV2ForImageClassification(cfg)
    model.train()
    inputs = {"pixel_values": torch.randn(2, 3, 32, 32), "labels": torch.tensor([1, 7])}
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
