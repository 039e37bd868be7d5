"""Trace a torch training step as the target NPU would dispatch it.

The step runs on the emulated `npu` device of analyzer.trace.torch.npu_emulation: ops the target
adapts are recorded as themselves (composites included), ops it lacks are recorded from
the backend fallback, and what the CPU ran instead is kept in `OpCall.cpu_ops`. Every
call carries its phase (setup/forward/backward/optimizer/other; setup: a script's calls
before its first module forward), the nn.Module path that issued
it (backward calls: the module whose forward created the autograd node), the user's
source line and tensor metadata whose ids link producers to consumers.

Public API: `trace_torch(target, adapted=..., ...) -> analyzer.model.Trace`, where
target is a model file path (build() contract) or an `analyzer.trace.entry.Script`.
"""
from __future__ import annotations

import contextlib
import functools
from collections import Counter
from pathlib import Path
from typing import Callable

from analyzer.errors import ModelError
from analyzer.model import SETUP, OpCall, TensorMeta, Trace
from analyzer.trace.entry import Script, load_entry, optimizer_step_hooks, run_script, \
    user_error, user_source
from analyzer.trace import heap
from analyzer.trace.partial import finish


# CPU kernels no NPU runs: seen in cpu_ops, counted in Trace.cpu_only_ops.
_CPU_ONLY_MARKERS = ("_for_cpu", "mkldnn", "onednn", "_nnpack", "_cpu_", "fbgemm")

_DTYPE_NAMES: dict = {}  # torch.dtype -> "float32" (TensorMeta's spelling)

ProgressFn = Callable[[int, int, int], None]  # (steps done, steps requested, calls so far)


@functools.lru_cache(maxsize=4096)
def is_cpu_only_kernel(name: str) -> bool:
    """True for CPU-specific kernels (`_scaled_dot_product_flash_attention_for_cpu`, mkldnn)."""
    base = name.split("::", 1)[-1]
    return any(m in base for m in _CPU_ONLY_MARKERS) or base.endswith("_cpu")


_AUTOGRAD_ENTRY: dict = {}  # code object -> is it torch.autograd.backward/grad/_make_grads


def _is_autograd_entry(code) -> bool:
    hit = code.co_filename.endswith(("torch/autograd/__init__.py", "torch/_tensor.py")) and \
        code.co_name in ("backward", "grad", "_make_grads")
    _AUTOGRAD_ENTRY[code] = hit
    return hit


def _called_from_autograd() -> bool:
    """True inside torch.autograd.backward/grad (before the engine runs a node). Asked for
    every call outside a module (an optimizer step is hundreds): the verdict per frame's
    code object is kept, so the walk is one dict lookup a frame."""
    import sys

    known = _AUTOGRAD_ENTRY
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        hit = known.get(code)
        if hit is None:
            hit = _is_autograd_entry(code)
        if hit:
            return True
        f = f.f_back
    return False


