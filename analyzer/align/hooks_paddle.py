"""Recorder for Paddle (framework-only: imports paddle, nothing from opscan's tracer).

Per `paddle.nn.Layer` call: input and output statistics (forward pre/post hooks); output
and input gradients through tensor hooks; parameter gradients through parameter hooks.
At level "op", every `paddle._C_ops` function (the phi ops every Paddle API reaches) is
wrapped for the step and the output statistics of each call inside a Layer are recorded
as `Paddle.{op}.{n}.forward`. The same wrappers apply a planted Fault, capture one op's
inputs for a repro, and emulate AMP rounding where the CPU build has no AMP.
Dtypes are written in torch spelling (msprobe's compare expects it); "type" says paddle.
"""
from __future__ import annotations

import math
import weakref

import paddle

from analyzer.align.fault import Fault
from analyzer.align.gc_pause import GcPause
from analyzer.align.layout import StepDump
from analyzer.align.stacks import StackSites
from analyzer.align.stats import (PADDLE_TO_TORCH_DTYPE, STAGED_MAX, StepStats, host_reductions,
                                  place_grad, record_template, scalar_record)

# ops whose output is their input's numbers (views, metadata, allocation)
_SKIP_OPS = {"reshape", "reshape_", "squeeze", "unsqueeze", "squeeze_", "unsqueeze_", "transpose",
             "flatten", "flatten_", "slice", "split", "split_with_num", "unbind", "full",
             "full_like", "full_", "assign", "share_data", "view_shape", "view_dtype", "empty",
             "empty_like", "zeros", "ones", "shape", "shape64", "expand", "strided_slice"}
# AMP white list (ops that run in bf16/fp16 under O1)
AMP_WHITE = {"matmul", "linear", "linear_v2", "conv2d", "conv3d", "conv1d", "depthwise_conv2d",
             "conv2d_transpose", "bmm", "mm", "einsum", "fused_gemm_epilogue", "addmm"}


def _tstr(dtype) -> str:
    s = str(dtype)
    return PADDLE_TO_TORCH_DTYPE.get(s, s.replace("paddle.", "torch."))


_DTYPE_NAMES: dict = {}
# a DLPack view costs ~7 us whatever the size, Tensor.numpy()'s copy ~2.7 us plus the copy:
# the same at ~32K elements (measured on this machine), the copy cheaper below
_VIEW_MIN = 1 << 15
_LOW = None  # (paddle.bfloat16, paddle.float16), set on first use
_FLOAT = None  # (paddle.float32, paddle.float64), set on first use
_DTYPE_BY_ID: dict = {}  # id(dtype) -> torch spelling
_RECORD = record_template("paddle.Tensor")
_DTYPE_KEEP: list = []


def _dtype_name(dt) -> str:
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = _tstr(dt)
    return name


def _to_floats(vals: list) -> list:
    """One concatenation and one host transfer for a group of device vectors."""
    return paddle.concat(vals).numpy().tolist()


