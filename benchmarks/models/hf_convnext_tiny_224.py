"""ConvNeXt-tiny's widths at its real resolution: transformers' ConvNextForImageClassification
from `ConvNextConfig()` defaults (hidden sizes 96/192/384/768, 7x7 depthwise convolutions,
channels-last LayerNorm, GELU, layer scale; the config's 2 labels) at 224x224, batch 4, one AdamW
step; one block per stage instead of 3/3/9/3, so one CPU step stays about a second: every
module's tensors have ConvNeXt-tiny's real sizes (stage 1: 4x96x56x56, its MLP 4x56x56x384),
which is what the dump's statistics pay for; the other 14 blocks repeat the same calls.
Needs the `hf` extra (transformers). No weights downloaded."""
import torch
from transformers import ConvNextConfig, ConvNextForImageClassification

BATCH, SIZE = 4, 224


def build():
    torch.manual_seed(0)
    cfg = ConvNextConfig(depths=[1, 1, 1, 1])
    model = ConvNextForImageClassification(cfg)
    model.train()
    inputs = {"pixel_values": torch.randn(BATCH, 3, SIZE, SIZE),
              "labels": torch.randint(0, cfg.num_labels, (BATCH,))}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
