"""Trace one (or N) Paddle training steps into an `analyzer.model.Trace` of phi kernel calls.

Public API: `trace_paddle(entry_or_script, *, mode="real"|"meta", steps=1, progress=None)`.

What is recorded: every phi kernel the step asks the kernel factory for -- forward,
grad and optimizer kernels -- under the name PaddleCustomDevice registers and
`CUSTOM_DEVICE_BLACK_LIST` / the fallback log line talk about (`conv2d`,
`conv2d_grad`, `batch_norm_grad`, `cross_entropy_with_softmax`, `adam`). `OpCall.op` is
that kernel name; `OpCall.aliases` keeps the API / program op name when it differs
(`adam_`, `batch_norm_`) and the fluid op names (`softmax_with_cross_entropy`), which
is what the custom-device black list is matched against.

Why these sources (checked on Paddle 3.3.1, CPU, dygraph):
- real mode uses `paddle.profiler` (CPU target) and reads its `DygraphKernelLaunch`
  events. The generated dygraph API code names that event after the kernel name it has
  just passed to `KernelFactory::SelectKernelOrThrowError`, in forward, in every grad
  node and in optimizer APIs (`adam_` -> `adam kernel launch`). GLOG_v=6 logging prints
  the same names but needs a subprocess, is ~1,000 lines per op and its "API kernel key"
  line carries the API name (`adam_`), not the kernel's; interception of `_C_ops`
  alone sees no grad kernels and no kernels launched from C++. The profiler gives exact
  names for all of them in-process; Python wrappers around the op functions and
  gradient hooks add tensors, layer path and source line (see `analyzer.trace.paddle.real`).
- meta mode builds the same step as a PIR program under `paddle.static` (parameters
  live in the never-run startup program, so nothing is allocated): `loss.backward()`
  becomes `append_backward`, `optimizer.step()` becomes `apply_gradients`, and each
  `pd_op.*` op is mapped to its kernel with the installed registry and Paddle's op YAML
  (`pd_op.adam_` -> `adam`). `paddle.LazyGuard` was not used: it only defers parameter
  initialisation, the forward still allocates every activation. See
  `analyzer.trace.paddle.meta` for the known differences between the program and dygraph.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from analyzer.errors import ModelError
from analyzer.model import Trace
from analyzer.trace.entry import Entry, load_entry, user_error
from analyzer.trace import heap
from analyzer.progress import report_step
from analyzer.trace.partial import finish

MODES = ("real", "meta")


def _paddle_version() -> str:
    import paddle

    return paddle.__version__


def _report(progress: Callable[[str], None] | None, text: str) -> None:
    if progress is not None:
        progress(text)


def trace_paddle(entry_or_script: Entry | str | Path, *, mode: str = "real", steps: int = 1,
                 progress: Callable[[str], None] | None = None,
                 script_argv: list[str] | None = None) -> Trace:
    """Trace `steps` training steps of a Paddle model into a `Trace` (framework="paddle").

    entry_or_script: an `analyzer.trace.entry.Entry` (real mode only: it is already built), or
    the path of a model file with `build()`; with `script_argv` (a list, possibly empty)
    the path is run as a script (`analyzer.trace.entry.run_script`) and the first `steps`
    optimizer steps are traced.
    mode: "real" runs the step on CPU; "meta" builds the static program, allocating no
    parameter or activation storage.
    progress: called with one short line per stage ("step 1/2", ...).
    Raises ModelError for user-code failures before anything was recorded; a failure
    after that returns a partial Trace (`partial=True`, `error` set).
    """
    if mode not in MODES:
        raise ModelError(f"unknown trace mode {mode!r}", "use mode='real' or mode='meta'")
    if steps < 1:
        raise ModelError(f"--steps must be at least 1, got {steps}")
    _report(progress, "importing paddle")
    if mode == "meta":
        from analyzer.trace.paddle.meta import trace_meta

        if isinstance(entry_or_script, Entry):
            raise ModelError(f"{entry_or_script.path}: meta mode needs the model file, not an "
                             "already built model", "pass the path of the model file")
        return trace_meta(Path(entry_or_script), steps=steps, progress=progress,
                          script_argv=script_argv)
    if isinstance(entry_or_script, Entry):
        entry = entry_or_script
    elif script_argv is not None:
        return _trace_real_script(Path(entry_or_script), script_argv, steps, progress)
    else:
        _report(progress, f"building {entry_or_script}")
        entry = load_entry(entry_or_script, "paddle")
    return _trace_real_entry(entry, steps, progress)


def trace(model, *, mode: str = "real", steps: int = 1, adapted=(),
          script_argv: list[str] | None = None,
          progress: Callable[[str], None] | None = None) -> Trace:
    """The tracer contract of `analyzer.trace` (paddle's kernel choice does not depend on
    the target, so `adapted` is not used)."""
    return trace_paddle(model, mode=mode, steps=steps, progress=progress,
                        script_argv=script_argv)


def _new_trace(model: str, mode: str, steps: int) -> Trace:
    return Trace(framework="paddle", mode=mode, model=model, steps=steps,
                 framework_version=_paddle_version())


def _finish(trace: Trace, rec: Any, prof: Any, error: ModelError | None,
            setup: bool = False) -> Trace:
    from analyzer.trace.paddle.real import build_calls, collect_launches

    launches = collect_launches(prof.profiler_result, setup=setup)
    prof.profiler_result = None
    calls, notes = build_calls(launches, rec)
    trace.calls = calls
    trace.notes += ["kernel names: paddle.profiler DygraphKernelLaunch events (phi kernel "
                    "key names)", *notes]
    return finish(trace, error)


def _profiler():
    from paddle import profiler

    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                             on_trace_ready=lambda _p: None)
    if prof.profiler is None:  # Paddle allows one live profiler per process
        raise ModelError("another paddle.profiler.Profiler is alive in this process",
                         "stop and delete it before tracing in real mode")
    return prof


def _release(prof) -> None:
    """Drop the C++ profiler so the next Profiler() (ours or the user's) can be made."""
    prof.profiler = None


def _calls_reporter(progress, steps: int, done: list | None = None):
    """`Recorder.on_calls` (called every few hundred API calls): the ops seen so far."""
    if progress is None:
        return None
    done = done if done is not None else [None]

    def on_calls(n: int) -> None:
        report_step(progress, done[0] if done[0] is not None else 0, steps, n)

    return on_calls


def _trace_real_entry(entry: Entry, steps: int, progress) -> Trace:
    import paddle

    from analyzer.trace.paddle.real import Recorder

    paddle.disable_static()
    trace = _new_trace(str(entry.path), "real", steps)
    if entry.step_fn is None:
        trace.notes.append("build() returned no step_fn: forward pass only")
    rec = Recorder(entry.model)
    done = [0]  # steps finished: the "ops so far" lines inside a step name that step
    rec.on_calls = _calls_reporter(progress, steps, done)
    prof = _profiler()
    error: ModelError | None = None
    with rec.installed(), heap.frozen_heap():
        prof.start()
        try:
            rec.enabled = True
            rec.instant("begin")
            for k in range(1, steps + 1):
                done[0] = k - 1
                report_step(progress, k - 1, steps, len(rec.calls))
                try:
                    entry.run_step()
                except Exception as e:  # noqa: BLE001 - any user failure
                    error = user_error(e, entry.path, f"step {k}")
                    break
                rec.instant("stepend")
            else:
                report_step(progress, steps, steps, len(rec.calls))
        finally:
            rec.enabled = False
            prof.stop()
            _release(prof)
    trace.steps = steps if error is None else max(1, k)
    return _finish(trace, rec, prof, error)


def _trace_real_script(path: Path, argv: list[str], steps: int, progress) -> Trace:
    from analyzer.trace.entry import run_script
    from analyzer.trace.paddle.real import Recorder

    trace = _new_trace(str(path), "real", steps)
    rec = Recorder(None)
    prof = _profiler()

    def on_step(n: int) -> None:
        rec.instant("stepend")
        step[0] = n
        report_step(progress, n, steps, len(rec.calls))

    step = [0]
    rec.on_calls = _calls_reporter(progress, steps, step)
    _report(progress, f"running {path.name}")

    with rec.installed(), heap.frozen_heap():
        prof.start()
        try:
            rec.enabled = True
            rec.instant("begin")
            result = run_script(path, argv, steps, "paddle", on_step=on_step)
        finally:
            rec.enabled = False
            prof.stop()
            _release(prof)
    trace.notes += result.notes
    trace.steps = max(1, result.steps_completed)
    return _finish(trace, rec, prof, result.error, setup=True)
