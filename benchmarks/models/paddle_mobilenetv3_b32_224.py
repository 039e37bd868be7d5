"""`paddle.vision.models.mobilenet_v3_small` unchanged at its real input size, batch 32 of
224x224 images, one Adam step (a CPU step of about a second here): the bundled example
(examples/paddle_mobilenetv3.py) at 2x64x64 has the same module calls on tensors 12x
(resolution) x 16 (batch) smaller."""
import paddle
import paddle.nn as nn

BATCH, SIZE, CLASSES = 32, 224, 1000


def build():
    paddle.seed(0)
    model = paddle.vision.models.mobilenet_v3_small(num_classes=CLASSES)
    model.train()
    images = paddle.randn([BATCH, 3, SIZE, SIZE], dtype="float32")
    labels = paddle.randint(0, CLASSES, [BATCH, 1], dtype="int64")
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
