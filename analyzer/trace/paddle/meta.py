"""Meta-mode Paddle tracing: build the training step as a PIR static program, run nothing.

The model file's `build()` and `step_fn()` run with `paddle.enable_static()` inside a
`program_guard`, so layers put their parameters in a startup program that is never run
and every tensor is a `pir.Value` with dtype and shape only: no storage at all, however
big the model. Inside the step:
- `loss.backward()` (`pir.Value.backward`, patched) appends the grad ops with
  `paddle.static.append_backward`;
- `optimizer.step()` becomes `optimizer.apply_gradients(params_grads)`; `clear_grad()`
  does nothing; `optimizer.minimize(loss)` works as it is.
Every `pd_op.*` op the step added is mapped to the phi kernel it would run
(`analyzer.trace.paddle.names.kernel_for`: `pd_op.adam_` -> `adam`, `pd_op.batch_norm_` ->
`batch_norm`); graph plumbing (`builtin.*`, `pd_op.data`, `pd_op.full_int_array`) is
skipped. Op functions are wrapped as in real mode to give each op its layer path and
source line; grad ops take the layer of the forward op they differentiate, found
through the values they share. While it builds, `_lean_build` cuts two parts of Paddle's
static build that a meta trace never reads (each op's recorded Python call stack; the
startup-program initialisers of optimizer accumulators): most of a small model's meta scan.

Real model code that needs dygraph (`register_buffer`, `set_value`, reading a value with
`int(t)`) is handled by `analyzer.trace.paddle.meta_values` and noted in the trace.
append_backward's gradient-accumulation `add_n` is recorded as the `add` kernels the NPU
runs in dygraph (`_accumulation_adds`).

Known differences from real (dygraph) mode come from the static branches of Paddle's
own Python API code; they are not papered over in the trace: `STATIC_VS_DYGRAPH` (same
role, other kernel name; `dygraph_equivalent()` applies it when a caller compares) and
`STATIC_ONLY` / `DYGRAPH_ONLY` (kernels only one mode launches) list them.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, Callable

from analyzer.errors import ModelError
from analyzer.model import OpCall, TensorMeta, Trace
from analyzer.trace import heap
from analyzer.trace.entry import load_entry, user_error, user_source
from analyzer.trace.patches import AttrPatches
from analyzer.trace.paddle.meta_values import ValueShims
from analyzer.trace.paddle.names import NON_KERNEL_PROGRAM_OPS, aliases_for, dtype_name, kernel_for
from analyzer.trace.partial import finish
from analyzer.trace.paddle.real import op_function_slots

# Program kernel -> the kernel dygraph launches for the same thing (same role, other
# name). Checked on Paddle 3.3.1 with the bundled examples.
STATIC_VS_DYGRAPH = {
    # backward seed: dygraph fills d(loss) with `full`, append_backward with `full_like`.
    "full_like": "full",
}

# Differences that are not renames: Paddle's Python API takes a different branch (or
# C++ does the work without a kernel launch) in dygraph. kernel -> why.
STATIC_ONLY = {
    "mean": "F.cross_entropy(reduction='mean') reduces with paddle.mean in a program, "
            "with mean_all in dygraph",
    "mean_grad": "grad of the program-only mean above",
    "gather_nd": "indexing with a tensor (`h[idx]`): a program stacks the indices and "
                 "gathers with gather_nd, dygraph runs index_elementwise_get",
    "gather_nd_grad": "grad of the program-only gather_nd above",
    "stack": "the index stacking of the program-only gather_nd above",
    "unsqueeze": "the index reshaping of the program-only gather_nd above",
}
DYGRAPH_ONLY = {
    "not_equal": "F.cross_entropy's dygraph branch builds a valid-label mask "
                 "(label != ignore_index) that the program branch does not",
    "cast": "the same dygraph-only mask in F.cross_entropy",
    "multiply": "the same dygraph-only mask in F.cross_entropy",
    "mean_all": "F.cross_entropy(reduction='mean') reduces with mean_all in dygraph, "
                "with mean in a program",
    "mean_all_grad": "grad of the dygraph-only mean_all above",
    "index_elementwise_get": "indexing with a tensor (`h[idx]`) in dygraph; gather_nd in "
                             "a program",
    "index_elementwise_get_grad": "grad of the dygraph-only index_elementwise_get above",
    "div_scale": "Tensor / Python number: dygraph's divide runs div_scale, a program "
                 "multiplies by the reciprocal with scale",
}


def dygraph_equivalent(kernel: str) -> str:
    return STATIC_VS_DYGRAPH.get(kernel, kernel)


class _State:
    def __init__(self, main: Any):
        self.main = main
        self.params_grads: list | None = None
        self.ranges: list[tuple[int, int, str]] = []  # (start op, end op, phase)
        self.api: list[tuple[int, int, str, str]] = []  # (start, end, module, source)
        self.layers: list[str] = []
        self.step_starts: list[int] = []

    def n_ops(self) -> int:
        """Watermark: the id of the newest op (PIR op ids grow with creation; parameter
        and data ops are inserted at the block's front, so positions are not stable)."""
        block = self.main.global_block()  # `block.ops` lists every op, `num_ops()` counts
        return -1 if block.empty() else block.back().id()  # them: O(n) per call


@contextlib.contextmanager
def _patched(state: _State, names: dict[int, str]):
    import paddle

    patches = AttrPatches()
    put = patches.put

    def backward(loss, *args, **kwargs):
        start = state.n_ops()
        state.params_grads = paddle.static.append_backward(loss)
        state.ranges.append((start, state.n_ops(), "backward"))

    def step(opt, *args, **kwargs):
        if state.params_grads is None:
            raise RuntimeError("optimizer.step() ran before loss.backward()")
        start = state.n_ops()
        opt.apply_gradients(state.params_grads)
        state.ranges.append((start, state.n_ops(), "optimizer"))

    def minimize(fn):
        def wrapper(opt, *args, **kwargs):
            start = state.n_ops()
            out = fn(opt, *args, **kwargs)
            state.ranges.append((start, state.n_ops(), "optimizer"))
            return out
        return wrapper

    def noop(*args, **kwargs):
        return None

    def wrap_op(name, fn):
        def wrapper(*args, **kwargs):
            start = state.n_ops()
            out = fn(*args, **kwargs)
            state.api.append((start, state.n_ops(), state.layers[-1] if state.layers else "",
                              user_source()))
            return out
        return wrapper

    layer_cls = paddle.nn.Layer
    layer_call = layer_cls.__call__

    def call(layer, *args, **kwargs):
        path = names.get(id(layer))
        if path is None:
            parent = state.layers[-1] if state.layers else None
            path = type(layer).__name__ if parent is None else f"{parent}.{type(layer).__name__}"
        state.layers.append(path)
        try:
            return layer_call(layer, *args, **kwargs)
        finally:
            state.layers.pop()

    try:
        put(paddle.pir.Value, "backward", backward)
        base = paddle.optimizer.Optimizer
        classes, todo = [base], [base]
        while todo:
            for sub in todo.pop().__subclasses__():
                if sub not in classes:
                    classes.append(sub)
                    todo.append(sub)
        for cls in classes:
            if "step" in vars(cls):
                put(cls, "step", step)
            if "minimize" in vars(cls):
                put(cls, "minimize", minimize(vars(cls)["minimize"]))
            for attr in ("clear_grad", "clear_gradients"):
                if attr in vars(cls):
                    put(cls, attr, noop)
        wrapped: dict[int, Callable] = {}
        for owner, attr, name, fn in op_function_slots():
            w = wrapped.get(id(fn)) or wrapped.setdefault(id(fn), wrap_op(name, fn))
            put(owner, attr, w)
        put(layer_cls, "__call__", call)
        yield
    finally:
        patches.restore()


@contextlib.contextmanager
def _lean_build():
    """Three pieces of Paddle's static build that a meta trace never uses, cut while it runs.

    Op call stacks: Paddle's static op builders (C++ `CallStackRecorder`) call Python's
    `traceback.extract_stack()` for every op they append and store the whole stack, every
    line read through linecache, as the op's `op_callstack` attribute: 0.5-1 ms an op,
    most of a small model's meta build (MobileNetV3: 2,900 ops, parameters, optimizer
    accumulators and their initialisers included). Paddle reads that attribute only to
    print errors of a program run; the value-read slices of `meta_values` are the only
    runs and fall back to a placeholder on any failure, and opscan takes each op's source
    line from its own wrappers. A call from C (the caller's frame does not name
    `extract_stack`) gets an empty stack; Python callers get the real one.

    Initialisers of persistable values: `paddle.pir.core.create_persistable_value` (optimizer
    accumulators: Adam's two moments and two beta powers per parameter; AMP's loss scale)
    appends an initialiser and a `set_persistable_value` to the startup program and a
    `pd_op.data` to the main program. The startup program is never run in meta mode, so
    only the main program's value is made (same name, shape, dtype, persistable); a
    distributed value (`dist_attr`) goes through Paddle's own function.

    Layer struct names: in a PIR program every `Layer.__call__` runs inside
    `paddle.base.framework.name_struct`, which lists every op of the program on entry and
    on exit (`global_block().ops` builds the whole list: quadratic in the program's size,
    ~0.05 s of MobileNetV3's build) to stamp the new ops with a `struct_name` attribute
    for auto-parallel. Nothing in a meta trace reads it (opscan names an op's layer from
    its own `Layer.__call__` wrapper), so the layer call goes straight to `forward`.
    """
    import traceback

    import paddle.nn.layer.layers as layers
    import paddle.pir.core as pir_core

    real_stack = traceback.extract_stack
    real_persistable = pir_core.create_persistable_value

    def extract_stack(f=None, limit=None):
        try:
            caller = sys._getframe(1)
        except ValueError:  # called from C with no Python frame at all
            return real_stack(f, limit)
        if f is None and limit is None and "extract_stack" not in caller.f_code.co_names:
            return traceback.StackSummary()
        return real_stack(caller if f is None else f, limit)

    def create_persistable_value(dtype, shape, name=None, **kwargs):
        if "initializer" not in kwargs or kwargs.get("dist_attr"):
            return real_persistable(dtype, shape, name, **kwargs)  # its checks, its errors
        if dtype is not None and not isinstance(dtype, pir_core.DataType):
            dtype = pir_core.convert_np_dtype_to_dtype_(dtype)
        with pir_core.program_guard(pir_core.default_main_program()):
            pir_core.reset_insertion_point_to_start()
            value = pir_core.data(name or pir_core.unique_name.generate("persistable_value"),
                                  shape, dtype, pir_core.Place())
        value.persistable = True
        return value

    @contextlib.contextmanager
    def name_struct(prefix=None):
        yield

    patches = AttrPatches()
    patches.put(traceback, "extract_stack", extract_stack)
    patches.put(pir_core, "create_persistable_value", create_persistable_value)
    if hasattr(layers, "name_struct"):
        patches.put(layers, "name_struct", name_struct)
    try:
        yield
    finally:
        patches.restore()


def _meta(v: Any, ids: dict) -> TensorMeta:
    """The TensorMeta of value `v`, made once per value (a PIR value's type is fixed when
    it is created, and a value is read by several ops); `ids` maps value keys to them,
    tensor ids counting up in order of first sight."""
    key = _key(v)
    meta = ids.get(key)
    if meta is None:
        try:
            dtype = dtype_name(v.dtype)
            shape = tuple(int(d) for d in v.shape)
        except Exception:  # noqa: BLE001 - non-tensor values (vectors of tensors)
            dtype, shape = "", ()
        meta = ids[key] = TensorMeta(len(ids) + 1, dtype, shape)
    return meta


def program_calls(state: _State, first_op: int) -> tuple[list[OpCall], dict[str, int]]:
    """OpCalls for the ops the step added; also counts of skipped non-kernel ops."""
    ops = sorted(state.main.global_block().ops, key=lambda op: op.id())
    step_of = []
    starts = sorted(state.step_starts)
    ids: dict = {}
    skipped: dict[str, int] = {}
    calls: list[OpCall] = []
    fwd_by_value: dict[str, list[int]] = {}
    api_of = _innermost_api(state.api, [op.id() for op in ops])
    for op in ops:
        i = op.id()
        if i <= first_op:
            continue
        full = op.name()
        dialect, _, base = full.partition(".")
        if dialect != "pd_op" or base in NON_KERNEL_PROGRAM_OPS:
            skipped[full] = skipped.get(full, 0) + 1
            continue
        phase = "forward"
        for s, e, ph in state.ranges:
            if s < i <= e:
                phase = ph
        step = sum(1 for s in starts if s < i) or 1
        module, source = api_of.get(i, ("", ""))
        kernel = kernel_for(base)
        operands = list(op.operands_source())
        results = list(op.results())
        c = OpCall(index=len(calls), op=kernel, overload="", phase=phase, step=step,
                   module=module, source=source, aliases=aliases_for(kernel, base))
        operands = [v for v in operands if v is not None and v.initialized()]  # optionals
        c.inputs = [_meta(v, ids) for v in operands if _is_tensor(v)]
        c.outputs = [_meta(v, ids) for v in results if _is_tensor(v)]
        if phase == "forward":
            for v in operands + results:
                if v is not None:
                    fwd_by_value.setdefault(_key(v), []).append(len(calls))
        elif phase == "backward" and kernel.endswith("_grad"):
            want = kernel[: -len("_grad")]
            for v in operands:
                hit = next((j for j in fwd_by_value.get(_key(v), ())
                            if calls[j].op == want), None)
                if hit is not None:
                    c.module, c.source = calls[hit].module, calls[hit].source
                    break
        if phase == "backward" and kernel == "add_n":
            calls.extend(_accumulation_adds(c, operands, ids, len(calls)))
            continue
        calls.append(c)
        step_of.append(step)
    return calls, skipped


def _innermost_api(api: list[tuple[int, int, str, str]],
                   op_ids: list[int]) -> dict[int, tuple[str, str]]:
    """op id -> (module, source) of the innermost wrapped API call that created it: the
    shortest interval (start, end] holding the id, the later-recorded one of two equal
    ones (wrappers record on exit, so that is the outer call). Written from the longest
    interval to the shortest, each over the ids it holds (bisect), instead of testing every
    interval against every op (2,200 x 2,900 for MobileNetV3)."""
    import bisect

    ids = sorted(op_ids)
    out: dict[int, tuple[str, str]] = {}
    order = sorted(range(len(api)), key=lambda k: (api[k][0] - api[k][1], k))
    for k in order:
        s, e, mod, src = api[k]
        for i in ids[bisect.bisect_right(ids, s): bisect.bisect_right(ids, e)]:
            out[i] = (mod, src)
    return out


def _accumulation_adds(c: OpCall, operands: list, ids: dict, index: int) -> list[OpCall]:
    """append_backward sums the k gradients of a value used by several ops with one
    `add_n`; Paddle's dygraph backward on the NPU adds them pairwise with k - 1 `add`
    kernels (`analyzer.trace.paddle.real.accumulations`). The trace follows the NPU."""
    from analyzer.trace.paddle.real import CPU_ACCUMULATE

    parts = []
    for v in operands:
        op = v.get_defining_op()
        if op is not None and op.name() == "builtin.combine":
            parts += [x for x in op.operands_source() if x is not None]
        else:
            parts.append(v)
    out = []
    for k in range(max(1, len(parts) - 1)):
        a = OpCall(index=index + k, op="add", overload="", phase="backward", step=c.step,
                   module=c.module, source=c.source, aliases=aliases_for("add"),
                   cpu_ops=[CPU_ACCUMULATE])
        a.inputs = [_meta(v, ids) for v in parts[k: k + 2]] if k == 0 else \
            [out[-1].outputs[0], _meta(parts[k + 1], ids)]
        if k >= len(parts) - 2 or not c.outputs:
            a.outputs = list(c.outputs)
        else:  # a partial sum: a fresh tensor id
            partial = TensorMeta(len(ids) + 1, c.outputs[0].dtype, c.outputs[0].shape)
            ids[f"partial-sum|{len(ids)}"] = partial
            a.outputs = [partial]
        out.append(a)
    return out


def _key(v: Any) -> str:
    """A pir.Value's identity. Never use the Value itself as a dict key: its `__eq__`
    builds a `pd_op.equal` op and its hash differs between Python wrappers."""
    return v.id


def _is_tensor(v: Any) -> bool:
    try:
        return v.is_dense_tensor_type() or v.is_selected_row_type()
    except Exception:  # noqa: BLE001
        return True


def trace_meta(path: Path, *, steps: int = 1, progress: Callable[[str], None] | None = None,
               script_argv: list[str] | None = None) -> Trace:
    import paddle

    heap.settle()  # paddle's heap; again once the model is built

    if script_argv is not None:
        raise ModelError(f"{path}: meta mode needs a model file with build()",
                         "use mode real for --script, or add build() to the file")
    main, startup = paddle.static.Program(), paddle.static.Program()
    state = _State(main)
    trace = Trace(framework="paddle", mode="meta", model=str(path), steps=steps,
                  framework_version=paddle.__version__)
    error: ModelError | None = None
    was_dynamic = paddle.in_dynamic_mode()
    paddle.enable_static()
    shims = ValueShims(main)
    try:
        with paddle.static.program_guard(main, startup), shims.installed(), \
                _lean_build():
            if progress:
                progress(f"building {path} as a static program")
            entry = load_entry(path, "paddle")
            heap.settle()
            names = {}
            if isinstance(entry.model, paddle.nn.Layer):
                names = {id(m): p for p, m in entry.model.named_sublayers(include_self=True)}
            first = state.n_ops()
            with _patched(state, names):
                for k in range(1, steps + 1):
                    if progress:
                        progress(f"step {k}/{steps}")
                    state.step_starts.append(state.n_ops())
                    state.params_grads = None
                    try:
                        entry.run_step()
                    except Exception as e:  # noqa: BLE001 - any user failure
                        error = user_error(e, path, f"step {k} (meta mode)",
                                           "the step ran as a static program (see the "
                                           "meta-mode notes); use mode real if it needs "
                                           "dygraph-only features")
                        break
            calls, skipped = program_calls(state, first)
    finally:
        if was_dynamic:
            paddle.disable_static()
    trace.calls = calls
    trace.notes.append("kernel names: PIR program ops mapped through the installed phi "
                       "kernel registry and Paddle's op YAML")
    trace.notes += shims.notes()
    n_acc = sum(1 for c in calls if c.cpu_ops)
    if n_acc:
        trace.notes.append(f"{n_acc} gradient accumulation(s): append_backward's add_n is "
                           "recorded as the `add` kernels Paddle runs on the NPU in dygraph "
                           "(k - 1 adds for k gradients)")
    if skipped:
        trace.notes.append("program-only ops skipped: " + ", ".join(
            f"{k} x{v}" for k, v in sorted(skipped.items())))
    return finish(trace, error)
