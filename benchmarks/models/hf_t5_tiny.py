"""transformers' T5ForConditionalGeneration from a tiny config (no weights downloaded):
encoder-decoder, relative position buckets, T5 RMS norm, gated-GELU FF, shifted decoder
inputs built from the labels; one AdamW step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import T5Config, T5ForConditionalGeneration


def build():
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=256, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                   num_decoder_layers=2, num_heads=4, feed_forward_proj="gated-gelu",
                   decoder_start_token_id=0, pad_token_id=0)
    model = T5ForConditionalGeneration(cfg)
    model.train()
    inputs = {"input_ids": torch.randint(1, cfg.vocab_size, (2, 16)),
              "labels": torch.randint(1, cfg.vocab_size, (2, 8))}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
