"""A 70B-class decoder config for the meta-mode benchmark: 80 layers, hidden 8192, 64 heads
with grouped-query attention (8 KV heads), SwiGLU 28672, one AdamW step (~6.9e10
parameters: 276 GB of float32 weights). Meta mode only."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from torch_decoder_7b import DecoderConfig, build_decoder  # noqa: E402


def build():
    return build_decoder(DecoderConfig(hidden=8192, layers=80, heads=64, kv_heads=8,
                                       ffn=28672, vocab=32000, seq=128, batch=1))
