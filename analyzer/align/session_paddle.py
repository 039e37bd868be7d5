"""Paddle side of a dump run: seeds, determinism, dropout off, precision, device, saved inputs.

Framework-only (paddle, plus the custom device plugin for --device npu). Paddle's CPU build
has no AMP (auto_cast leaves float32 on the CPU), so `--amp` on the CPU rounds the inputs
and outputs of AMP's white-list ops to the AMP dtype; on a device the real auto_cast runs.
"""
from __future__ import annotations

import contextlib
import random
from pathlib import Path

import numpy as np
import paddle
import paddle.nn.functional as F

from analyzer.align.hooks_paddle import PaddleRecorder, flatten, is_tensor

_DROPOUT_NAMES = ("dropout", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    paddle.seed(seed)


def device_missing(device: str) -> str:
    """Why `device` (gpu, npu) cannot run here ("" when it can)."""
    if device == "npu":
        types = paddle.device.get_all_custom_device_type() or []
        return "" if "npu" in types else f"no Paddle custom device 'npu' is loaded (found {types})"
    if device == "gpu":
        ok = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
        return "" if ok else "Paddle sees no CUDA device"
    return ""


def deterministic() -> str:
    import os

    os.environ.setdefault("FLAGS_cudnn_deterministic", "1")  # read by the device plugins at start
    for flag in ("FLAGS_cudnn_deterministic", "FLAGS_embedding_deterministic"):
        try:
            paddle.set_flags({flag: True})
        except (ValueError, KeyError):
            pass
    return "FLAGS_cudnn_deterministic=1"


class _NoDropout:
    """Patches paddle.nn.functional's dropouts to return their input, and attention's
    dropout_p to 0, for the duration of a step."""

    def __init__(self):
        self.hits: dict[str, int] = {}
        self.saved: dict = {}

    def __enter__(self):
        for name in _DROPOUT_NAMES:
            fn = getattr(F, name, None)
            if fn is not None:
                self.saved[name] = fn
                setattr(F, name, self._identity(name))
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is not None:
            self.saved["scaled_dot_product_attention"] = sdpa

            def no_drop(*args, **kwargs):
                if kwargs.get("dropout_p"):
                    kwargs["dropout_p"] = 0.0
                    self._hit("scaled_dot_product_attention(dropout_p)")
                return sdpa(*args, **kwargs)
            F.scaled_dot_product_attention = no_drop
        return self

    def _hit(self, name):
        self.hits[name] = self.hits.get(name, 0) + 1

    def _identity(self, name):
        def fn(x, *args, **kwargs):
            self._hit(name)
            return x
        return fn

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(F, name, fn)
        self.saved.clear()


class PaddleSession:
    framework = "paddle"

    def __init__(self, entry, device: str = "cpu"):
        self.entry = entry
        self.model = entry.model
        self.device = device
        self.notes: list[str] = []
        self._nodrop = _NoDropout()
        self._amp_emulated = False
        self._cast_hook = None
        self._undo: list = []

    def _input_tensors(self) -> list:
        return [t for t in flatten(self.entry.inputs, []) if is_tensor(t)]

    def save_inputs(self, folder: Path) -> list[str]:
        folder.mkdir(parents=True, exist_ok=True)
        sd = {k: v.numpy() for k, v in self.model.state_dict().items()}
        np.savez(folder / "weights.npz", **sd)
        np.savez(folder / "inputs.npz", *[t.numpy() for t in self._input_tensors()])
        return ["weights.npz", "inputs.npz"]

    def load_inputs(self, folder: Path) -> None:
        from opdb.errors import OpscanError

        try:
            w = np.load(folder / "weights.npz")
            i = np.load(folder / "inputs.npz")
        except (OSError, ValueError) as e:
            raise OpscanError(f"{folder}: cannot load saved weights/inputs ({e})",
                              hint="pass the folder of a dump made with --save-inputs") from None
        sd = self.model.state_dict()
        if set(sd) != set(w.files):
            raise OpscanError(f"{folder}: saved weights do not fit this model",
                              hint="dump both sides from the same MODEL.py")
        for k, v in sd.items():
            v.set_value(w[k])
        mine = self._input_tensors()
        saved = [i[f"arr_{n}"] for n in range(len(i.files))]
        if len(mine) != len(saved) or any(list(a.shape) != list(b.shape) for a, b in zip(mine, saved)):
            raise OpscanError(f"{folder}: saved inputs do not match build()'s inputs",
                              hint="dump both sides from the same MODEL.py")
        for a, b in zip(mine, saved):
            a.set_value(b)

    def set_precision(self, reference: str | None) -> None:
        if reference != "fp64":
            return
        old = paddle.get_default_dtype()
        self._undo.append(lambda: paddle.set_default_dtype(old))
        paddle.set_default_dtype("float64")
        # buffers without storage (e.g. cuDNN RNN state on the CPU) cannot be cast: set aside
        aside = []
        for layer in self.model.sublayers(include_self=True):
            for k, b in list(layer._buffers.items()):
                if b is not None and (not b._is_initialized() or b.size == 0):
                    aside.append((layer, k, layer._buffers.pop(k)))
        try:
            self.model.to(dtype="float64")
        finally:
            for layer, k, b in aside:
                layer._buffers[k] = b

        def cast(layer, inputs):
            return tuple(x.astype("float64") if is_tensor(x) and x.dtype == paddle.float32 else x
                         for x in inputs)
        self._cast_hook = self.model.register_forward_pre_hook(cast)
        # the optimizer keeps float32 state (learning rate, beta powers): its step would fail
        self._undo.extend(self._skip_optimizer_step())
        self.notes.append("reference run: parameters and default dtype float64; the model's "
                          "float32 inputs cast to float64 on entry; optimizer steps skipped "
                          "(the reference covers forward and backward)")

    @staticmethod
    def _skip_optimizer_step() -> list:
        base = paddle.optimizer.Optimizer
        todo, seen, undo = [base], set(), []
        while todo:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            todo.extend(cls.__subclasses__())
            if "step" in cls.__dict__:
                undo.append(lambda cls=cls, fn=cls.__dict__["step"]: setattr(cls, "step", fn))
                cls.step = lambda self, *a, **k: None
        return undo

    def close(self) -> None:
        """Undo every process-wide change (default dtype, patched optimizer steps)."""
        while self._undo:
            self._undo.pop()()

    def to_device(self) -> None:
        if self.device == "cpu":
            return
        dev = {"gpu": "gpu", "npu": "npu"}[self.device]
        paddle.set_device(dev)
        self.model.to(device=dev)
        for t in self._input_tensors():
            t.set_value(t.cpu().numpy())
        self.notes.append(f"paddle device set to {dev}")

    def disable_dropout(self) -> None:
        n = 0
        for m in self.model.sublayers(include_self=True):
            if isinstance(m, (paddle.nn.Dropout, paddle.nn.Dropout2D, paddle.nn.Dropout3D, paddle.nn.AlphaDropout)):
                m.p = 0.0
                n += 1
            for attr in ("dropout", "attn_dropout", "dropout_p", "dropout_prob"):
                v = getattr(m, attr, None)
                if isinstance(v, float) and 0.0 < v < 1.0:
                    setattr(m, attr, 0.0)
                    n += 1
        self.notes.append(f"dropout disabled: {n} layer attribute(s) set to 0; every "
                          "paddle.nn.functional dropout and attention dropout_p intercepted at run time")

    def step_context(self, amp: str | None):
        stack = contextlib.ExitStack()
        stack.enter_context(self._nodrop)
        if amp and self.device != "cpu":
            stack.enter_context(paddle.amp.auto_cast(level="O1",
                                                     dtype={"bf16": "bfloat16", "fp16": "float16"}[amp]))
        return stack

    def dropout_hits(self) -> dict:
        return dict(sorted(self._nodrop.hits.items()))

    def recorder(self, level, scope, fault, capture=None, amp=None):
        emulate = amp if (amp and self.device == "cpu") else None
        if emulate and not self._amp_emulated:
            self._amp_emulated = True
            self.notes.append(f"--amp {amp} on the CPU: Paddle's CPU build has no AMP; the inputs and "
                              "outputs of AMP white-list ops (matmul, linear, conv, bmm, einsum) are "
                              f"rounded to {amp}")
        return PaddleRecorder(self.model, level, scope, fault, capture, emulate).install()

    def sync(self) -> None:
        return None

    @staticmethod
    def loss_value(loss) -> float | None:
        if is_tensor(loss) and loss.size == 1:
            return float(loss.detach().astype("float64").numpy().reshape(()))
        if isinstance(loss, (int, float)):
            return float(loss)
        return None

    def param_dtype(self) -> str:
        for p in self.model.parameters():
            return str(p.dtype).replace("paddle.", "")
        return "float32"
