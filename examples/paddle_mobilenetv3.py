"""MobileNetV3-Small image classifier, one training step with Adam (opscan example).

`paddle.vision.models.mobilenet_v3_small` unchanged (depthwise convolutions,
squeeze-and-excitation, hardswish/hardsigmoid, dropout) on a small batch of 64x64
images so one CPU step stays well under a second.

    opscan examples/paddle_mobilenetv3.py --framework paddle
"""
import paddle
import paddle.nn as nn

BATCH, SIZE, CLASSES = 2, 64, 10


def build(batch: int = BATCH, size: int = SIZE, classes: int = CLASSES):
    paddle.seed(0)
    model = paddle.vision.models.mobilenet_v3_small(num_classes=classes)
    model.train()
    images = paddle.randn([batch, 3, size, size], dtype="float32")
    labels = paddle.randint(0, classes, [batch, 1], dtype="int64")
    loss_fn = nn.CrossEntropyLoss()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())

    def step():
        logits = model(images)
        loss = loss_fn(logits, labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, (images,), step
