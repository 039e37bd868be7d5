"""Paddle traces against Paddle's own records, over more models than the tests run.

For each model: the kernels Paddle's GLOG kernel-selection log shows for one step (a
subprocess, `analyzer.trace.paddle.kernel_log`) vs the real-mode trace (call counts, the
NPU-only accumulation `add`s set aside), the accumulation count in real mode (dygraph
fan-in) vs meta mode (append_backward's add_n), and the meta-vs-real op-set difference.
Models: the bundled Paddle examples, the test models for issue 12, paddle.vision models
(no weights) and a small Transformer LM with tied embeddings.

    python benchmarks/paddle_kernel_log.py [--models a.py,b.py]

Prints one row per model and exits 1 when a trace and the log disagree, or real and
meta mode count different accumulations.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILES = ["examples/paddle_resnet50.py", "examples/paddle_mobilenetv3.py",
         "examples/paddle_crnn.py", "tests/fixtures/models/paddle_embedding_fanout.py",
         "tests/fixtures/models/paddle_buffers.py", "tests/fixtures/models/paddle_db_loss.py",
         "tests/fixtures/models/paddle_fanout.py"]
VISION = ["resnet18", "mobilenet_v2", "vgg11", "squeezenet1_0", "shufflenet_v2_x0_5"]

VISION_MODEL = '''
import paddle
import paddle.nn.functional as F


def build():
    paddle.seed(0)
    model = paddle.vision.models.{name}(num_classes=10)
    x = paddle.randn([2, 3, 64, 64])
    y = paddle.randint(0, 10, [2, 1])
    opt = paddle.optimizer.Momentum(parameters=model.parameters())

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return model, (x,), step
'''

TRANSFORMER_LM = '''
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class LM(nn.Layer):
    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(16, d)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 64), 2)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids):
        pos = paddle.arange(ids.shape[1]).unsqueeze(0)
        h = self.emb(ids) + self.pos(pos)
        mask = paddle.triu(paddle.full([ids.shape[1]] * 2, float("-inf")), 1)
        h = self.norm(self.enc(h, mask))
        return paddle.matmul(h, self.emb.weight, transpose_y=True)


def build():
    paddle.seed(0)
    model = LM()
    ids = paddle.randint(0, 100, [2, 16])
    label = paddle.randint(0, 100, [2, 16, 1])
    opt = paddle.optimizer.AdamW(parameters=model.parameters())

    def step():
        loss = F.cross_entropy(model(ids), label)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return model, (ids,), step
'''


def models(tmp: Path) -> list[Path]:
    out = [ROOT / f for f in FILES]
    for name in VISION:
        p = tmp / f"vision_{name}.py"
        p.write_text(VISION_MODEL.replace("{name}", name))
        out.append(p)
    p = tmp / "transformer_lm.py"
    p.write_text(TRANSFORMER_LM)
    out.append(p)
    return out


def row(path: Path) -> tuple[str, bool]:
    from analyzer.trace.paddle.kernel_log import run_logged
    from analyzer.trace.paddle.meta import dygraph_equivalent
    from analyzer.trace.paddle.real import CPU_ACCUMULATE
    from analyzer.trace.paddle.tracer import trace_paddle

    t0 = time.perf_counter()
    log = run_logged(path)
    real = trace_paddle(path)
    meta = trace_paddle(path, mode="meta")
    selected = Counter(c.op for c in real.calls if CPU_ACCUMULATE not in c.cpu_ops)
    missing, extra = log.kernels - selected, selected - log.kernels
    acc = [sum(1 for c in t.calls if CPU_ACCUMULATE in c.cpu_ops) for t in (real, meta)]
    ro, mo = {c.op for c in real.calls}, {dygraph_equivalent(c.op) for c in meta.calls}
    ok = not missing and not extra and acc[0] == acc[1]
    text = (f"{path.name:34s} log {log.lines:5d} kernel calls; trace-missing "
            f"{dict(missing) or '-'}; trace-extra {dict(extra) or '-'}; accumulations "
            f"real {acc[0]} meta {acc[1]}; meta-only {sorted(mo - ro) or '-'}; real-only "
            f"{sorted(ro - mo) or '-'}{'; meta PARTIAL' if meta.partial else ''} "
            f"({time.perf_counter() - t0:.1f} s)")
    return text, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated model files (default: the set above)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = ([Path(m) for m in args.models.split(",")] if args.models
                 else models(Path(tmp)))
        bad = 0
        for p in paths:
            text, ok = row(p)
            bad += not ok
            print(text, flush=True)
    print(f"{len(paths) - bad}/{len(paths)} models: the trace holds exactly the kernels "
          "Paddle's kernel log selects, and real and meta mode count the same gradient "
          "accumulations")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
