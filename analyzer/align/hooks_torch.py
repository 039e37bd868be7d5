"""Recorder for torch (framework-only: imports torch, nothing from opscan's tracer).

Per module call (`nn.Module` forward hooks): input and output statistics; per backward:
gradients of the outputs (msprobe's backward "input") and of the inputs (its "output"),
taken with tensor hooks so in-place ops after a module (ReLU(inplace), `out += identity`)
keep working; parameter gradients after accumulation. At level "op" a TorchDispatchMode
records the output statistics of every aten op called inside the modules in scope (only
forward calls: the backward's ops run outside any module). The same mode applies a Fault.
"""
from __future__ import annotations

import math
import weakref
from collections import OrderedDict

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from analyzer.align.fault import Fault
from analyzer.align.gc_pause import GcPause
from analyzer.align.layout import StepDump
from analyzer.align.stacks import StackSites
from analyzer.align.stats import (CHUNKED_MIN, STAGED_MAX, StepStats, place_grad, record_template,
                                  scalar_record)

# ops that return a view or metadata of their input: same numbers as their input
_SKIP_OPS = {"detach", "alias", "lift_fresh", "_unsafe_view", "view", "t", "transpose",
             "permute", "expand", "unsqueeze", "squeeze", "slice", "select", "as_strided",
             "split", "split_with_sizes", "unbind", "chunk", "clone", "empty", "zeros", "ones",
             "full", "empty_like", "zeros_like", "ones_like", "_to_copy_noop"}


def _to_floats(vals: list) -> list:
    """One stack and one host transfer for a whole group of device scalars."""
    return torch.stack(vals).tolist()


_DTYPE_NAMES: dict = {}
_RECORD = record_template("torch.Tensor")
_F32, _F64 = torch.float32, torch.float64
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # subclasses (FakeTensor, DTensor, ...) take torch's path
# CPU tensors up to this many elements reduce through numpy (stats.host_reductions: above
# 16K elements in 1 MB chunks, 1.2-1.5x cheaper than torch's aminmax, sum and vector_norm
# and closer to float64); a test sets it to 0 to compare with torch's reductions
_NUMPY_MAX = 1 << 62


