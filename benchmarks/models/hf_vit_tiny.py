"""transformers' ViTForImageClassification from a tiny config (no weights downloaded):
patch-embedding conv, CLS token, learned positions, pre-norm encoder; 32x32 images, one
SGD-momentum step. A trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import ViTConfig, ViTForImageClassification


def build():
    torch.manual_seed(0)
    cfg = ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=64, num_labels=10,
                    attn_implementation="sdpa")
    model = ViTForImageClassification(cfg)
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
