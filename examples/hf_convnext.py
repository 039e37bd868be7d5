"""A real CNN from a model library: transformers' ConvNextForImageClassification built from
a small config (no weights): depthwise 7x7 convolutions, channels-last LayerNorm, GELU,
layer scale, the library's own classification loss; one AdamW step. Needs the `hf` extra.

(timm, the other common CNN library, cannot be used here: every timm 1.x imports
torchvision at `import timm`, and PyPI's torchvision does not import beside this torch.)"""
import torch
from transformers import ConvNextConfig, ConvNextForImageClassification


def build():
    torch.manual_seed(0)
    cfg = ConvNextConfig(num_channels=3, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 2, 1],
                         num_labels=10, image_size=64)
    model = ConvNextForImageClassification(cfg)
    model.train()
    inputs = {"pixel_values": torch.randn(2, 3, 64, 64), "labels": torch.tensor([1, 7])}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