def queue_stats(t: torch.Tensor, batch: StepStats, on_device: bool | None = None,
                compact: bool = False) -> tuple[dict | tuple, list | None]:
    """Reduce `t` where it lives (in float32 or float64) and queue the values in `batch`;
    -> (the record, filled by batch.flush(); its slot).
    compact (the worker path): a host tensor's record is the tuple (dtype, shape,
    requires_grad[, NanCount, InfCount]) the worker expands into the dict
    (`stats.expand_records`); a device tensor's record stays a dict (filled here).
    CPU tensors: numpy reductions on the tensor's own memory (max, min, sum, the dot
    product for the L2 norm; a third of the cost of three torch reductions and their
    `.item()`s on a small tensor; above 16K elements in 1 MB chunks read in memory order,
    stats.host_reductions), read at once (no sync to avoid); where numpy cannot see
    the tensor, or the sum of squares could overflow or meet a NaN/Inf, torch's aminmax, sum
    and vector_norm instead, NaN/Inf counted only when the norm is not finite (a finite L2
    norm means no NaN and no Inf). Device tensors: the values and the NaN/Inf counts stay
    on the device until the step's one conversion.
    on_device: force one path (tests run the device path on CPU tensors)."""
    dt = t.dtype
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt)
    rec = (name, list(t.shape), t.requires_grad) if compact else dict(_RECORD, dtype=name, shape=list(t.shape))
    # the common case first, with as few attribute reads as possible: a plain float32/64
    # CPU tensor small enough for numpy (the same numbers as the general path below)
    if on_device is not True and (dt is _F32 or dt is _F64) and type(t) in _PLAIN \
            and (on_device is False or t.is_cpu):
        n = t.numel()
        if 0 < n <= _NUMPY_MAX:
            # the worker path: a dense tensor's bytes copied from its address by one memmove
            # (stats_worker.DeferredStepStats.copy_from), the same bytes numpy's view would
            # give in the same order (C-contiguous: memory order is the ravel order; not a
            # negative-bit view, whose stored values are the negatives of its numbers)
            if n <= CHUNKED_MIN and batch.by_address:
                try:
                    slot = batch.copy_from(t.data_ptr(), rec, n, dt is _F32) \
                        if t.is_contiguous() and not t.is_neg() else None
                except RuntimeError:  # no strided storage to point at (sparse, a functorch wrapper)
                    slot = None
                if slot is not None:
                    return rec, slot
            try:
                # force=True: the detached view made inside the call (a Python-level
                # detach() cost ~3,200 instructions more per tensor that requires grad)
                a = t.numpy(force=True) if t.requires_grad else t.numpy()
                a = a.ravel() if n <= CHUNKED_MIN else a.ravel("K")  # (a view in memory order)
            except (RuntimeError, TypeError):  # a tensor numpy cannot see (conj/neg view, ...)
                a = None
            if a is not None:
                if n <= STAGED_MAX:  # copied now, reduced with the step's others at flush
                    return rec, batch.add_array(a, rec, n, dt is _F32)
                slot = batch.add_large(a, rec, n, dt is _F32)
                if slot is not None:  # else NaN/Inf or overflow: torch's path below
                    return rec, slot
    x = t.detach() if t.requires_grad else t  # (numpy refuses a tensor that requires grad)
    n = x.numel()
    if n == 0:
        return rec, None
    if dt is not _F32 and dt is not _F64:
        if x.is_complex():
            x = x.abs()
        if x.dtype is not _F64:
            x = x.to(_F32)
    if not (on_device if on_device is not None else not x.is_cpu):  # CPU: read at once, no sync
        single = x.dtype is not _F64
        if n <= _NUMPY_MAX and type(t) in _PLAIN and x.dtype is not dt:  # converted: not tried above
            try:
                a = x.numpy().reshape(-1)
            except (RuntimeError, TypeError):
                a = None
            if a is not None:
                if n <= STAGED_MAX:
                    return rec, batch.add_array(a, rec, n, single)
                slot = batch.add_large(a, rec, n, single)
                if slot is not None:
                    return rec, slot
        mx, mn, total, nv, nan, inf = _torch_reductions(x)
        if compact:
            rec = rec[:3] + (nan, inf)
        else:
            rec["NanCount"], rec["InfCount"] = nan, inf
        slot = batch.add_host((mx, mn, total, nv), rec, n, single)
    else:
        if compact:  # (filled by flush_device in this process)
            rec = dict(_RECORD, dtype=rec[0], shape=rec[1], requires_grad=rec[2])
        mn, mx = torch.aminmax(x)
        norm = torch.linalg.vector_norm(x)
        slot = batch.add((x.device, x.dtype), (mx, mn, x.sum(), norm, torch.isnan(x).sum().to(x.dtype),
                                               torch.isinf(x).sum().to(x.dtype)), rec, n, x.dtype is not _F64)
    return rec, slot


def _torch_reductions(x: torch.Tensor) -> tuple:
    """(Max, Min, Sum, Norm, NanCount, InfCount) of a float32/float64 CPU tensor by torch's
    reductions in its dtype (the careful path: NaN/Inf, squares that overflow, a tensor
    numpy cannot see); NaN/Inf counted only when the norm is not finite."""
    mn, mx = torch.aminmax(x)
    nv = torch.linalg.vector_norm(x).item()
    nan = inf = 0
    if not math.isfinite(nv):
        nan, inf = int(torch.isnan(x).sum()), int(torch.isinf(x).sum())
    return mx.item(), mn.item(), x.sum().item(), nv, nan, inf


def _staged_fallback(a) -> tuple:
    """StepStats' fallback for a staged array (a copy of a small tensor's numbers) that
    holds NaN/Inf or could overflow: torch's careful path on it, as before staging."""
    return _torch_reductions(torch.from_numpy(a))


def new_step_stats() -> StepStats:
    return StepStats(_to_floats, _staged_fallback)


def tensor_stats(t: torch.Tensor) -> dict:
    """One tensor's record, filled now (tests, one-off use; the recorder batches per step)."""
    batch = new_step_stats()
    rec, _ = queue_stats(t, batch)
    batch.flush()
    rec["requires_grad"] = bool(t.requires_grad)
    return rec


def flatten(obj, out: list) -> list:
    if isinstance(obj, torch.Tensor):
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


