"""The GPT-2 of hf_gpt2_tiny.py in a fuller training loop: gradient checkpointing
(activations recomputed in backward), gradient clipping (`clip_grad_norm_`), a warmup LR
schedule and an EMA copy of the weights updated under `torch.no_grad()`. A
trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def build():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=256, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                     attn_implementation="sdpa")
    model = GPT2LMHeadModel(cfg)
    model.gradient_checkpointing_enable()
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (2, 16))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    ema = []  # made in the first step, on the device the model was moved to

    def step(model, inputs):
        opt.zero_grad()
        loss = model(input_ids=inputs, labels=inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        with torch.no_grad():
            if not ema:
                ema.extend(p.detach().clone() for p in model.parameters())
            for e, p in zip(ema, model.parameters()):
                e.mul_(0.99).add_(p, alpha=0.01)
        return loss

    return model, ids, step
