"""transformers' Wav2Vec2ForCTC from a tiny config (no weights downloaded): conv feature
encoder with group norm, positional conv embedding (weight norm), SpecAugment-style time
masking, the CTC loss; one AdamW step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC


def build():
    torch.manual_seed(0)
    cfg = Wav2Vec2Config(vocab_size=16, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=4, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                         num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4,
                         mask_time_prob=0.0, pad_token_id=0, ctc_loss_reduction="mean")
    model = Wav2Vec2ForCTC(cfg)
    model.train()
    inputs = {"input_values": torch.randn(2, 800),
              "labels": torch.randint(1, cfg.vocab_size, (2, 6))}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