# _QUIET: every hook body runs with torch-function handling off
# (`torch._C.DisableTorchFunction`): every tensor attribute read (`requires_grad`, `_version`)
# and every statistics op would otherwise go through the user's TorchFunctionModes (and the
# dump's own dropout interceptor) in Python. The context is entered in the hook itself, not
# by a wrapper around it (one Python call less per hook call).


def add_tensor_hook(t: torch.Tensor, fn) -> None:
    """`t.register_hook(fn)` without the RemovableHandle the recorder never uses: the same
    steps as `Tensor.register_hook` (torch/_tensor.py: a hooks dict on the tensor, handed to
    its grad_fn once; the hook stored in it, keyed by itself instead of a handle's id), a
    third of its cost (~1 us instead of ~3.4 us per registration). Tensor subclasses, and a
    torch without these internals, go through `register_hook`."""
    hooks = t._backward_hooks if type(t) in _PLAIN else _NO_HOOKS
    if hooks is None:
        grad_fn = t.grad_fn
        if grad_fn is not None:
            hand = getattr(grad_fn, "_register_hook_dict", None)
            if hand is None:
                t.register_hook(fn)
                return
            hooks = t._backward_hooks = OrderedDict()
            hand(t)
        else:  # a leaf: setting the dict registers it
            hooks = t._backward_hooks = OrderedDict()
    elif hooks is _NO_HOOKS:
        t.register_hook(fn)
        return
    hooks[fn] = fn


_NO_HOOKS = object()


class _Mode(TorchDispatchMode):
    def __init__(self, rec: "TorchRecorder"):
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return self.rec._on_op(func, out, args, kwargs or {})


