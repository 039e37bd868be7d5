"""transformers' CLIPModel from a tiny config (no weights downloaded): a text tower
(causal mask, EOS pooling by argmax) and a vision tower (patch conv, class token, pre-norm),
normalised projections, a learned logit scale and the symmetric contrastive loss; one
AdamW step. A trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import CLIPConfig, CLIPModel


def build():
    torch.manual_seed(0)
    cfg = CLIPConfig(
        text_config=dict(vocab_size=128, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4,
                         max_position_embeddings=16, eos_token_id=2),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, image_size=32, patch_size=8),
        projection_dim=16)
    model = CLIPModel(cfg)
    model.train()
    ids = torch.randint(3, 128, (2, 12))
    ids[:, -1] = 2
    inputs = {"input_ids": ids, "pixel_values": torch.randn(2, 3, 32, 32),
              "return_loss": True}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
