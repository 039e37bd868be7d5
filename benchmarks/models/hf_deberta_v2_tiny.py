"""transformers' DebertaV2ForSequenceClassification from a tiny config (no weights
downloaded): disentangled attention with relative positions gathered by index, log
buckets, enhanced mask decoder; one AdamW step. A trace-completeness model
(benchmarks/torch_profiler_recall.py)."""
import torch
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification


def build():
    torch.manual_seed(0)
    cfg = DebertaV2Config(vocab_size=256, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=4, intermediate_size=64,
                          max_position_embeddings=64, relative_attention=True,
                          position_buckets=8, pos_att_type=["p2c", "c2p"], num_labels=3)
    model = DebertaV2ForSequenceClassification(cfg)
    model.train()
    inputs = {"input_ids": torch.randint(0, cfg.vocab_size, (2, 16)),
              "labels": torch.tensor([0, 2])}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
