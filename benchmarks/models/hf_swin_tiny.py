"""transformers' SwinForImageClassification from a tiny config (no weights downloaded):
shifted windows (torch.roll, padding, window partition), relative position bias gathered
by index, patch merging; 32x32 images, one AdamW step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import SwinConfig, SwinForImageClassification


def build():
    torch.manual_seed(0)
    cfg = SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[2, 2],
                     num_heads=[2, 4], window_size=4, num_labels=10)
    model = SwinForImageClassification(cfg)
    model.train()
    inputs = {"pixel_values": torch.randn(2, 3, 32, 32), "labels": torch.tensor([1, 7])}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
