"""BERT-base at its real width on a real sequence length: transformers'
BertForSequenceClassification built from `BertConfig()` defaults (hidden 768, 12 heads,
intermediate 3072, GELU, LayerNorm, SDPA attention), sequence 128, batch 4, one AdamW step;
2 of the 12 encoder layers, so one CPU step stays about a second: every module's tensors
have BERT-base's real sizes (hidden states 4x128x768, the MLP's 4x128x3072, attention
probabilities 4x12x128x128), which is what the dump's statistics pay for; the other 10
layers repeat the same calls. Needs the `hf` extra (transformers). No weights downloaded."""
import torch
from transformers import BertConfig, BertForSequenceClassification

BATCH, SEQ, LAYERS = 4, 128, 2


def build():
    torch.manual_seed(0)
    cfg = BertConfig(num_hidden_layers=LAYERS, num_labels=2, attn_implementation="sdpa")
    model = BertForSequenceClassification(cfg)
    model.train()
    inputs = {"input_ids": torch.randint(0, cfg.vocab_size, (BATCH, SEQ)),
              "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.long),
              "labels": torch.randint(0, 2, (BATCH,))}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(model, inputs):
        opt.zero_grad()
        loss = model(**inputs).loss
        loss.backward()
        opt.step()
        return loss

    return {"model": model, "inputs": inputs, "step": step}