class _Recorder:
    """Turns emulator kernel calls into OpCalls with phases, modules and tensor ids."""

    def __init__(self, adapted: set[str], progress: ProgressFn | None, steps: int,
                 backward_kernels: Callable[[str], tuple[str, ...]] = lambda op: (),
                 setup: bool = False):
        self.adapted = adapted
        self.backward_kernels = backward_kernels
        # script mode: calls before the first module forward (or backward, or optimizer
        # step) are the "setup" phase: weight init, .to(device), precomputed tables
        self.in_setup = setup
        self.any_forward = False
        self.on_step_end: Callable[[], None] | None = None
        self.calls: list[OpCall] = []
        self.cpu_only: dict[str, int] = {}
        self.step = 1
        self.steps = steps
        self.progress = progress
        self.in_optimizer = False
        self.forward_started = False
        self.seen_backward = False
        self.module_stack: list[str] = []
        self.module_names: dict[int, str] = {}
        self.seq_origin: dict[int, tuple[str, str]] = {}
        self._next_id = 0
        self._op_names: dict = {}  # OpOverload -> (qualified name, overload)
        self.optimizer_notes: list[str] = []

    # -- tensor ids: fresh for every output, stable for inputs seen before. The id is
    # kept on the tensor object (a Python attribute keeps the PyObject alive with its
    # TensorImpl), never in a map keyed by address (addresses are reused) and without
    # holding a reference (AccumulateGrad copies gradients someone else references).
    def _meta(self, t, fresh: bool) -> TensorMeta:
        tid = None if fresh else getattr(t, "_opscan_id", None)
        if tid is None:
            self._next_id += 1
            tid = self._next_id
            t._opscan_id = tid
        dtype = _DTYPE_NAMES.get(t.dtype)
        if dtype is None:
            dtype = _DTYPE_NAMES[t.dtype] = str(t.dtype).replace("torch.", "")
        return TensorMeta(tid, dtype, tuple(t.shape))  # concrete sizes: Python ints

    def phase(self, backward_node) -> str:
        if self.in_setup and backward_node is None and not self.in_optimizer \
                and not self.module_stack:
            return SETUP
        self.in_setup = False
        if backward_node is not None:
            self.seen_backward = True
            return "backward"
        if self.in_optimizer:
            return "optimizer"
        if self.module_stack or (self.forward_started and not self.seen_backward):
            return "forward"
        return "other"

    def _names(self, op) -> tuple[str, str]:
        """(qualified name, `schema.overload`) of an OpOverload, made once per op."""
        from analyzer.trace.torch.npu_emulation import qualified_name

        names = self._op_names[op] = (qualified_name(op), f"{op._schema.name}.{op._overloadname}")
        return names

    def on_call(self, kc) -> None:
        import torch

        node = torch._C._current_autograd_node()
        phase = "backward" if kc.backward_of_composite else self.phase(node)
        if phase != "backward" and not self.module_stack and _called_from_autograd():
            phase = "backward"  # the engine's grad seed (ones_like in loss.backward())
            self.in_setup = False
        if phase == "backward":
            self.seen_backward = True
            if kc.origin is not None:
                module, source = kc.origin
            elif node is not None:
                module, source = self.seq_origin.get(node._sequence_nr(), ("", ""))
            else:
                module, source = "", user_source()
        else:
            module = self.module_stack[-1] if self.module_stack else ""
            source = user_source()
            seq = torch._C._autograd._get_sequence_nr() - 1
            if seq >= 0 and seq not in self.seq_origin:
                self.seq_origin[seq] = (module, source)
        names = self._op_names.get(kc.op)
        name, overload = names if names is not None else self._names(kc.op)
        in_ids = {id(t) for t in kc.inputs}
        inputs = [self._meta(t, False) for t in kc.inputs]
        outputs = [self._meta(t, id(t) not in in_ids) for t in kc.outputs]
        cpu_ops = list(dict.fromkeys(kc.cpu_ops))
        if cpu_ops == [name]:
            cpu_ops = []
        for c in cpu_ops:
            if c not in self.adapted and is_cpu_only_kernel(c):
                self.cpu_only[c] = self.cpu_only.get(c, 0) + 1
        if kc.backward_of_composite:
            kernels = self.backward_kernels(name)
            if kernels:  # what torch_npu runs: op-plugin's derivative (matmul_backward)
                for k, extra in enumerate(kernels):
                    self.calls.append(OpCall(len(self.calls), extra, extra, phase, inputs,
                                             outputs if k == 0 else [], module, source, [],
                                             cpu_ops if k == 0 else [], self.step))
                return (module, source)
        self.calls.append(OpCall(len(self.calls), name, overload, phase, inputs, outputs,
                                 module, source, [], cpu_ops, 0 if phase == SETUP else self.step))
        if self.progress is not None and len(self.calls) % 500 == 0:
            self.progress(self.step - 1, self.steps, len(self.calls))
        return (module, source)

    def settle_setup(self) -> None:
        """No module forward marked where the first step began: nothing was setup."""
        self.in_setup = False
        if not self.any_forward:
            for c in self.calls:
                if c.phase == SETUP:
                    c.phase, c.step = "other", 1

    # -- module stack (global hooks)
    def pre_forward(self, module, args) -> None:
        if id(module) not in self.module_names:
            if self.module_stack:
                self.module_names[id(module)] = f"{self.module_stack[-1]}.?{type(module).__name__}"
            else:
                for name, m in module.named_modules():
                    self.module_names.setdefault(id(m), name)
        self.module_stack.append(self.module_names[id(module)])
        self.forward_started = True
        self.any_forward = True
        self.in_setup = False

    def post_forward(self, module, args, output) -> None:
        if self.module_stack:
            self.module_stack.pop()

    # -- optimizer step hooks
    def optimizer_start(self, *_a) -> None:
        self.in_optimizer = True
        self.in_setup = False

    def optimizer_end(self, *_a) -> None:
        self.in_optimizer = False
        if self.step == 1:
            self.settle_setup()
        if self.on_step_end is not None:
            self.on_step_end()
        if self.progress is not None:
            self.progress(self.step, self.steps, len(self.calls))
        self.step += 1
        self.forward_started = False
        self.seen_backward = False
        self.seq_origin.clear()


