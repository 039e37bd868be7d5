"""transformers' WhisperForConditionalGeneration from a tiny config (no weights
downloaded): two Conv1d + GELU on log-mel features, sinusoidal encoder positions,
encoder-decoder attention, tied decoder head; 64 feature frames, one AdamW step. A
trace-completeness model (benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import WhisperConfig, WhisperForConditionalGeneration


def build():
    torch.manual_seed(0)
    cfg = WhisperConfig(vocab_size=256, num_mel_bins=16, d_model=32, encoder_layers=2,
                        decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_source_positions=32, max_target_positions=32,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        decoder_start_token_id=1, attn_implementation="sdpa")
    model = WhisperForConditionalGeneration(cfg)
    model.train()
    inputs = {"input_features": torch.randn(2, 16, 64),
              "labels": torch.randint(3, cfg.vocab_size, (2, 8))}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
