"""transformers' BertForMaskedLM from a tiny config (no weights downloaded): token type
and position embeddings, padding mask, GELU, tied MLM head, -100 ignored labels; one AdamW
step. A trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import BertConfig, BertForMaskedLM


def build():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=64, attn_implementation="sdpa")
    model = BertForMaskedLM(cfg)
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 12:] = 0
    labels = torch.full((2, 16), -100)
    labels[:, 3:6] = ids[:, 3:6]
    inputs = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
