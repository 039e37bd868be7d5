"""A tiny Paddle encoder for opscan align tests: Conv1D stem, attention with an explicit
softmax, LayerNorm, GELU MLP, dropout; one SGD step."""
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class Block(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = paddle.split(self.qkv(self.norm1(x)), 3, axis=-1)
        q, k, v = [paddle.transpose(paddle.reshape(y, [b, t, h, d // h]), [0, 2, 1, 3]) for y in (q, k, v)]
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / (d // h) ** 0.5, axis=-1)
        att = self.drop(att)
        a = paddle.reshape(paddle.transpose(paddle.matmul(att, v), [0, 2, 1, 3]), [b, t, d])
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyEncoder(nn.Layer):
    def __init__(self, cin=8, dim=32, heads=2, depth=2, classes=5):
        super().__init__()
        self.stem = nn.Conv1D(cin, dim, 3, padding=1)
        self.blocks = nn.LayerList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = paddle.transpose(self.stem(x), [0, 2, 1])
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(axis=1))


def build():
    paddle.seed(0)
    model = TinyEncoder()
    x = paddle.randn([2, 8, 12])
    labels = paddle.to_tensor([1, 3])
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())

    def step():
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, (x,), step
