"""A LLaMA-7B-class decoder (32 layers, hidden 4096, SwiGLU 11008, RMSNorm, RoPE), one AdamW step.

For `--mode meta` only (about 6.7e9 parameters: 27 GB in float32). `build_decoder(cfg)`
takes a smaller `DecoderConfig` for tests.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class DecoderConfig:
    vocab: int = 32000
    hidden: int = 4096
    layers: int = 32
    heads: int = 32
    kv_heads: int | None = None  # grouped-query attention when fewer than heads
    ffn: int = 11008
    seq: int = 128
    batch: int = 1


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, self.heads = cfg.hidden, cfg.heads
        self.kv_heads = cfg.kv_heads or cfg.heads
        kv = d // cfg.heads * self.kv_heads
        self.attn_norm = RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv, bias=False)
        self.v = nn.Linear(d, kv, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.mlp_norm = RMSNorm(d)
        self.gate = nn.Linear(d, cfg.ffn, bias=False)
        self.up = nn.Linear(d, cfg.ffn, bias=False)
        self.down = nn.Linear(cfg.ffn, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.attn_norm(x)
        q, k, v = (m(h).view(b, t, n, -1).transpose(1, 2) for m, n in
                   ((self.q, self.heads), (self.k, self.kv_heads), (self.v, self.kv_heads)))
        a = F.scaled_dot_product_attention(rope(q, cos, sin), rope(k, cos, sin), v,
                                           is_causal=True,
                                           enable_gqa=self.kv_heads != self.heads)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def forward(self, tokens):
        t = tokens.shape[1]
        half = self.cfg.hidden // self.cfg.heads // 2
        freqs = 1.0 / (10000 ** (torch.arange(half, device=tokens.device) / half))
        angles = torch.outer(torch.arange(t, device=tokens.device), freqs)
        cos, sin = angles.cos(), angles.sin()
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


def build_decoder(cfg):
    torch.manual_seed(0)
    model = Decoder(cfg)
    tokens = torch.randint(0, cfg.vocab, (cfg.batch, cfg.seq))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        opt.zero_grad()
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        return loss

    return model, (tokens,), step


def build():
    return build_decoder(DecoderConfig())
