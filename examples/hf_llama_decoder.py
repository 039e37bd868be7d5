"""A real Hugging Face decoder: transformers' LlamaForCausalLM built from a small config (no
weights downloaded): RMSNorm, rotary embeddings, grouped-query SDPA attention, SwiGLU MLP,
the library's own causal-LM loss; one AdamW step. Needs the `hf` extra (transformers)."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def build():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=176,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=128, attn_implementation="sdpa")
    model = LlamaForCausalLM(cfg)
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (2, 32))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(input_ids=inputs, labels=inputs).loss
        loss.backward()
        opt.step()
        return loss

    return model, ids, step