class TorchRecorder:
    """Install on a model, then `begin_step(n)`, run the step, `end_step()` -> StepDump."""

    framework = "torch"

    def __init__(self, model: torch.nn.Module, level: str = "module", scope: tuple[str, ...] = (),
                 fault: Fault | None = None, capture=None):
        self.model = model
        self.level = level
        self.scope = tuple(scope)
        self.fault = fault
        self.fault_hit: dict | None = None
        self.capture = capture  # (parent key, op name, occurrence) -> saves that op's args
        self.captured = None
        self._handles = []
        self._mode = None
        self._busy = False
        self._gc = GcPause()
        self._sink = None  # stats_worker.WorkerWriter computing the statistics, or None
        self._compact = False
        self._reset()

    # ------------------------------------------------------------ setup
    def install(self) -> "TorchRecorder":
        root = self.model
        self._param_owner = {}  # a parameter shared by two modules is hooked once
        for path, mod in root.named_modules():
            if mod is root:
                continue
            cls = type(mod).__name__
            self._handles.append(mod.register_forward_pre_hook(self._pre(path, cls), with_kwargs=True))
            self._handles.append(mod.register_forward_hook(self._post(path, cls), with_kwargs=True))
            for pname, p in mod.named_parameters(recurse=False):
                if p.requires_grad and id(p) not in self._param_owner:
                    self._param_owner[id(p)] = (path, cls, pname)
                    self._handles.append(p.register_post_accumulate_grad_hook(
                        self._param_hook(path, cls, pname)))
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
        self._op_calls: dict = {}
        self._op_in_parent: dict = {}
        self._fault_seen = 0
        self._stack: list[str] = []
        self._watched: list = []  # per open call: its inputs' gradient targets, or None
        self._cache: dict = {}
        self._grad_targets: dict = {}  # id(tensor) -> (weakref, version, [targets])
        if not hasattr(self, "_param_owner"):
            self._param_owner: dict = {}
        if not hasattr(self, "_sites"):
            self._sites = StackSites()  # module path -> its call site (captured once per run)
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
        return self._sink.new_batch(_to_floats) if self._sink is not None else new_step_stats()

    def begin_step(self, step: int) -> None:
        self._reset()
        self.step = step
        self._gc.pause()
        need_mode = self.level == "op" or self.fault is not None or self.capture is not None
        if need_mode:
            self._mode = _Mode(self)
            self._mode.__enter__()

    def end_step(self) -> StepDump:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        try:
            with torch._C.DisableTorchFunction():
                if self._sink is None:
                    self._batch.flush()
                else:  # the host statistics are the worker's (stats_worker)
                    self._batch.flush_device()
        finally:
            self._gc.resume()
        d = StepDump(step=self.step, rank=0, framework="pytorch",
                     level="mix" if self.level == "op" else "L0",
                     data=self.data, construct=self.construct, stack=self._sites.stack_json(),
                     texts=self._batch.texts, stats=self._batch if self._sink is not None else None)
        self._cache = {}
        self._grad_targets = {}
        return d

    # ------------------------------------------------------------ statistics
    def _stats(self, obj) -> dict:
        """obj's record; a tensor's numbers arrive at end_step (one conversion per step)."""
        if not isinstance(obj, torch.Tensor):
            return scalar_record(obj)
        hit = self._cache.get(id(obj))
        if hit is not None and hit[0]() is obj and hit[1] == obj._version:
            rec = hit[2]
            if type(rec) is tuple:  # compact (queue_stats)
                rec = rec[:2] + (obj.requires_grad,) + rec[3:]
            else:
                rec = dict(rec, requires_grad=obj.requires_grad)
            if hit[3] is not None:
                StepStats.alias(hit[3], rec)
            return rec
        self._busy = True
        try:
            rec, slot = queue_stats(obj, self._batch, None, self._compact)
        finally:
            self._busy = False
        if type(rec) is dict:
            rec["requires_grad"] = obj.requires_grad
        try:
            self._cache[id(obj)] = (weakref.ref(obj), obj._version, rec, slot)
        except TypeError:
            pass
        return rec

    def _nested_stats(self, obj):
        """A keyword argument's record: a tuple/list gives a list of records and a dict a dict
        of them, as msprobe writes them (Llama's `position_embeddings=(cos, sin)`)."""
        if isinstance(obj, (tuple, list)):
            return [self._nested_stats(o) for o in obj]
        if isinstance(obj, dict):
            return {str(k): self._nested_stats(v) for k, v in obj.items()}
        return self._stats(obj)

    def _grad_stats(self, g) -> dict | None:
        """A gradient's statistics; the same gradient tensor reaches the hook on one module's
        output and the next module's input, so the identity cache serves it twice."""
        if g is None:
            return None
        return self._stats(g)

    def _in_scope(self, key: str) -> bool:
        return not self.scope or any(key.startswith(f"Module.{s}.") for s in self.scope)

    # ------------------------------------------------------------ module hooks
    def _pre(self, path: str, cls: str):
        fwd = f"Module.{path}.{cls}.forward."
        bwd = f"Module.{path}.{cls}.backward."
        disabled, is_grad_enabled, Tensor = torch._C.DisableTorchFunction, torch.is_grad_enabled, torch.Tensor

        def hook(mod, args, kwargs):
            with disabled():  # (_QUIET)
                calls, stack = self._calls, self._stack
                n = calls.get(path, 0)
                calls[path] = n + 1
                key = fwd + str(n)
                self.construct[key] = stack[-1] if stack else None
                stack.append(key)
                flat = []
                for a in args:
                    if isinstance(a, Tensor):
                        flat.append(a)
                    else:
                        flatten(a, flat)
                stats = self._stats
                rec = {"input_args": [stats(a) for a in flat],
                       "input_kwargs": {k: self._nested_stats(v) for k, v in kwargs.items()} if kwargs else {}}
                self.data[key] = rec  # placed at the call; msprobe orders by completion, see _post
                self._sites.seen(path, key)
                watched = None
                if is_grad_enabled():
                    grads = [t for t in flat if isinstance(t, Tensor) and t.requires_grad]
                    if grads:
                        bkey = bwd + str(n)
                        watched = [self._watch_grad(t, (bkey, "output", i, len(grads)))
                                   for i, t in enumerate(grads)]
                self._watched.append(watched)
        return hook

    def _post(self, path: str, cls: str):
        fwd0 = f"Module.{path}.{cls}.forward.0"
        disabled, is_grad_enabled, Tensor = torch._C.DisableTorchFunction, torch.is_grad_enabled, torch.Tensor

        def hook(mod, args, kwargs, output):
            with disabled():  # (_QUIET)
                stack, data, construct = self._stack, self.data, self.construct
                key = stack.pop() if stack else fwd0
                watched = self._watched.pop() if self._watched else None
                rec = data.pop(key, None)
                if rec is None:
                    rec = {"input_args": [], "input_kwargs": {}}
                if isinstance(output, Tensor):
                    flat = [output]
                else:
                    flat = flatten(output, [])
                stats = self._stats
                rec["output"] = [stats(o) for o in flat]
                data[key] = rec  # completion order, like msprobe
                bkey = key.replace(".forward.", ".backward.")
                parent = construct.get(key)
                construct[bkey] = parent.replace(".forward.", ".backward.") if parent else None
                outs = [t for t in flat if isinstance(t, Tensor) and t.requires_grad] \
                    if is_grad_enabled() else ()
                for i, t in enumerate(outs):
                    self._watch_grad(t, (bkey, "input", i, len(outs)))
                if watched and not outs:
                    # no output carries a gradient (a rotary embedding's cos/sin, a mask, an
                    # argmax): the module has no backward, as msprobe's backward hook sees it; the
                    # gradient its inputs get comes from their other uses, not from this module
                    for targets, target in watched:
                        targets.remove(target)
            return None
        return hook

    def _watch_grad(self, t: torch.Tensor, target: tuple) -> tuple[list, tuple]:
        """Record t's gradient into target (backward key, side, index, count). A module's
        input is often the previous module's output: one tensor hook serves both records
        (as long as the tensor was not modified in place in between). -> (the hook's
        target list, target): what to remove to take the target back."""
        hit = self._grad_targets.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == t._version:
            hit[2].append(target)
            return hit[2], target
        targets = [target]
        add_tensor_hook(t, self._grad_hook(targets))
        self._grad_targets[id(t)] = (weakref.ref(t), t._version, targets)
        return targets, target

    def _grad_hook(self, targets: list):
        disabled = torch._C.DisableTorchFunction

        def hook(g):
            if not targets:
                return None
            with disabled():  # (_QUIET)
                place_grad(self.data, targets, self._grad_stats(g))
            return None
        return hook

    def _param_hook(self, path: str, cls: str, pname: str):
        key = f"Module.{path}.{cls}.parameters_grad.0"

        disabled = torch._C.DisableTorchFunction

        def hook(p):
            with disabled():  # (_QUIET)
                rec = self.data.get(key)
                if rec is None:
                    rec = self.data[key] = {}
                rec[pname] = [self._grad_stats(p.grad)]
        return hook

    # ------------------------------------------------------------ op calls
    def _on_op(self, func, out, args=(), kwargs=None):
        if self._busy or not self._stack:
            return out
        schema = func._schema.name
        name = schema.split("::", 1)[-1]
        parent = self._stack[-1]
        if self.fault is not None and self.fault_hit is None and self.step == self.fault.step \
                and name in self.fault.names("torch"):
            if self._fault_seen == self.fault.occurrence:
                out = _perturb(out, self.fault.rel)
                self.fault_hit = {"module": parent, "op": name, "kind": self.fault.kind}
            self._fault_seen += 1
        if name in _SKIP_OPS:
            return out
        if self.capture is not None:
            self._maybe_capture(func, f"{name}.{func._overloadname}", parent, out, args, kwargs)
        if self.level != "op" or not self._in_scope(parent):
            return out
        overload = func._overloadname
        n = self._op_calls.get(func, 0)
        self._op_calls[func] = n + 1
        key = f"Aten.{name}.{overload}.{n}.forward"
        self.construct[key] = parent
        flat = flatten(out, [])
        self.data[key] = {"input_args": [], "input_kwargs": {},
                          "output": [self._stats(o) for o in flat]}
        if self.fault_hit is not None and self.fault_hit.get("op") == name and "op_key" not in self.fault_hit:
            self.fault_hit["op_key"] = key
        return out

    def _maybe_capture(self, func, name, parent, out, args, kwargs):
        want_parent, want_op, want_n = self.capture
        if parent != want_parent or name != want_op or self.captured is not None:
            return
        k = (parent, name)
        n = self._op_in_parent.get(k, 0)
        self._op_in_parent[k] = n + 1
        if n == want_n:
            detach = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa: E731
            self.captured = {"op": str(func), "args": torch.utils._pytree.tree_map(detach, list(args)),
                             "kwargs": torch.utils._pytree.tree_map(detach, dict(kwargs or {})),
                             "out": torch.utils._pytree.tree_map(detach, out)}


def _perturb(out, rel: float):
    if isinstance(out, torch.Tensor):
        return out * (1 + rel) if out.is_floating_point() else out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return type(out)([_perturb(out[0], rel), *out[1:]])
    return out
