"""Keyword arguments that are tuples, lists or dicts of tensors (transformers' decoder
layers take `position_embeddings=(cos, sin)`) are recorded as msprobe records them, a
list (or dict) of records, and `opscan align compare` reads their numbers as inputs."""
from __future__ import annotations

import pytest
import torch

from analyzer.align import compare
from analyzer.align.hooks_torch import TorchRecorder


class _Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, position_embeddings=None, extra=None):
        cos, sin = position_embeddings
        return self.fc(x * cos + x * sin + extra["bias"])


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = _Layer()

    def forward(self, x, cos, sin):
        return self.layer(x, position_embeddings=(cos, sin), extra={"bias": sin * 2})


def _dump(scale: float):
    torch.manual_seed(0)
    net = _Net()
    x, cos, sin = torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4) * scale
    rec = TorchRecorder(net).install()
    try:
        rec.begin_step(0)
        net(x, cos, sin).sum().backward()
        return rec.end_step()
    finally:
        rec.remove()


def test_tuple_and_dict_kwargs_are_recorded():
    d = _dump(1.0)
    kw = d.data["Module.layer._Layer.forward.0"]["input_kwargs"]
    pe = kw["position_embeddings"]
    assert isinstance(pe, list) and len(pe) == 2
    assert all(r["type"] == "torch.Tensor" and r["shape"] == [2, 4] for r in pe)
    assert kw["extra"]["bias"]["type"] == "torch.Tensor"
    assert kw["extra"]["bias"]["Max"] == pytest.approx(2 * pe[1]["Max"], rel=1e-6)


def test_compare_reads_nested_kwarg_records():
    rec = _dump(1.0).data["Module.layer._Layer.forward.0"]
    outs, ins = compare._parts("forward", rec)
    assert len(outs) == 1
    assert len(ins) == 1 + 2 + 1  # x, cos and sin, the dict's bias
    assert all(r["type"] == "torch.Tensor" for r in ins)


def test_nested_kwargs_survive_the_dump_file(tmp_path):
    from analyzer.align.layout import read_step

    d = _dump(1.0)
    d.write(tmp_path)
    back = read_step(tmp_path, step=0)
    key = "Module.layer._Layer.forward.0"
    pe, pe0 = back.data[key]["input_kwargs"]["position_embeddings"], d.data[key]["input_kwargs"]["position_embeddings"]
    assert [r["shape"] for r in pe] == [r["shape"] for r in pe0]
    assert [r["Norm"] for r in pe] == pytest.approx([r["Norm"] for r in pe0], rel=1e-6)
    assert back.data[key]["input_kwargs"]["extra"]["bias"]["dtype"] == "torch.float32"
