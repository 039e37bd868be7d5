"""A bidirectional two-layer paddle.nn.GRU sequence tagger over padded batches
(sequence_length given), with clipping by norm and an exponential LR decay, the shape of
PaddleNLP's lexical-analysis recipe. A trace-completeness model
(benchmarks/paddle_kernel_log.py)."""
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class Tagger(nn.Layer):
    def __init__(self, vocab=50, d=16, tags=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.gru = nn.GRU(d, d, num_layers=2, direction="bidirect")
        self.fc = nn.Linear(2 * d, tags)

    def forward(self, ids, lengths):
        h, _ = self.gru(self.emb(ids), sequence_length=lengths)
        return self.fc(h)


def build():
    paddle.seed(0)
    model = Tagger()
    model.train()
    ids = paddle.randint(1, 50, [2, 10])
    lengths = paddle.to_tensor([10, 7], dtype="int64")
    tags = paddle.randint(0, 5, [2, 10])
    sched = paddle.optimizer.lr.ExponentialDecay(0.01, gamma=0.9)
    opt = paddle.optimizer.SGD(sched, parameters=model.parameters(),
                               grad_clip=nn.ClipGradByNorm(1.0))

    def step():
        logits = model(ids, lengths)
        mask = paddle.arange(10).unsqueeze(0) < lengths.unsqueeze(1)
        loss = F.cross_entropy(logits, tags.unsqueeze(-1), reduction="none").squeeze(-1)
        loss = (loss * mask.astype("float32")).sum() / mask.astype("float32").sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()

    return model, (ids, lengths), step
