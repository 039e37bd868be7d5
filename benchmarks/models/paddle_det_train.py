"""A PP-OCR-det-like paddle training script for benchmarks/scan_cost.py: `tools/train.py`
style (argparse `-c CONFIG -o KEY=VALUE`), a MobileNetV3-style depthwise backbone kept at
1/2 resolution of a 960x960 batch and a DB-style probability head, trained with BCE.

Its plain step peaks above 2 GiB of RSS (activations of 4 x 32 x 480 x 480 float32 are
118 MB each) while its compute stays small (depthwise and 1x1 convs), so it measures what
a scan adds to a memory-heavy step without taking minutes on 2 cores.

    python benchmarks/models/paddle_det_train.py -c det.yml -o Train.batch_size=4 --iters 2
"""
import argparse

import paddle
from paddle import nn


class Block(nn.Layer):
    def __init__(self, ch):
        super().__init__()
        self.dw = nn.Conv2D(ch, ch, 3, padding=1, groups=ch, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(ch)
        self.act1 = nn.Hardswish()
        self.pw = nn.Conv2D(ch, ch, 1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(ch)
        self.act2 = nn.ReLU()

    def forward(self, x):
        return x + self.act2(self.bn2(self.pw(self.act1(self.bn1(self.dw(x))))))


class DetNet(nn.Layer):
    def __init__(self, ch=32, blocks=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2D(3, ch, 3, stride=2, padding=1, bias_attr=False),
                                  nn.BatchNorm2D(ch), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(ch) for _ in range(blocks)])
        self.head = nn.Conv2D(ch, 1, 1)

    def forward(self, x):
        y = self.head(self.blocks(self.stem(x)))
        return nn.functional.interpolate(y, scale_factor=2, mode="nearest")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", required=True)
    parser.add_argument("-o", "--opt", action="append", default=[])
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    opts = dict(o.split("=", 1) for o in args.opt)
    batch = int(opts.get("Train.batch_size", 4))
    size = int(opts.get("Train.image_size", 960))
    paddle.seed(0)
    model = DetNet()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    for _ in range(args.iters):
        img = paddle.randn([batch, 3, size, size])
        gt = (paddle.rand([batch, 1, size, size]) > 0.5).astype("float32")
        loss = nn.functional.binary_cross_entropy_with_logits(model(img), gt)
        loss.backward()
        opt.step()
        opt.clear_grad()


if __name__ == "__main__":
    main()
