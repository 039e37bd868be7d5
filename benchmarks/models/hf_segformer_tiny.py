"""transformers' SegformerForSemanticSegmentation from a tiny config (no weights
downloaded): overlapping patch embeddings, efficient (spatially reduced) attention,
Mix-FFN depthwise convs, bilinear upsampling of the decode head, per-pixel cross-entropy
with an ignore index; 32x32 images, one AdamW step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import SegformerConfig, SegformerForSemanticSegmentation


def build():
    torch.manual_seed(0)
    cfg = SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                          hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                          num_attention_heads=[1, 2], mlp_ratios=[2, 2],
                          decoder_hidden_size=32, num_labels=4)
    model = SegformerForSemanticSegmentation(cfg)
    model.train()
    labels = torch.randint(0, 4, (2, 32, 32))
    labels[:, :4] = 255
    inputs = {"pixel_values": torch.randn(2, 3, 32, 32), "labels": labels}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
