"""paddle.nn.Transformer (encoder-decoder, 2+2 layers, d_model 32) with token embeddings,
a causal target mask and label smoothing, trained the way PaddleNLP recipes do: AdamW with
gradient clipping by global norm and a linear-warmup LR schedule. A trace-completeness
model (benchmarks/paddle_kernel_log.py)."""
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

VOCAB = 64


class Seq2Seq(nn.Layer):
    def __init__(self, d=32):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, d)
        self.tgt_emb = nn.Embedding(VOCAB, d)
        self.core = nn.Transformer(d, 4, 2, 2, 64, dropout=0.1)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, src, tgt):
        mask = self.core.generate_square_subsequent_mask(tgt.shape[1])
        h = self.core(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask)
        return self.out(h)


def build():
    paddle.seed(0)
    model = Seq2Seq()
    model.train()
    src = paddle.randint(0, VOCAB, [2, 12])
    tgt = paddle.randint(0, VOCAB, [2, 8])
    label = paddle.randint(0, VOCAB, [2, 8])
    sched = paddle.optimizer.lr.LinearWarmup(1e-3, warmup_steps=10, start_lr=0.0,
                                             end_lr=1e-3)
    opt = paddle.optimizer.AdamW(sched, parameters=model.parameters(),
                                 grad_clip=nn.ClipGradByGlobalNorm(1.0))

    def step():
        logits = model(src, tgt)
        soft = F.label_smooth(F.one_hot(label, VOCAB), epsilon=0.1)
        loss = F.cross_entropy(logits, soft, soft_label=True)
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()

    return model, (src, tgt), step