def queue_stats(t, batch: StepStats, on_device: bool | None = None,
                compact: bool = False) -> tuple[dict | tuple, list | None]:
    """Reduce `t` and queue the values in `batch`; -> (the record, filled by batch.flush();
    its slot).
    compact (the worker path, as hooks_torch.queue_stats): a host tensor's record is the
    tuple (dtype, shape, requires_grad[, NanCount, InfCount]) the worker expands into the
    dict (`stats.expand_records`); a device tensor's record stays a dict (filled here).
    CPU tensors: numpy reductions on the tensor's data (a DLPack view of a large
    tensor, no copy; a small one copied by `Tensor.numpy()`, cheaper than the view), read
    at once (ten times cheaper than five phi ops on the CPU; NaN/Inf counted only when the
    norm is not finite).
    Device tensors: Max, Min, Sum, Norm, NaN and Inf counts stacked on the device into one
    vector per tensor, converted with the whole step's at flush (no sync per tensor).
    on_device: force one path (tests run the device path on CPU tensors)."""
    global _LOW, _FLOAT
    import numpy as np

    shape = list(t.shape)
    dt = t.dtype
    name = _DTYPE_BY_ID.get(id(dt))  # (hashing a Paddle dtype costs ~0.5 us; they are singletons)
    if name is None:
        name = _DTYPE_BY_ID[id(dt)] = _dtype_name(dt)
        _DTYPE_KEEP.append(dt)  # the id stays this dtype's
    rec = (name, shape, not t.stop_gradient) if compact else dict(_RECORD, dtype=name, shape=shape)
    n = math.prod(shape)
    if n == 0:
        return rec, None
    if _FLOAT is None:
        _FLOAT = (paddle.float32, paddle.float64)
    # the common case first: a small float32/64 CPU tensor, copied by numpy() straight from
    # the tensor (no detached tensor made and freed: the same bytes as detach().numpy())
    if on_device is not True and n <= _VIEW_MIN and (dt is _FLOAT[0] or dt is _FLOAT[1]) \
            and (on_device is False or t.place.is_cpu_place()):
        a = t.numpy().reshape(-1)  # (a copy: staged as it is, reduced at flush)
        if n <= STAGED_MAX:
            return rec, batch.add_array(a, rec, n, dt is _FLOAT[0])
        slot = batch.add_large(a, rec, n, dt is _FLOAT[0])
        if slot is not None:  # else NaN/Inf or overflow: the careful path below
            return rec, slot
    if _LOW is None:
        _LOW = (paddle.bfloat16, paddle.float16)
    x = t.detach()
    if on_device if on_device is not None else not x.place.is_cpu_place():
        if compact:  # (filled by flush_device in this process)
            rec = dict(_RECORD, dtype=rec[0], shape=rec[1], requires_grad=rec[2])
        xf = x if x.dtype == paddle.float64 else x.astype("float32")
        v = paddle.stack([xf.max(), xf.min(), xf.sum(), paddle.linalg.norm(xf.flatten()),
                          paddle.isnan(xf).astype(xf.dtype).sum(), paddle.isinf(xf).astype(xf.dtype).sum()])
        return rec, batch.add((str(xf.place), str(xf.dtype)), (v,), rec, n, xf.dtype != paddle.float64, width=6)
    # paddle's dtypes are singletons: `is` (== costs a microsecond or more)
    if dt is _LOW[0] or dt is _LOW[1]:
        x = x.astype("float32")  # numpy has no bfloat16
    a = None
    if n > _VIEW_MIN:
        try:
            a = np.from_dlpack(x)  # a view of the tensor's memory
        except (BufferError, RuntimeError, TypeError, ValueError, AttributeError):
            pass
    if a is None:
        a = x.numpy()  # a copy
    a = a.reshape(-1)
    if a.dtype != np.float64 and a.dtype != np.float32:
        a = a.astype(np.float32)
    single = a.dtype != np.float64
    if n <= STAGED_MAX:
        return rec, batch.add_array(a, rec, n, single)
    slot = batch.add_large(a, rec, n, single)
    if slot is not None:
        return rec, slot
    mx, mn, total, norm = host_reductions(a)
    if norm is None:  # NaN/Inf, or squares that overflow: numpy's warnings off, NaN/Inf counted
        with np.errstate(all="ignore"):
            norm = float(np.sqrt(a.dot(a)))
            total = float(np.add.reduce(a))
        if not math.isfinite(norm):
            nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
            if compact:
                rec = rec[:3] + (nan, inf)
            else:
                rec["NanCount"], rec["InfCount"] = nan, inf
    return rec, batch.add_host((mx, mn, total, norm), rec, n, single)


def tensor_stats(t) -> dict:
    """One tensor's record, filled now (tests, one-off use; the recorder batches per step)."""
    batch = StepStats(_to_floats)
    with paddle.no_grad():
        rec, _ = queue_stats(t, batch)
    batch.flush()
    rec["requires_grad"] = not bool(t.stop_gradient)
    return rec


def is_tensor(x) -> bool:
    return isinstance(x, paddle.Tensor)


