"""Tracing: run the user's training step as the target device would and record every kernel call.

Layout (one stage of the pipeline trace -> graph -> classify -> report):
    entry.py        the model file (`build()` contract) or a `--script` run; framework-neutral
    partial.py      the one partial-trace finisher every tracer ends with
    torch/          emulated `npu` device (npu_emulation.py) and the torch tracer (tracer.py)
    paddle/         real-mode profiler trace (real.py), meta-mode static program (meta.py),
                    phi kernel names (names.py, names_data.py) and the paddle tracer (tracer.py)

The tracer contract: every framework package exposes

    trace(model, *, mode, steps, adapted, script_argv, progress) -> analyzer.model.Trace

and `trace()` below picks the framework's. Nothing here imports a framework: that happens
when a framework's tracer runs (so `opscan --help` and `opdb` stay fast), and each tracer
sets up what it needs itself (the torch tracer registers its emulated device), so no
caller needs a side-effect import.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from analyzer.model import Trace

FRAMEWORKS = ("torch", "paddle")
MODES = ("real", "meta")

Progress = Callable[[str], None]


def trace(model: str | Path, *, framework: str, mode: str = "real", steps: int = 1,
          adapted: Iterable[str] = (), script_argv: list[str] | None = None,
          progress: Progress | None = None) -> Trace:
    """Trace `steps` training steps of `model` (a model file with build(), or a script when
    `script_argv` is a list) with `framework`'s tracer.

    mode: "real" computes on CPU, "meta" allocates no storage (shapes only).
    adapted: ops the target adapts (torch: `aten::matmul`; paddle ignores it: its
    kernel choice does not depend on the target).
    Raises ModelError when the model file is broken or nothing was recorded; a step that
    fails after calls were recorded gives a partial Trace (see `partial.finish`).
    """
    from analyzer.errors import ModelError

    if framework not in FRAMEWORKS:
        raise ModelError(f"unknown framework {framework!r}", "use --framework torch or paddle")
    if mode not in MODES:
        raise ModelError(f"unknown mode {mode!r}", "use --mode real or --mode meta")
    if framework == "torch":
        from analyzer.trace.torch import trace as framework_trace
    else:
        from analyzer.trace.paddle import trace as framework_trace
    return framework_trace(model, mode=mode, steps=steps, adapted=adapted,
                           script_argv=script_argv, progress=progress)