def _optimizer_note(opt) -> str | None:
    """Which implementation the optimizer picks on npu (foreach is the npu default)."""
    from torch.optim.optimizer import _default_to_fused_or_foreach

    group = opt.param_groups[0] if opt.param_groups else {}
    fused, foreach = group.get("fused"), group.get("foreach")
    params = [p for g in opt.param_groups for p in g["params"]]
    if fused:
        return f"optimizer {type(opt).__name__}: fused=True (set by the model)"
    if foreach is None:
        _, chosen = _default_to_fused_or_foreach(params, bool(group.get("differentiable")),
                                                 use_fused=False)
        dev = params[0].device.type if params else "npu"
        return f"optimizer {type(opt).__name__}: foreach={chosen} ({dev} default)"
    return f"optimizer {type(opt).__name__}: foreach={foreach} (set by the model)"


@contextlib.contextmanager
def _hooks(rec: _Recorder):
    import torch
    from torch.nn.modules.module import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    h1 = register_module_forward_pre_hook(rec.pre_forward)
    # always_call: a forward that raises still leaves the module stack. Non-reentrant
    # checkpointing stops its recomputation in backward by raising inside the block's
    # forward once the last saved tensor is back; without it every later call of the
    # step (gradient clipping, EMA updates) was put in that block's forward.
    h2 = register_module_forward_hook(rec.post_forward, always_call=True)
    seen: set[int] = set()

    def note(opt, args, kwargs):
        if id(opt) not in seen:
            seen.add(id(opt))
            n = _optimizer_note(opt)
            if n:
                rec.optimizer_notes.append(n)

    h3 = register_optimizer_step_pre_hook(note)
    try:
        yield
    finally:
        for h in (h1, h2, h3):
            h.remove()
        del torch


# Later steps reuse the route rows of the last profiled step when their calls match it
# (see _StepProfiler); tests switch it off to compare with profiling every step.
REUSE_STEADY_ROUTE = True


def step_fingerprint(calls) -> tuple:
    """What a step dispatched, call by call, without its tensor ids: op, overload, phase,
    module, user source line, input and output dtypes and shapes, and the CPU kernels
    each emulated kernel dispatched. Two steps with equal fingerprints ran the same
    kernels on the same shapes from the same lines of the same modules."""
    return tuple((c.op, c.overload, c.phase, c.module, c.source,
                  tuple((t.dtype, t.shape) for t in c.inputs),
                  tuple((t.dtype, t.shape) for t in c.outputs), tuple(c.cpu_ops))
                 for c in calls)