def flatten(obj, out: list) -> list:
    if is_tensor(obj):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            flatten(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            flatten(o, out)
    else:
        out.append(obj)
    return out


def _float(t) -> bool:
    return t.dtype in (paddle.float32, paddle.float64, paddle.float16, paddle.bfloat16)


class PhiOpWrappers:
    """Swaps every callable of paddle._C_ops for a wrapper while active."""

    def __init__(self, on_call):
        self.on_call = on_call
        self.saved: dict = {}

    def __enter__(self):
        ops = paddle._C_ops
        for name in dir(ops):
            if name.startswith("_"):
                continue
            fn = getattr(ops, name)
            if not callable(fn) or isinstance(fn, type):
                continue
            self.saved[name] = fn
            setattr(ops, name, self._wrap(name, fn))
        return self

    def _wrap(self, name, fn):
        on_call = self.on_call

        def wrapper(*args, **kwargs):
            return on_call(name, fn, args, kwargs)
        wrapper.__name__ = name
        return wrapper

    def __exit__(self, *exc):
        ops = paddle._C_ops
        for name, fn in self.saved.items():
            setattr(ops, name, fn)
        self.saved.clear()


class PaddleRecorder:
    framework = "paddle"

    def __init__(self, model, level: str = "module", scope: tuple[str, ...] = (),
                 fault: Fault | None = None, capture=None, amp: str | None = None):
        self.model = model
        self.level = level
        self.scope = tuple(scope)
        self.fault = fault
        self.fault_hit: dict | None = None
        self.capture = capture
        self.captured = None
        self.amp = amp  # emulated AMP rounding (CPU only): "bf16" | "fp16" | None
        self._handles = []
        self._ops = None
        self._busy = False
        self._gc = GcPause()
        self._sink = None  # stats_worker.WorkerWriter computing the statistics, or None
        self._compact = False
        self._param_owner: dict = {}
        self._reset()

    def install(self) -> "PaddleRecorder":
        root = self.model
        self._param_owner = {}  # a parameter shared by two layers is hooked once
        for path, mod in root.named_sublayers():
            cls = type(mod).__name__
            self._handles.append(mod.register_forward_pre_hook(self._pre(path, cls)))
            self._handles.append(mod.register_forward_post_hook(self._post(path, cls)))
            for pname, p in mod.named_parameters(include_sublayers=False):
                if not p.stop_gradient and id(p) not in self._param_owner:
                    self._param_owner[id(p)] = (path, cls, pname)
                    self._handles.append(p.register_hook(self._param_hook(path, cls, pname)))
        return self

    def remove(self) -> None:
        self._gc.resume()
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _reset(self):
        self.data: dict = {}
        self.construct: dict = {}
        self._calls: dict = {}
        self._batch = self._fresh_batch()
        self._cache: dict = {}  # id(tensor) -> (weakref, inplace version, record, slot)
        self._op_calls: dict = {}
        self._op_in_parent: dict = {}
        self._fault_seen = 0
        self._stack: list[str] = []
        self._watched: list = []  # per open call: its inputs' gradient targets, or None
        self._grad_targets: dict = {}  # id(tensor) -> (weakref, inplace version, [targets])
        if not hasattr(self, "_sites"):
            self._sites = StackSites()  # layer path -> its call site (captured once per run)
        self._sites.begin_step()

    def defer_to(self, sink) -> None:
        """Statistics of the following steps computed by `sink` (a stats_worker.WorkerWriter:
        `end_step` leaves the host statistics pending in the StepDump for it), or in-process
        (None)."""
        was, self._sink = self._sink, sink
        self._compact = sink is not None  # records as tuples, expanded by the worker
        if was is not None or sink is not None:  # (between steps) no batch of the other kind kept
            self._batch = self._fresh_batch()

    def _fresh_batch(self) -> StepStats:
        """An empty step's statistics, of the kind `defer_to` chose."""
        return self._sink.new_batch(_to_floats) if self._sink is not None else StepStats(_to_floats)

    def begin_step(self, step: int) -> None:
        self._reset()
        self.step = step
        self._gc.pause()
        if self.level == "op" or self.fault is not None or self.capture is not None or self.amp:
            self._ops = PhiOpWrappers(self._on_op).__enter__()

    def end_step(self) -> StepDump:
        if self._ops is not None:
            self._ops.__exit__(None, None, None)
            self._ops = None
        self._busy = True
        try:
            if self._sink is None:
                self._batch.flush()
            else:  # the host statistics are the worker's (stats_worker)
                self._batch.flush_device()
        finally:
            self._busy = False
            self._gc.resume()
        self._cache = {}
        self._grad_targets = {}
        return StepDump(step=self.step, rank=0, framework="paddle",
                        level="mix" if self.level == "op" else "L0",
                        data=self.data, construct=self.construct, stack=self._sites.stack_json(),
                        texts=self._batch.texts, stats=self._batch if self._sink is not None else None)

    # ------------------------------------------------------------ statistics
    def _stats(self, obj) -> dict:
        """obj's record; a tensor seen again unchanged in this step (a layer's input is the
        previous layer's output) shares its numbers; they arrive at end_step."""
        if not is_tensor(obj):
            return scalar_record(obj)
        hit = self._cache.get(id(obj))
        if hit is not None and hit[0]() is obj and hit[1] == obj._inplace_version():
            rec = hit[2]
            rg = not obj.stop_gradient
            if type(rec) is tuple:  # compact (queue_stats)
                rec = rec[:2] + (rg,) + rec[3:]
            else:
                rec = dict(rec, requires_grad=rg)
            if hit[3] is not None:
                StepStats.alias(hit[3], rec)
            return rec
        self._busy = True
        try:  # on a detached tensor: no autograd graph to keep out
            rec, slot = queue_stats(obj, self._batch, None, self._compact)
        finally:
            self._busy = False
        if type(rec) is dict:  # (a compact record has it already)
            rec["requires_grad"] = not obj.stop_gradient
        try:
            self._cache[id(obj)] = (weakref.ref(obj), obj._inplace_version(), rec, slot)
        except TypeError:
            pass
        return rec

    def _in_scope(self, key: str) -> bool:
        return not self.scope or any(key.startswith(f"Module.{s}.") for s in self.scope)

    # ------------------------------------------------------------ layer hooks
    def _pre(self, path, cls):
        def hook(layer, inputs):
            n = self._calls.get(path, 0)
            self._calls[path] = n + 1
            key = f"Module.{path}.{cls}.forward.{n}"
            self.construct[key] = self._stack[-1] if self._stack else None
            self._stack.append(key)
            flat = flatten(inputs, [])
            self.data[key] = {"input_args": [self._stats(a) for a in flat], "input_kwargs": {}}
            self._sites.seen(path, key)
            watched = None
            if paddle.is_grad_enabled():
                grads = [t for t in flat if is_tensor(t) and not t.stop_gradient]
                if grads:
                    bkey = f"Module.{path}.{cls}.backward.{n}"
                    watched = [self._watch_grad(t, (bkey, "output", i, len(grads)))
                               for i, t in enumerate(grads)]
            self._watched.append(watched)
            return None
        return hook

    def _post(self, path, cls):
        def hook(layer, inputs, outputs):
            key = self._stack.pop() if self._stack else f"Module.{path}.{cls}.forward.0"
            watched = self._watched.pop() if self._watched else None
            rec = self.data.pop(key, {"input_args": [], "input_kwargs": {}})
            flat = flatten(outputs, [])
            rec["output"] = [self._stats(o) for o in flat]
            self.data[key] = rec
            bkey = key.replace(".forward.", ".backward.")
            parent = self.construct.get(key)
            self.construct[bkey] = parent.replace(".forward.", ".backward.") if parent else None
            outs = [t for t in flat if is_tensor(t) and not t.stop_gradient] \
                if paddle.is_grad_enabled() else ()
            for i, t in enumerate(outs):
                self._watch_grad(t, (bkey, "input", i, len(outs)))
            if watched and not outs:
                # no output carries a gradient: no backward for this layer (the gradient its
                # inputs get comes from their other uses; see hooks_torch)
                for targets, target in watched:
                    targets.remove(target)
            return None
        return hook

    def _watch_grad(self, t, target: tuple) -> tuple[list, tuple]:
        """Record t's gradient into target (backward key, side, index, count); a layer's
        input is often the previous layer's output: one tensor hook serves both records
        (unless the tensor was changed in place in between), where a hook each cost a
        registration and a call from the engine each. -> (the hook's targets, target)."""
        hit = self._grad_targets.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == t._inplace_version():
            hit[2].append(target)
            return hit[2], target
        targets = [target]
        try:
            t.register_hook(self._grad_hook(targets))
        except (RuntimeError, ValueError):
            return targets, target  # leaf tensors that do not keep gradients
        try:
            self._grad_targets[id(t)] = (weakref.ref(t), t._inplace_version(), targets)
        except TypeError:
            pass
        return targets, target

    def _grad_hook(self, targets: list):
        def hook(g):
            if not targets:
                return None
            rec_g = self._stats(g) if g is not None else None
            place_grad(self.data, targets, rec_g)
            return None
        return hook

    def _param_hook(self, path, cls, pname):
        key = f"Module.{path}.{cls}.parameters_grad.0"

        def hook(g):
            rec = self.data.get(key)
            if rec is None:
                rec = self.data[key] = {}
            rec[pname] = [self._stats(g)]
            return None
        return hook

    # ------------------------------------------------------------ op calls
    def _on_op(self, name, fn, args, kwargs):
        if self._busy or not self._stack:
            return fn(*args, **kwargs)
        if self.amp and name in AMP_WHITE:
            out = self._amp_call(fn, args, kwargs)
        else:
            out = fn(*args, **kwargs)
        parent = self._stack[-1]
        if self.fault is not None and self.fault_hit is None and self.step == self.fault.step \
                and name in self.fault.names("paddle"):
            if self._fault_seen == self.fault.occurrence:
                self._busy = True
                try:
                    out = _perturb(out, self.fault.rel)
                finally:
                    self._busy = False
                self.fault_hit = {"module": parent, "op": name, "kind": self.fault.kind}
            self._fault_seen += 1
        if name in _SKIP_OPS:
            return out
        if self.capture is not None:
            self._maybe_capture(name, parent, out, args, kwargs)
        if self.level != "op" or not self._in_scope(parent):
            return out
        n = self._op_calls.get(name, 0)
        self._op_calls[name] = n + 1
        key = f"Paddle.{name}.{n}.forward"
        self.construct[key] = parent
        self.data[key] = {"input_args": [], "input_kwargs": {},
                          "output": [self._stats(o) for o in flatten(out, [])]}
        if self.fault_hit is not None and self.fault_hit.get("op") == name and "op_key" not in self.fault_hit:
            self.fault_hit["op_key"] = key
        return out

    def _amp_call(self, fn, args, kwargs):
        """Round float inputs and the output to the AMP dtype (compute stays float32 on CPU)."""
        dt = {"bf16": "bfloat16", "fp16": "float16"}[self.amp]
        self._busy = True
        try:
            def rnd(x):
                if is_tensor(x) and x.dtype == paddle.float32:
                    return x.astype(dt).astype("float32")
                return x
            args = [rnd(a) for a in args]
            out = fn(*args, **kwargs)
            if is_tensor(out):
                out = rnd(out)
            return out
        finally:
            self._busy = False

    def _maybe_capture(self, name, parent, out, args, kwargs):
        want_parent, want_op, want_n = self.capture
        if parent != want_parent or name != want_op or self.captured is not None:
            return
        k = (parent, name)
        n = self._op_in_parent.get(k, 0)
        self._op_in_parent[k] = n + 1
        if n == want_n:
            def np_(x):
                return x.detach().numpy() if is_tensor(x) else x
            self.captured = {"op": name, "args": [np_(a) for a in args],
                             "kwargs": {k2: np_(v) for k2, v in kwargs.items()},
                             "out": [np_(o) for o in flatten(out, [])]}


def _perturb(out, rel):
    if is_tensor(out):
        return out * (1 + rel) if _float(out) else out
    if isinstance(out, (tuple, list)) and out and is_tensor(out[0]):
        return type(out)([_perturb(out[0], rel), *out[1:]])
    return out

