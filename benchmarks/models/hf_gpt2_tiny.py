"""transformers' GPT2LMHeadModel from a tiny config (no weights downloaded): learned
positions, Conv1D projections, tied LM head, the library's causal-LM loss; one AdamW step.
A trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def build():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=256, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                     attn_implementation="sdpa")
    model = GPT2LMHeadModel(cfg)
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (2, 16))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(input_ids=inputs, labels=inputs).loss
        loss.backward()
        opt.step()
        return loss

    return model, ids, step
