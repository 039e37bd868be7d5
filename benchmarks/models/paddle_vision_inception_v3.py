"""paddle.vision.models.inception_v3 (no weights), 96x96 images, batch 2, cross-entropy,
one Momentum step. A trace-completeness model (benchmarks/paddle_kernel_log.py)."""
import paddle
import paddle.nn.functional as F


def build():
    paddle.seed(0)
    model = paddle.vision.models.inception_v3(num_classes=10)
    model.train()
    x = paddle.randn([2, 3, 96, 96])
    y = paddle.randint(0, 10, [2, 1])
    opt = paddle.optimizer.Momentum(parameters=model.parameters())

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return model, (x,), step