class _StepProfiler:
    """Real mode: torch's RecordFunction profiler around the traced steps, with the
    emulator's kernels marking themselves, so `route.RouteFolder` reads what ran inside
    what. One session per step, folded into route rows at the step's end: nothing of a
    finished step is kept (peak RSS flat across --steps).

    The legacy (non-kineto) profiler: it records push/pop events only, and stopping and
    restarting it per step is safe. The kineto profiler (torch.profiler) was not: one
    session for the whole trace grew the peak RSS with every step (shufflenet 2.3x the
    plain run at --steps 4) and restarting it per step crashed the process (SIGSEGV while
    parsing its results).

    Steady state: recording every RecordFunction event costs about as much as the
    emulation itself (a transformer step: 6 ms plain, +20 ms profiler, +9 ms folding).
    Once two consecutive profiled steps have equal `step_fingerprint`s *and* fold into
    equal route rows, the profiler stays off and each later step whose fingerprint equals
    theirs is counted with their rows. The rows are a function of the RecordFunction
    events, and those are what the same kernels on the same shapes, called from the same
    source lines, record; the second profiled step checks that in this very run. A step
    whose fingerprint differs was not profiled: its rows are missing from the counts,
    a trace note says which step, and profiling resumes until the steady state is seen
    again. (Optimizers make step 1 differ from step 2, creating their state, so with
    --steps 4 typically steps 1-3 are profiled and step 4 reuses step 3's rows.)"""

    def __init__(self, emu, enabled: bool, calls: list | None = None):
        from analyzer.trace.torch.route import RouteFolder

        self.emu = emu
        self.enabled = enabled
        self.folder = RouteFolder()
        self._on = False
        self.calls = calls if calls is not None else []
        self._step_start = 0  # index in calls of the current step's first call
        self._step = 1
        self._ref: tuple | None = None  # (fingerprint, rows) of the last profiled step
        self._steady = False
        self.reused_steps = 0
        self.notes: list[str] = []

    @property
    def counts(self) -> Counter:
        return self.folder.counts

    def _start(self) -> None:
        import torch
        from torch.autograd.profiler_legacy import profile

        torch.autograd._enable_profiler_legacy(profile(use_cuda=False).config())
        self._on = True
        self.emu.profiling = True

    def _stop(self) -> Counter:
        """Stop the session; its route rows (also added to the totals)."""
        import torch

        self.emu.profiling = False
        self._on = False
        return self.folder.fold(torch.autograd._disable_profiler_legacy())

    def flush(self) -> None:
        """At a step's end: fold the step's records (or reuse the steady state's rows),
        then profile the next step unless the steady state holds."""
        if not self.enabled:
            return
        fingerprint = step_fingerprint(self.calls[self._step_start:])
        self._step_start = len(self.calls)
        if self._on:
            rows = self._stop()
            self._steady = (REUSE_STEADY_ROUTE and self._ref is not None
                            and self._ref[0] == fingerprint and self._ref[1] == rows)
            self._ref = (fingerprint, rows)
        elif self._ref is not None and self._ref[0] == fingerprint:
            self.counts.update(self._ref[1])
            self.reused_steps += 1
        else:
            self.notes.append(f"CPU route: step {self._step} was not profiled and its calls "
                              "differ from the steps before it, so its rows are not counted; "
                              "later steps are profiled")
            self._steady = False
        self._step += 1
        if not self._steady:
            self._start()

    def __enter__(self):
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc):
        if self._on:
            self._stop()
        elif self.enabled and len(self.calls) > self._step_start:
            # a step that failed, or a script's calls after its last optimizer step
            n = len(self.calls) - self._step_start
            self.notes.append(f"CPU route: the {n} call(s) after step {self._step - 1} "
                              "were not profiled, so their rows are not counted")
        return False


def _cpu_route(calls: list[OpCall], prof: _StepProfiler) -> list:
    from analyzer.trace.torch import route

    if prof.enabled:
        recorded = {route.base(c.op) for c in calls}  # they need no composite/view row
        counts = Counter({k: n for k, n in prof.counts.items()
                          if not (k[1] in ("view", "composite") and route.base(k[0]) in recorded)})
    else:
        counts = route.route_from_cpu_ops(calls)
    counts.update(route.foreach_route(calls))
    return route.to_rows(route.name_backward_kernels(counts, _backward_kernel_name))


def _backward_kernel_name(op: str) -> str:
    """`aten::matmul` -> `aten::matmul_backward`: what torch_npu runs for the backward of
    an adapted composite (the forward name + " (backward)" when op-plugin says nothing)."""
    import torch

    from analyzer.trace.torch.derivatives import backward_names

    names = backward_names(op, torch.__version__)
    return names[0] if names else f"{op} (backward)"


def _npu_context():
    import torch

    from analyzer.trace.torch.npu_emulation import DEVICE

    return torch.device(DEVICE)


