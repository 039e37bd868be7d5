"""torch side of a dump run: seeds, determinism, dropout off, precision, device, saved inputs.

Framework-only (torch, plus torch_npu for --device npu); runs where the model runs.
"""
from __future__ import annotations

import contextlib
import random
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from analyzer.align.hooks_torch import TorchRecorder

DTYPES = {"fp64": torch.float64, "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_DROPOUT_FUNCS = {F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                  F.feature_alpha_dropout, torch.dropout, torch.nn.functional.dropout}


def seed_all(seed: int) -> None:
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def deterministic() -> str:
    torch.use_deterministic_algorithms(True, warn_only=True)
    if hasattr(torch.backends, "cudnn"):
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return "torch.use_deterministic_algorithms(True, warn_only=True)"


class _NoDropout(TorchFunctionMode):
    """Every dropout call returns its input; attention's dropout_p becomes 0."""

    def __init__(self):
        super().__init__()
        self.hits: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _DROPOUT_FUNCS:
            self.hits[func.__name__] = self.hits.get(func.__name__, 0) + 1
            return args[0] if args else kwargs.get("input")
        if func is F.scaled_dot_product_attention:
            p = kwargs.get("dropout_p", args[5] if len(args) > 5 else 0.0)
            if p:
                self.hits["scaled_dot_product_attention(dropout_p)"] = \
                    self.hits.get("scaled_dot_product_attention(dropout_p)", 0) + 1
                if len(args) > 5:
                    args = (*args[:5], 0.0, *args[6:])
                else:
                    kwargs["dropout_p"] = 0.0
        return func(*args, **kwargs)


class TorchSession:
    framework = "torch"

    def __init__(self, entry, device: str = "cpu"):
        self.entry = entry
        self.model = entry.model
        self.device = device
        self.notes: list[str] = []
        self._nodrop = _NoDropout()
        self._undo: list = []

    # -------------------------------------------------------------- same inputs
    def _input_tensors(self) -> list:
        from analyzer.align.hooks_torch import flatten

        return [t for t in flatten(self.entry.inputs, []) if isinstance(t, torch.Tensor)]

    def save_inputs(self, folder: Path) -> list[str]:
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.detach().cpu() for k, v in self.model.state_dict().items()}, folder / "weights.pt")
        torch.save([t.detach().cpu() for t in self._input_tensors()], folder / "inputs.pt")
        return ["weights.pt", "inputs.pt"]

    def load_inputs(self, folder: Path) -> None:
        from opdb.errors import OpscanError

        try:
            state = torch.load(folder / "weights.pt", weights_only=True)
            inputs = torch.load(folder / "inputs.pt", weights_only=True)
        except (OSError, RuntimeError, EOFError) as e:
            raise OpscanError(f"{folder}: cannot load saved weights/inputs ({e})",
                              hint="pass the folder of a dump made with --save-inputs") from None
        missing = self.model.load_state_dict(state, strict=False)
        if missing.missing_keys or missing.unexpected_keys:
            raise OpscanError(f"{folder}: saved weights do not fit this model "
                              f"(missing {len(missing.missing_keys)}, unexpected {len(missing.unexpected_keys)})",
                              hint="dump both sides from the same MODEL.py")
        mine = self._input_tensors()
        if len(mine) != len(inputs) or any(a.shape != b.shape for a, b in zip(mine, inputs)):
            raise OpscanError(f"{folder}: saved inputs do not match build()'s inputs",
                              hint="dump both sides from the same MODEL.py")
        with torch.no_grad():
            for a, b in zip(mine, inputs):
                a.copy_(b)

    # -------------------------------------------------------------- precision, device
    def set_precision(self, reference: str | None) -> None:
        if reference == "fp64":
            old = torch.get_default_dtype()
            self._undo.append(lambda: torch.set_default_dtype(old))
            torch.set_default_dtype(torch.float64)
            self.model.double()
            for t in self._input_tensors():
                if t.is_floating_point():
                    t.data = t.data.double()
            self.notes.append("reference run: parameters, inputs and default dtype in float64")

    def close(self) -> None:
        """Undo every process-wide change (default dtype)."""
        while self._undo:
            self._undo.pop()()

    def to_device(self) -> None:
        if self.device == "cpu":
            return
        if self.device == "npu":
            import torch_npu  # noqa: F401  (registers the npu device)
        dev = {"gpu": "cuda", "npu": "npu"}[self.device]
        self.model.to(dev)
        for t in self._input_tensors():
            t.data = t.data.to(dev)
        self.notes.append(f"model and build() inputs moved to {dev}")

    def disable_dropout(self) -> None:
        n = 0
        for m in self.model.modules():
            if isinstance(m, torch.nn.modules.dropout._DropoutNd):
                m.p = 0.0
                n += 1
            for attr in ("dropout", "attention_dropout", "attn_dropout", "dropout_p", "dropout_prob"):
                v = getattr(m, attr, None)
                if isinstance(v, float) and 0.0 < v < 1.0:
                    setattr(m, attr, 0.0)
                    n += 1
        self.notes.append(f"dropout disabled: {n} module attribute(s) set to 0; every "
                          "F.dropout* call and scaled_dot_product_attention's dropout_p "
                          "intercepted at run time")

    def step_context(self, amp: str | None):
        stack = contextlib.ExitStack()
        stack.enter_context(self._nodrop)
        if amp:
            dev = {"cpu": "cpu", "gpu": "cuda", "npu": "npu"}[self.device]
            stack.enter_context(torch.autocast(device_type=dev, dtype=DTYPES[amp]))
        return stack

    def dropout_hits(self) -> dict:
        return dict(sorted(self._nodrop.hits.items()))

    def recorder(self, level, scope, fault, capture=None):
        return TorchRecorder(self.model, level, scope, fault, capture).install()

    def sync(self) -> None:
        if self.device == "gpu":
            torch.cuda.synchronize()

    @staticmethod
    def loss_value(loss) -> float | None:
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            return float(loss.detach().double().cpu())
        if isinstance(loss, (int, float)):
            return float(loss)
        return None

    def param_dtype(self) -> str:
        for p in self.model.parameters():
            return str(p.dtype).replace("torch.", "")
        return "float32"
