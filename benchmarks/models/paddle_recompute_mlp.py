"""A Paddle MLP whose hidden blocks run under activation recomputation
(`paddle.distributed.fleet.utils.recompute`, a PyLayer that reruns the block's forward in
backward), as PaddleNLP's `recompute=True` recipes do; AdamW with global-norm clipping.
A trace-completeness model (benchmarks/paddle_kernel_log.py)."""
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle.distributed.fleet.utils import recompute


class Block(nn.Layer):
    def __init__(self, d=16):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return x + F.gelu(self.fc(self.norm(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.blocks = nn.LayerList([Block(), Block()])
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = recompute(b, x)
        return self.head(x)


def build():
    paddle.seed(0)
    model = Net()
    x = paddle.randn([2, 8])
    y = paddle.randint(0, 4, [2, 1])
    opt = paddle.optimizer.AdamW(parameters=model.parameters(),
                                 grad_clip=nn.ClipGradByGlobalNorm(1.0))

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return model, (x,), step