def trace_torch(target: str | Path | Script, *, adapted: set[str],
                composite_adapted: set[str] | None = None, mode: str = "real",
                steps: int = 1, progress: ProgressFn | None = None,
                stage: Callable[[str], None] | None = None) -> Trace:
    """Trace `steps` training steps of a model file (or script) on the emulated NPU.

    adapted: ops (`aten::add.Tensor`, `aten::matmul`) the target torch_npu registers NPU
    kernels for. composite_adapted: of those, the ones registered with their own autograd
    (default: the adapted ops that are CompositeImplicitAutograd in this torch).
    mode: real (compute on CPU) or meta (no storage: shapes only).
    progress: (steps done, steps, calls so far) now and then; stage: a line per stage.
    Raises ModelError for a broken model file; an exception during a step gives a trace
    with partial=True and the error (ModelError when nothing was recorded).
    """
    import torch

    from analyzer.trace.torch.npu_emulation import Emulator, ensure_npu_backend

    if mode not in ("real", "meta"):
        raise ModelError(f"unknown mode {mode!r}", "use --mode real or --mode meta")
    if steps < 1:
        raise ModelError(f"--steps must be at least 1, got {steps}")
    if mode == "meta":
        heap.settle()  # torch's heap, before build() adds torch._dynamo's
    is_script = isinstance(target, Script)
    path = Path(target.path if is_script else target)
    from analyzer.trace.torch.derivatives import backward_names

    rec = _Recorder(set(adapted), progress, steps,
                    lambda op: backward_names(op, torch.__version__), setup=is_script)
    emu = Emulator(set(adapted), composite_adapted, mode, rec.on_call)
    trace = Trace(framework="torch", mode=mode, model=str(path), steps=steps,
                  framework_version=torch.__version__)
    ensure_npu_backend()
    emu.install()
    error: ModelError | None = None
    # Backward runs on the calling thread: the autograd engine sizes its per-device
    # queues once per process, so a device registered after the first backward (ours,
    # registered here) has no queue of its own; the CPU queue serves every device.
    single_thread = torch.autograd.set_multithreading_enabled(False)
    prof = _StepProfiler(emu, enabled=mode == "real", calls=rec.calls)
    rec.on_step_end = prof.flush
    frozen = heap.frozen_heap(enabled=mode == "real")
    frozen.__enter__()
    try:
        if stage is not None:
            stage(f"running {path.name}" if is_script else f"building {path.name}")
        if is_script:
            with _hooks(rec), prof:
                emu.recording = True
                try:
                    res = run_script(path, list(target.argv), steps, "torch",
                                     on_step=rec.optimizer_end,
                                     on_optimizer_start=rec.optimizer_start,
                                     context=_npu_context)
                finally:
                    emu.recording = False
            error = res.error
            trace.notes.extend(res.notes)
            trace.steps = max(res.steps_completed, 1) if res.error is None else steps
        else:
            entry = load_entry(path, "torch", context=_npu_context)
            heap.settle()
            cpu_params = [n for n, p in entry.model.named_parameters()
                          if p.device.type != "npu"] if hasattr(entry.model,
                                                                "named_parameters") else []
            if cpu_params:
                trace.notes.append(f"{len(cpu_params)} parameter(s) were not created on the "
                                   f"device (e.g. {cpu_params[0]}): ops on them alone are "
                                   "not traced")
            if entry.step_fn is None:
                trace.notes.append("inference-only entry: the step is one forward pass")
            with _hooks(rec), _npu_context(), optimizer_step_hooks(
                    "torch", rec.optimizer_start, lambda: setattr(rec, "in_optimizer", False)), \
                    prof:
                for s in range(1, steps + 1):
                    rec.step = s
                    if progress is not None:
                        progress(s - 1, steps, len(rec.calls))
                    emu.recording = True
                    try:
                        entry.run_step()
                    except Exception as e:  # noqa: BLE001 - the user's step failed
                        error = user_error(e, path, f"step {s}")
                        break
                    finally:
                        emu.recording = False
                    rec.optimizer_end()
    finally:
        single_thread.__exit__(None, None, None)
        emu.uninstall()
        frozen.__exit__(None, None, None)
    rec.settle_setup()
    trace.calls = rec.calls
    trace.cpu_route = _cpu_route(rec.calls, prof)
    trace.notes.extend(prof.notes)
    trace.cpu_only_ops = dict(sorted(rec.cpu_only.items()))
    trace.notes.extend(rec.optimizer_notes)
    trace.notes.extend(sorted(emu.meta_notes))
    if emu.meta_stand_ins:
        ops = ", ".join(f"{k} x{v}" for k, v in sorted(emu.meta_stand_ins.items()))
        trace.notes.append(f"meta mode: ops without a meta kernel ran on CPU on ones shaped "
                           f"like their inputs (sizes that depend on values assume every "
                           f"element selected): {ops}")
    if emu.unknown_ops:
        trace.notes.append(f"{len(emu.unknown_ops)} adapted op name(s) do not exist in torch "
                           f"{torch.__version__} (e.g. {emu.unknown_ops[0]})")
    return finish(trace, error)


def trace(model, *, mode: str = "real", steps: int = 1, adapted=(),
          script_argv: list[str] | None = None,
          progress: Callable[[str], None] | None = None) -> Trace:
    """The tracer contract of `analyzer.trace`: a model file, or a script when
    `script_argv` is a list."""
    from analyzer.progress import report_step

    target = Script(model, list(script_argv)) if script_argv is not None else model
    step_progress = None
    if progress is not None:
        progress("importing torch")
        step_progress = functools.partial(report_step, progress)  # (done, total, calls)
    result = trace_torch(target, adapted=set(adapted), mode=mode, steps=steps,
                         progress=step_progress, stage=progress)
    return result
