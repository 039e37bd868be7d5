"""Backward records: a module whose outputs carry no gradient has none (found on
transformers' LlamaRotaryEmbedding, whose cos/sin depend on positions only: its record
held the total gradient of the hidden states, which it never produced), and one tensor
hook per tensor serves every record that wants its gradient, in both frameworks."""
from __future__ import annotations

import pytest


def _torch_model():
    import torch

    class Positions(torch.nn.Module):  # like a rotary embedding: reads x, returns no gradient
        def forward(self, x):
            return torch.arange(x.shape[-1], dtype=x.dtype).expand_as(x)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = Positions()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x):
            h = self.a(x)
            return self.b(h + self.pos(h))

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(2, 4)
    return net, lambda: net(x).square().sum().backward()


def _paddle_model():
    import paddle

    class Positions(paddle.nn.Layer):
        def forward(self, x):
            return paddle.arange(x.shape[-1], dtype=x.dtype).expand_as(x)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.pos = Positions()
            self.a = paddle.nn.Linear(4, 4)
            self.b = paddle.nn.Linear(4, 4)

        def forward(self, x):
            h = self.a(x)
            return self.b(h + self.pos(h))

    paddle.seed(0)
    net = Net()
    x = paddle.randn([2, 4])
    return net, lambda: net(x).square().sum().backward()


def _recorder(framework, net):
    if framework == "torch":
        from analyzer.align.hooks_torch import TorchRecorder
        return TorchRecorder(net).install()
    from analyzer.align.hooks_paddle import PaddleRecorder
    return PaddleRecorder(net).install()


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_module_without_output_gradient_has_no_backward_record(framework):
    net, step = (_torch_model if framework == "torch" else _paddle_model)()
    rec = _recorder(framework, net)
    try:
        rec.begin_step(0)
        step()
        d = rec.end_step()
    finally:
        rec.remove()
    keys = set(d.data)
    assert "Module.pos.Positions.forward.0" in keys
    assert "Module.pos.Positions.backward.0" not in keys
    a, b = d.data["Module.a.Linear.backward.0"], d.data["Module.b.Linear.backward.0"]
    # a's output feeds b (through the add) and pos: its gradient is b's input gradient
    assert a["input"][0]["Norm"] == pytest.approx(b["output"][0]["Norm"], rel=1e-6)
    assert set(d.data["Module.a.Linear.parameters_grad.0"]) == {"weight", "bias"}


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_one_tensor_hook_serves_both_neighbours(framework, monkeypatch):
    """Sequential layers: a layer's output is the next one's input, one hook each."""
    if framework == "torch":
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
        x = torch.randn(2, 3)
        cls = torch.Tensor
    else:
        import paddle
        net = paddle.nn.Sequential(paddle.nn.Linear(3, 3), paddle.nn.Tanh(), paddle.nn.Linear(3, 1))
        x = paddle.randn([2, 3])
        cls = paddle.Tensor
    calls = []
    if framework == "torch":  # (torch's recorder registers through add_tensor_hook)
        from analyzer.align import hooks_torch as owner
        name = "add_tensor_hook"
    else:
        owner, name = cls, "register_hook"
    real = getattr(owner, name)

    def counting(self, hook):
        calls.append(id(self))
        return real(self, hook)
    monkeypatch.setattr(owner, name, counting)
    rec = _recorder(framework, net)
    calls.clear()  # (Paddle's parameter hooks are tensor hooks too, registered at install)
    try:
        rec.begin_step(0)
        net(x).sum().backward()
        d = rec.end_step()
    finally:
        rec.remove()
    assert len(calls) == 3  # the outputs of 0, 1, 2 (x needs no gradient)
    for i, cls_name in ((0, "Linear"), (1, "Tanh")):
        out_grad = d.data[f"Module.{i}.{cls_name}.backward.0"]["input"][0]
        nxt = d.data[f"Module.{i + 1}.{'Tanh' if i == 0 else 'Linear'}.backward.0"]["output"][0]
        assert out_grad["Norm"] == nxt["Norm"] and out_grad["Mean"] == nxt["Mean"]


def test_direct_tensor_hooks_behave_like_register_hook():
    """hooks_torch.add_tensor_hook (register_hook's steps without its handle) fires in
    registration order among the user's own tensor hooks, sees the gradient as the user's
    earlier hook changed it, works on leaves and non-leaves, and gives the same calls as
    `Tensor.register_hook` does."""
    import torch

    from analyzer.align.hooks_torch import add_tensor_hook

    def run(add):
        seen = []
        w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        add(w, lambda g: seen.append(("leaf", g.tolist())))
        y = w * 2
        y.register_hook(lambda g: seen.append(("user before", g.tolist())) or g * 10)
        add(y, lambda g: seen.append(("ours", g.tolist())))
        y.register_hook(lambda g: seen.append(("user after", g.tolist())))
        z = y.sin()
        add(z, lambda g: seen.append(("second", g.tolist())))
        z.sum().backward()
        return seen, w.grad.tolist()

    direct = run(add_tensor_hook)
    assert direct == run(lambda t, fn: t.register_hook(fn))
    assert [name for name, _ in direct[0]] == ["second", "user before", "ours", "user after", "leaf"]
