"""Tracing: run the user's training step as the target device would and record every kernel call.

Layout (one stage of the pipeline trace -> graph -> classify -> report):
    entry.py        the model file (`build()` contract) or a `--script` run; framework-neutral
    partial.py      the one partial-trace finisher every tracer ends with
    memory.py       --mode auto's memory estimate from a meta trace; the real-mode watchdog
    torch/          emulated `npu` device (npu_emulation.py) and the torch tracer (tracer.py)
    paddle/         real-mode profiler trace (real.py), meta-mode static program (meta.py)
                    and its shims for real model code (meta_values.py), phi kernel names
                    (names.py, names_data.py), Paddle's GLOG kernel log (kernel_log.py) and
                    the paddle tracer (tracer.py)

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
MODES = ("auto", "real", "meta")

Progress = Callable[[str], None]


def trace(model: str | Path, *, framework: str, mode: str = "auto", steps: int = 1,
          adapted: Iterable[str] = (), script_argv: list[str] | None = None,
          progress: Progress | None = None) -> Trace:
    """Trace `steps` training steps of `model` (a model file with build(), or a script when
    `script_argv` is a list) with `framework`'s tracer.

    mode: "real" computes on CPU, "meta" allocates no storage (shapes only), "auto" runs
    real when a meta trace estimates that the real step fits comfortably in free memory,
    and keeps the meta trace otherwise (`_trace_auto`). A real run is watched: past the
    machine's free memory it stops with a one-line message (`memory.Watchdog`).
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
    from analyzer.trace.entry import import_framework

    import_framework(framework)  # before anything imports it: Ctrl-C is never lost in there
    if framework == "torch":
        from analyzer.trace.torch import trace as framework_trace
    else:
        from analyzer.trace.paddle import trace as framework_trace

    def run(m: str, n: int = steps) -> Trace:
        if m == "real":
            return _watched(lambda: framework_trace(model, mode="real", steps=n,
                                                    adapted=adapted, script_argv=script_argv,
                                                    progress=progress))
        return framework_trace(model, mode=m, steps=n, adapted=adapted,
                               script_argv=script_argv, progress=progress)

    # the model's print()s go to stderr: stdout carries opscan's summary, or its --json
    with user_stdout_to_stderr():
        if mode == "auto":
            return _trace_auto(run, framework, steps, script_argv, progress)
        return run(mode)


def user_stdout_to_stderr():
    """While user code runs: what it writes to sys.stdout goes to sys.stderr, so that
    `opscan blacklist --json | jq` reads JSON whatever the model prints (a model's
    "building..." came first on stdout). Writes to file descriptor 1 from C are not moved."""
    import contextlib
    import sys

    return contextlib.redirect_stdout(sys.stderr)


def _watched(fn: Callable[[], Trace]) -> Trace:
    from analyzer.trace.memory import Watchdog

    dog = Watchdog.for_real_run("the real-mode step")
    if dog is None:
        return fn()
    with dog:
        return fn()


def _trace_auto(run: Callable[..., Trace], framework: str, steps: int,
                script_argv: list[str] | None, progress: Progress | None) -> Trace:
    """--mode auto: estimate a real step's memory from a meta trace of one step, then run
    real if it fits comfortably, else trace meta (the --steps asked for). Every choice is a
    note in the report.

    One meta step is enough whatever --steps is: a later step is the same step with the
    optimizer state already alive (`estimate(steady=True)`), and the meta trace is pure
    cost on the way to a real run (for the bundled examples a meta step costs about as
    much as several real ones: Paddle builds a static program, torch runs fake tensors)."""
    from analyzer.errors import ModelError
    from analyzer.trace.memory import COMFORT, available_bytes, estimate, fits, gb

    if script_argv is not None:
        # A script is run once, for real: running it twice (meta, then real) would repeat
        # its side effects (checkpoints, logs); the watchdog still guards the memory.
        t = run("real")
        t.notes.insert(0, "mode auto: real (a --script runs once, for real, under the "
                          "memory watchdog; use --mode meta for a model too big for this "
                          "machine)")
        return t
    if progress is not None:
        progress("mode auto: estimating a real step's memory from a meta trace")
    try:
        meta = run("meta", 1)
    except ModelError as e:
        t = run("real")
        t.notes.insert(0, "mode auto: real (the meta trace failed: "
                          f"{str(e).splitlines()[0]})")
        return t
    est = estimate(meta, steady=steps > 1)
    avail = available_bytes()
    free = gb(avail) if avail is not None else "unknown"
    lower = " at least" if meta.partial else ""
    if fits(est, avail):
        t = run("real")
        t.notes.insert(0, f"mode auto: real (a real step needs{lower} about {est.describe()}; "
                          "that fits in free memory)")
        return t
    if steps > 1:
        meta = run("meta")
    meta.notes.insert(0, f"mode auto: meta, shapes and dtypes only (a real step would "
                         f"need{lower} about {est.describe()}; that is more than {COMFORT:.0%} of "
                         f"the {free} free; use --mode real to run it anyway)")
    return meta
