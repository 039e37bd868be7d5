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


def device_missing(device: str) -> str:
    """Why `device` (gpu, npu) cannot run here ("" when it can)."""
    if device == "npu":
        import importlib.util

        return "" if importlib.util.find_spec("torch_npu") else "torch_npu is not installed"
    if device == "gpu":
        return "" if torch.cuda.is_available() else "torch sees no CUDA device"
    return ""


def deterministic() -> str:
    torch.use_deterministic_algorithms(True, warn_only=True)
    if hasattr(torch.backends, "cudnn"):
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return "torch.use_deterministic_algorithms(True, warn_only=True)"


class _NoDropout(TorchFunctionMode):
    """Every dropout call returns its input; attention's dropout_p becomes 0. A catch-all
    (every torch call of the step passes through it in Python: +25-40% on a small model's
    step), so it guards the first step only, see _DropoutPatches."""

    def __init__(self):
        super().__init__()
        self.hits: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _DROPOUT_FUNCS or hasattr(func, "_opscan_dropout"):
            # a swapped-in dropout reaches a mode only through an original bound before
            # the swap (its handle_torch_function looks its own name up): an escape too
            self.hits[func.__name__] = self.hits.get(func.__name__, 0) + 1
            return args[0] if args else (kwargs or {}).get("input")
        if func is _SDPA:
            kwargs = dict(kwargs or {})
            p = kwargs.get("dropout_p", args[5] if len(args) > 5 else 0.0)
            if p:
                self.hits["scaled_dot_product_attention(dropout_p)"] = \
                    self.hits.get("scaled_dot_product_attention(dropout_p)", 0) + 1
                if len(args) > 5:
                    args = (*args[:5], 0.0, *args[6:])
                else:
                    kwargs["dropout_p"] = 0.0
            return func(*args, **kwargs)
        return func(*args, **kwargs) if kwargs else func(*args)


_SDPA = F.scaled_dot_product_attention
# the names through which dropout is called: (module, attribute)
_PATCHED = [(F, n) for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                             "feature_alpha_dropout", "scaled_dot_product_attention")] + \
           [(torch, n) for n in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout")]


class _DropoutPatches:
    """Dropout off at the names code calls it by (torch.nn.functional.dropout*,
    scaled_dot_product_attention's dropout_p, torch.dropout*), swapped in for the step and
    restored after it: costs nothing per call of other ops. A name bound before the swap
    (`from torch.nn.functional import dropout`) or a call from C++ escapes it, which is why
    the session runs its first step under the catch-all `_NoDropout` as well: if that
    catches a dropout call the swap missed, the catch-all stays on for the run."""

    def __init__(self, hits: dict):
        self.hits = hits
        self._saved: list = []

    def _identity(self, name: str):
        def dropout(input, *args, **kwargs):
            self.hits[name] = self.hits.get(name, 0) + 1
            return input
        dropout.__name__ = dropout._opscan_dropout = name
        return dropout

    def _sdpa(self, *args, **kwargs):
        if (kwargs.get("dropout_p", args[5] if len(args) > 5 else 0.0)):
            key = "scaled_dot_product_attention(dropout_p)"
            self.hits[key] = self.hits.get(key, 0) + 1
            if len(args) > 5:
                args = (*args[:5], 0.0, *args[6:])
            else:
                kwargs["dropout_p"] = 0.0
        return _SDPA(*args, **kwargs)

    def __enter__(self):
        for mod, name in _PATCHED:
            old = getattr(mod, name, None)
            if old is None:
                continue
            self._saved.append((mod, name, old))
            setattr(mod, name, self._sdpa if name == "scaled_dot_product_attention" else self._identity(name))
        return self

    def __exit__(self, *exc):
        while self._saved:
            mod, name, old = self._saved.pop()
            setattr(mod, name, old)
        return False


class TorchSession:
    framework = "torch"

    def __init__(self, entry, device: str = "cpu"):
        self.entry = entry
        self.model = entry.model
        self.device = device
        self.notes: list[str] = []
        self._nodrop = _NoDropout()
        self._hits: dict[str, int] = {}
        self._guard = True  # the catch-all runs until one step shows the swap misses nothing
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
            __import__("torch_npu")  # registers the npu device
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
                          "F.dropout*/torch.dropout* call and scaled_dot_product_attention's "
                          "dropout_p intercepted at run time (the first step under a catch-all "
                          "TorchFunctionMode that stays on if it sees a dropout the others miss)")

    def step_context(self, amp: str | None):
        stack = contextlib.ExitStack()
        stack.enter_context(_DropoutPatches(self._hits))
        if self._guard:
            stack.enter_context(self._nodrop)
            stack.callback(self._end_guard)
        if amp:
            dev = {"cpu": "cpu", "gpu": "cuda", "npu": "npu"}[self.device]
            stack.enter_context(torch.autocast(device_type=dev, dtype=DTYPES[amp]))
        return stack

    def _end_guard(self) -> None:
        """After a step under the catch-all: it caught nothing (every dropout went through
        the swapped names) -> later steps run without it."""
        if not self._nodrop.hits:
            self._guard = False
        elif "dropout: a call the swapped names miss" not in " ".join(self.notes):
            self.notes.append("dropout: a call the swapped names miss (%s) keeps the catch-all "
                              "TorchFunctionMode on for every step" % ", ".join(sorted(self._nodrop.hits)))

    def dropout_hits(self) -> dict:
        hits = dict(self._hits)
        for k, v in self._nodrop.hits.items():
            hits[k] = hits.get(k, 0) + v
        return dict(sorted(hits.items()))

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
