"""An emulated Ascend NPU device for torch: dispatch like torch_npu, compute on CPU or meta.

Why: what a CPU run dispatches is not what an NPU dispatches. torch_npu registers NPU
kernels (the PrivateUse1 key, renamed `npu`) for ops that are CompositeImplicitAutograd on
CPU (aten::matmul, aten::scaled_dot_product_attention, aten::lstm.input, ...), so on the
NPU they do not decompose; and the CPU picks CPU-only kernels
(`_scaled_dot_product_flash_attention_for_cpu`, `mkldnn_*`) that no NPU runs.

How: the real dispatcher does the work. PrivateUse1 is set up as a Python backend
(`torch.utils.backend_registration._setup_privateuseone_for_python_backend("npu")`);
tensors on `npu` are storage-less TensorImpls (`torch._C._acc.create_empty_tensor`, given
their strides by redispatching `aten::as_strided` to the Meta key) whose UntypedStorage
Python object carries the real storage on CPU (real mode) or meta (meta mode). Then:

- every op the target adapts gets a Python kernel at the PrivateUse1 key
  (`torch.library.Library("aten", "IMPL")`); a direct backend registration wins over
  CompositeExplicitAutograd/CompositeImplicitAutograd kernels exactly as in
  `computeDispatchTableEntry`, so the dispatch table for `npu` is the target's;
- ops that are CompositeImplicitAutograd in torch and adapted by the target also get a
  kernel at AutogradPrivateUse1 (torch_npu registers those with their own autograd), so
  they are recorded as themselves and do not decompose;
- a boxed fallback on PrivateUse1 catches every other op that reaches the backend: that is
  an op the NPU lacks (torch_npu would fall back to the CPU); it is recorded and computed
  on CPU so the step continues;
- composite ops the target does not adapt decompose through the dispatcher, as on an NPU.

Each kernel computes with the ATen CPU/meta kernels on the unwrapped storage, under a
dispatch mode that records which CPU kernels ran (`cpu_ops`).

Differences from a real NPU, by design: the backward of an adapted composite op is
one call in the backward phase, which the tracer names after the kernel op-plugin's
derivatives give (`aten::matmul_backward`, analyzer.trace.torch.derivatives) or, when
they name none, after the op itself; torch_npu's private format ops (`npu_format_cast`, ...) are never recorded;
`is_pinned`/streams/events are not modelled.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

DEVICE = "npu"

_setup_done = False
_lock = threading.Lock()


def ensure_npu_backend() -> None:
    """Rename PrivateUse1 to `npu` and register it as a Python backend (once per process)."""
    global _setup_done
    import torch

    with _lock:
        if _setup_done:
            return
        name = torch._C._get_privateuse1_backend_name()
        if name not in ("privateuseone", DEVICE):
            raise RuntimeError(f"the PrivateUse1 backend is already named {name!r}; "
                               "opscan needs it for its emulated npu device")
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

        if name == "privateuseone":
            _setup_privateuseone_for_python_backend(DEVICE, backend_module=_device_module())
        _setup_done = True


def _device_module():
    """`torch.npu` for the emulated device: torch's placeholder backend module plus what
    device-generic torch code asks of a backend module and torch_npu's `torch.npu`
    provides. `get_amp_supported_dtype` is the one torch requires before it builds any
    `torch.amp.autocast(device_type="npu")`, and non-reentrant activation checkpointing
    (`torch.utils.checkpoint(use_reentrant=False)`, transformers' gradient checkpointing)
    builds one for every recomputation in backward: without it the recomputation raises
    on the autograd engine's device thread, where the Python backend's device guard turns
    the error into `std::terminate` (the whole process aborts). The dtypes are
    what torch_npu's `torch.npu.get_amp_supported_dtype()` answers on a chip with bfloat16."""
    import torch
    from torch.utils.backend_registration import _DummyBackendModule

    class NpuModule(_DummyBackendModule):
        def get_amp_supported_dtype(self) -> list:
            return [torch.float16, torch.bfloat16, torch.float32]

        def is_bf16_supported(self) -> bool:
            return True

    return NpuModule()


# ------------------------------------------------------------------ tensors

_META_KEYSET = None


def _meta_keyset():
    global _META_KEYSET
    if _META_KEYSET is None:
        import torch

        _META_KEYSET = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)
    return _META_KEYSET


def is_npu(t: Any) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and t.device.type == DEVICE


def raw_of(t):
    """The CPU/meta tensor holding the data of npu tensor `t` (same geometry, shared)."""
    import torch

    storage = t.untyped_storage()
    backing = getattr(storage, "_opscan_raw", None)
    if backing is None:
        raise RuntimeError("npu tensor without backing storage (created outside opscan)")
    out = torch.empty(0, dtype=t.dtype, device=backing.device)
    return out.set_(backing, t.storage_offset(), t.shape, t.stride())


def npu_from_raw(raw, like=None):
    """An npu tensor viewing `raw`'s storage; a view of `like`'s npu storage when shared."""
    import torch

    if like is not None and like.dtype == raw.dtype:
        base = like
    else:
        shape = raw.shape
        if raw.storage_offset() == 0 and raw.stride() == _contiguous_strides_of(shape):
            # a fresh contiguous output (most of them): the npu tensor is made with its
            # geometry at once, with no as_strided redispatch (~a tenth of a traced call)
            t = torch._C._acc.create_empty_tensor(list(shape), raw.dtype)
            t.untyped_storage()._opscan_raw = raw.untyped_storage()
            return t
        base = torch._C._acc.create_empty_tensor([0], raw.dtype)
        base.untyped_storage()._opscan_raw = raw.untyped_storage()
    return torch.ops.aten.as_strided.default.redispatch(
        _meta_keyset(), base, list(raw.shape), list(raw.stride()), raw.storage_offset())


_CONTIGUOUS: dict = {}  # shape -> the strides create_empty_tensor gives it


def _contiguous_strides_of(shape) -> tuple | None:
    """The strides `create_empty_tensor(shape)` gives (row-major; None for a shape with a
    0: those keep the general path)."""
    strides = _CONTIGUOUS.get(shape)
    if strides is None:
        if 0 in shape:
            return None
        strides = _CONTIGUOUS[tuple(shape)] = _contiguous_strides(tuple(shape))
    return strides


def _restride(npu_t, raw) -> None:
    """Bring npu_t's geometry (and storage) in line with raw after an in-place resize."""
    import torch

    if raw.untyped_storage()._cdata != getattr(npu_t.untyped_storage(), "_opscan_raw",
                                                None)._cdata:
        npu_t.untyped_storage()._opscan_raw = raw.untyped_storage()
    if (tuple(npu_t.shape) != tuple(raw.shape) or npu_t.stride() != raw.stride()
            or npu_t.storage_offset() != raw.storage_offset()):
        torch.ops.aten.as_strided_.default.redispatch(
            _meta_keyset(), npu_t, list(raw.shape), list(raw.stride()), raw.storage_offset())


# ------------------------------------------------------------------ containers

# Leaves every `_map` function returns unchanged and `_tensors` skips: shape lists and
# scalar arguments are most of an op's leaves, so they are passed over without a call.
_SCALARS = frozenset({int, float, bool, type(None)})


def _map(fn, obj):
    """tree_map for what op arguments and results hold (lists, tuples, dicts): a
    fraction of pytree's per-call cost, which dominated the tracer's overhead. `fn` must
    return ints, floats, bools and None unchanged (they are not passed to it)."""
    t = type(obj)
    if t in _SCALARS:
        return obj
    if t is list or t is tuple or isinstance(obj, (list, tuple)):
        out = [x if type(x) in _SCALARS else _map(fn, x) for x in obj]
        return out if isinstance(obj, list) else tuple(out)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


_TENSOR = None


def _tensors(obj, out: list) -> list:
    """The tensors in obj (nested lists/tuples/dicts), in order."""
    global _TENSOR
    if _TENSOR is None:
        import torch

        _TENSOR = torch.Tensor
    if isinstance(obj, _TENSOR):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            if type(x) in _SCALARS:
                continue
            if isinstance(x, _TENSOR):
                out.append(x)
            else:
                _tensors(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out)
    return out


# ------------------------------------------------------------------ recording interface

@dataclass
class KernelCall:
    """What one emulated kernel saw: handed to the recorder."""

    op: Any  # torch._ops.OpOverload
    kind: str  # adapted | composite | missing
    inputs: list = field(default_factory=list)  # npu (or cpu) tensors
    outputs: list = field(default_factory=list)
    cpu_ops: list[str] = field(default_factory=list)
    backward_of_composite: bool = False
    origin: tuple[str, str] | None = None  # (module, source) of the forward call


_QUALIFIED: dict = {}  # OpOverload -> its qualified name (asked for every dispatched op)


def qualified_name(op) -> str:
    """`aten::add.Tensor` / `aten::matmul` (default overload written without suffix)."""
    name = _QUALIFIED.get(op)
    if name is None:
        base = op._schema.name
        ov = op._overloadname
        name = _QUALIFIED[op] = base if ov == "default" else f"{base}.{ov}"
    return name


_MODE_CLASS = None
_NOT_SPECIAL = object()  # _meta_special: "compute this op normally"
# meta mode: the most input bytes an op without a meta kernel may be run on CPU with
STAND_IN_BYTES = 64 * 1024 * 1024

# In-place random initialisers: on meta tensors they only return their argument.
_RANDOM_FILL = frozenset({
    "aten::normal_", "aten::uniform_", "aten::random_", "aten::exponential_",
    "aten::geometric_", "aten::log_normal_", "aten::cauchy_", "aten::bernoulli_",
})


def _capture_mode_class():
    """The TorchDispatchMode class behind _CpuCapture, made once per process.

    It opts out of torch's dynamo wrapping of `__torch_dispatch__` (the default wraps it
    in `torch._dynamo.disable`, which imports torch._dynamo, ~2 s, on the first call)."""
    global _MODE_CLASS
    if _MODE_CLASS is None:
        from torch.utils._python_dispatch import TorchDispatchMode

        class CaptureMode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                return False

            def __init__(self, names: list[str]):
                super().__init__()
                self.names = names

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.names.append(qualified_name(func))
                return func(*args, **(kwargs or {}))

        _MODE_CLASS = CaptureMode
    return _MODE_CLASS


class _CpuCapture:
    """A TorchDispatchMode that lists the CPU/meta kernels dispatched at operator level
    (after composite decomposition; kernels a kernel calls internally are not listed)."""

    __slots__ = ("names", "mode")

    def __init__(self):
        self.names: list[str] = []
        self.mode = _capture_mode_class()(self.names)


_NULL_CONTEXT = contextlib.nullcontext()  # reusable and reentrant


class _Depth:
    """Kernel nesting depth, thread-locally: `with emu._inside():` (one object per emulator:
    the count lives in the thread-local, so nesting and threads are safe)."""

    __slots__ = ("tls",)

    def __init__(self, tls):
        self.tls = tls

    def __enter__(self):
        self.tls.depth = getattr(self.tls, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        self.tls.depth -= 1
        return False


class _Range:
    """A RecordFunction range `name`; inside it, RecordFunction is on (`record_inside`)
    or off, thread-locally, until the range ends (the state is kept in `tls.recording`)."""

    __slots__ = ("rf", "inside", "tls", "before")

    def __init__(self, name: str, record_inside: bool, tls):
        from torch._C._profiler import _RecordFunctionFast

        self.rf = _RecordFunctionFast(name)
        self.inside = record_inside
        self.tls = tls

    def _set(self, on: bool) -> None:
        if getattr(self.tls, "recording", True) != on:
            import torch

            torch._C._autograd._enable_record_function(on)
            self.tls.recording = on

    def __enter__(self):
        self.before = getattr(self.tls, "recording", True)
        if self.inside:  # on first, so that the range itself is recorded
            self._set(True)
            self.rf.__enter__()
        else:
            self.rf.__enter__()
            self._set(False)
        return self

    def __exit__(self, *exc):
        if self.inside:
            self.rf.__exit__(*exc)
            self._set(self.before)
        else:
            self._set(self.before)
            self.rf.__exit__(*exc)
        return False


class Emulator:
    """Kernels for the `npu` device mirroring one target's adapted op set.

    adapted: op names (`aten::add.Tensor`, `aten::matmul`) the target registers NPU
    kernels for. composite_adapted: those registered at AutogradPrivateUse1 (default: the
    adapted ops that are CompositeImplicitAutograd in this torch). mode: real | meta.
    on_call(KernelCall) is called for every kernel while `recording` is true.
    """

    def __init__(self, adapted: set[str], composite_adapted: set[str] | None, mode: str,
                 on_call: Callable[[KernelCall], None]):
        if mode not in ("real", "meta"):
            raise ValueError(f"mode must be real or meta, got {mode!r}")
        self.adapted = set(adapted)
        self.composite_adapted = composite_adapted
        self.mode = mode
        self.on_call = on_call
        self.recording = False
        self.unknown_ops: list[str] = []  # adapted names this torch does not have
        self.registered: dict[str, str] = {}  # name -> adapted | composite
        self.meta_notes: set[str] = set()
        self.meta_stand_ins: dict[str, int] = {}  # op -> calls run on CPU stand-ins
        # True while a profiler records the step: kernels then mark themselves
        # (`opscan::kernel::<op>` around the kernel, `opscan::cpu` around the CPU/meta
        # computation) so analyzer.trace.torch.route can tell which CPU ops ran inside
        # which NPU kernel.
        self.profiling = False
        self._libs: list = []
        self._tls = threading.local()
        self._depth_cm = _Depth(self._tls)
        self._rawdev = None  # torch.device(raw_device), made on first use
        # meta mode: (op, input geometry, other arguments) -> what the op returned (see
        # _meta_key); a decoder's 80 layers repeat the same few hundred signatures
        self._meta_cache: dict = {}
        self.meta_cache_hits = 0

    # -------------------------------------------------------------- helpers

    @property
    def raw_device(self) -> str:
        return "cpu" if self.mode == "real" else "meta"

    def _depth(self) -> int:
        return getattr(self._tls, "depth", 0)

    def _inside(self) -> _Depth:
        return self._depth_cm

    def _mark(self, name: str):
        """A profiler range named `name` while profiling, else nothing. Inside a kernel's
        range only its CPU computation (the `opscan::cpu` range) is recorded: the
        emulator's unwrapping and wrapping around it gives no route row, and every event
        recorded costs time to record and to fold."""
        if not self.profiling:
            return _NULL_CONTEXT
        return _Range(name, name == "opscan::cpu", self._tls)

    def _unwrap(self, args, kwargs):
        import torch

        rawdev = self._rawdev
        if rawdev is None:
            rawdev = self._rawdev = torch.device(self.raw_device)
        seen: dict[int, Any] = {}

        def f(x):
            if isinstance(x, torch.Tensor) and x.device.type == DEVICE:
                r = raw_of(x)
                seen[id(r)] = x
                return r
            if isinstance(x, torch.device) and x.type == DEVICE:
                return rawdev
            if isinstance(x, str) and x.startswith(DEVICE) and x.split(":")[0] == DEVICE:
                return rawdev
            return x

        return _map(f, args), _map(f, kwargs), seen

    def _wrap(self, out, raw_args, npu_by_raw: dict[int, Any], to_npu: bool,
              contiguous: bool = True):
        import torch

        if not to_npu:
            return out
        # storage -> the npu tensor of an input using it (outputs that are views of an
        # input share its npu storage)
        like_by_storage: dict[int, Any] = {}
        for r in _tensors(raw_args, []):
            if r.device.type == self.raw_device:
                like = npu_by_raw.get(id(r))
                if like is not None:
                    like_by_storage.setdefault(r.untyped_storage()._cdata, like)

        def f(x):
            if not isinstance(x, torch.Tensor) or x.device.type != self.raw_device:
                return x
            hit = npu_by_raw.get(id(x))
            if hit is not None:  # in-place / out= returned its argument
                _restride(hit, x)
                return hit
            like = like_by_storage.get(x.untyped_storage()._cdata) if like_by_storage else None
            if like is not None:
                return npu_from_raw(x, like)
            if contiguous and not x.is_contiguous():
                # NPU kernels write fresh outputs contiguously; CPU kernels may not
                # (e.g. flash attention's permuted output): follow the NPU so that
                # later view-or-copy decisions (reshape) match it, in real and meta mode.
                x = x.contiguous()
            return npu_from_raw(x)

        return _map(f, out)

    def _targets_npu(self, args, kwargs) -> bool:
        """False when the op is asked for another device (`_to_copy(device=cpu)`)."""
        import torch

        dev = kwargs.get("device")
        if dev is None:
            return True
        return torch.device(dev).type == DEVICE

    def _compute(self, op, args, kwargs):
        """Run op on unwrapped tensors; returns (npu outputs, raw outputs, cpu op names)."""
        to_npu = self._targets_npu(args, kwargs)
        key = None
        if self.mode == "meta" and to_npu and _meta_cacheable(op):
            key = _meta_key(op, args, kwargs)
            if key is not None:
                hit = self._meta_cache.get(key)
                if hit is _NO_CACHE:
                    key = None
                elif hit is not None:
                    self.meta_cache_hits += 1
                    return _from_meta_specs(hit)
        raw_args, raw_kwargs, by_raw = self._unwrap(args, kwargs)
        if self.mode == "meta":
            special = self._meta_special(op, raw_args, raw_kwargs, to_npu)
            if special is not _NOT_SPECIAL:
                out = self._wrap(special, raw_args, by_raw, to_npu)
                return out, special, [qualified_name(op)]
        cap = _CpuCapture()
        with self._mark("opscan::cpu"), cap.mode:
            if op._schema.name in ("aten::_copy_from", "aten::_copy_from_and_resize"):
                # Backend-only ops (no CPU kernel): the copy they stand for.
                src, dst = raw_args[0], raw_args[1]
                if op._schema.name == "aten::_copy_from_and_resize":
                    dst.resize_(src.shape)
                out = dst.copy_(src, *raw_args[2:3])
            elif self.mode == "meta":
                out = self._meta_or_stand_in(op, raw_args, raw_kwargs)
            else:
                out = op(*raw_args, **raw_kwargs)
        wrapped = self._wrap(out, raw_args, by_raw, to_npu, _keeps_layout_free(op))
        if key is not None and qualified_name(op) not in self.meta_stand_ins:
            # (a stand-in op is recomputed every time: each call is counted in the note)
            self._meta_cache[key] = _meta_specs(args, kwargs, wrapped, cap.names)
        return wrapped, out, cap.names

    def _meta_special(self, op, raw_args, raw_kwargs, to_npu):
        """Meta tensors hold no values: answer value reads with zeros (noted)."""
        import torch

        name = op._schema.name
        if name in _RANDOM_FILL and raw_args and isinstance(raw_args[0], torch.Tensor):
            # In-place random fills change no metadata; their meta kernels are Python
            # refs that import torch._dynamo (~2 s) on first use.
            return raw_args[0]
        if name.startswith("aten::_foreach_") and raw_args and isinstance(raw_args[0], list):
            # Meta kernels of foreach ops are Python loops over torch._refs (most of a
            # meta optimizer step's time). In-place ones change no metadata; the
            # out-of-place ones used by optimizers return tensors shaped like `self`.
            if not op._schema.returns:
                return None
            if name not in ("aten::_foreach_norm", "aten::_foreach_max"):
                return [torch.empty_like(t) for t in raw_args[0]]
        if name == "aten::_local_scalar_dense":
            self.meta_notes.add("meta mode: tensor values read by the step (.item()) are 0")
            t = raw_args[0]
            return False if t.dtype == torch.bool else (0.0 if t.is_floating_point() else 0)
        if not to_npu and name in ("aten::_to_copy", "aten::to", "aten::copy_"):
            self.meta_notes.add("meta mode: tensors copied to the host are zeros")
            t = raw_args[0]
            return torch.zeros(t.shape, dtype=raw_kwargs.get("dtype") or t.dtype)
        return _NOT_SPECIAL

    def _meta_or_stand_in(self, op, raw_args, raw_kwargs):
        """`op` on meta tensors; when the meta device cannot run it (an output size that
        depends on values: `nonzero`, `masked_select`), the op runs on CPU on ones shaped
        like its meta inputs (every element selected: an upper bound, torch's own
        `meta_nonzero_assume_all_nonzero` assumption) and its outputs come back as meta
        tensors of those sizes, so the step and its backward go on. Only for ops that
        write no argument and whose inputs total at most STAND_IN_BYTES; noted."""
        import torch

        try:
            return op(*raw_args, **raw_kwargs)
        except NotImplementedError:
            if any(a.alias_info is not None and a.alias_info.is_write
                   for a in op._schema.arguments):
                raise
            metas = _tensors((raw_args, raw_kwargs), [])
            if sum(t.numel() * t.element_size() for t in metas
                   if t.device.type == "meta") > STAND_IN_BYTES:
                raise

        def stand_in(x):
            if isinstance(x, torch.Tensor) and x.device.type == "meta":
                return torch.ones(x.shape, dtype=x.dtype)
            if isinstance(x, torch.device) and x.type == "meta":
                return torch.device("cpu")
            return x

        out = op(*_map(stand_in, raw_args), **_map(stand_in, raw_kwargs))
        name = qualified_name(op)
        self.meta_stand_ins[name] = self.meta_stand_ins.get(name, 0) + 1
        return _map(lambda t: t.to("meta") if isinstance(t, torch.Tensor) else t, out)

    def _emit(self, op, kind, args, kwargs, out, cpu_ops, backward=False, origin=None):
        if not self.recording or self._depth() > 1:
            return None
        ins = _tensors(kwargs, _tensors(args, []))
        outs = _tensors(out, [])
        return self.on_call(KernelCall(op, kind, ins, outs, cpu_ops, backward, origin))

    # -------------------------------------------------------------- kernels

    def _backend_kernel(self, op, kind):
        marker = "opscan::kernel::" + qualified_name(op)

        def kernel(*args, **kwargs):
            with self._inside(), self._mark(marker):
                out, _, cpu_ops = self._compute(op, args, kwargs)
                self._emit(op, kind, args, kwargs, out, cpu_ops)
            return out
        return kernel

    def _fallback(self, op, *args, **kwargs):
        with self._inside(), self._mark("opscan::fallback::" + qualified_name(op)):
            out, _, cpu_ops = self._compute(op, args, kwargs)
            self._emit(op, "missing", args, kwargs, out, cpu_ops)
        return out

    def _autograd_kernel(self, op):
        """AutogradPrivateUse1 kernel of an adapted composite op: no decomposition."""
        import torch
        from torch.utils._pytree import tree_flatten, tree_unflatten

        emu = self
        marker = "opscan::kernel::" + qualified_name(op)

        def kernel(*args, **kwargs):
            leaves, spec = tree_flatten((args, kwargs))
            tpos = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
            needs = torch.is_grad_enabled() and any(
                leaves[i].requires_grad for i in tpos
                if leaves[i].is_floating_point() or leaves[i].is_complex())
            if not needs:
                with torch._C._AutoDispatchBelowAutograd():
                    return op(*args, **kwargs)

            class Fn(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *tensors):
                    with emu._mark(marker):
                        return _forward(ctx, *tensors)

                @staticmethod
                def backward(ctx, *grads):
                    with emu._mark(marker + " (backward)"):
                        return _backward(ctx, *grads)

            def _forward(ctx, *tensors):
                vals = list(leaves)
                for i, t in zip(tpos, tensors):
                    vals[i] = t
                a, k = tree_unflatten(vals, spec)
                to_npu = emu._targets_npu(a, k)
                raw_a, raw_k, by_raw = emu._unwrap(a, k)
                raw_leaves, raw_spec = tree_flatten((raw_a, raw_k))
                grad_in = []
                for i in tpos:
                    r = raw_leaves[i]
                    if isinstance(r, torch.Tensor) and leaves[i].requires_grad:
                        r = r.detach().requires_grad_(True)
                        raw_leaves[i] = r
                        grad_in.append((i, r))
                ra, rk = tree_unflatten(raw_leaves, raw_spec)
                cap = _CpuCapture()
                with emu._inside(), torch.enable_grad(), emu._mark("opscan::cpu"), cap.mode:
                    raw_out = op(*ra, **rk)
                out = emu._wrap(raw_out, ra, by_raw, to_npu)
                ctx.origin = emu._emit(op, "composite", a, k, out, cap.names)
                ctx.grad_in = grad_in
                ctx.raw_out = [t for t in tree_flatten(raw_out)[0]
                               if isinstance(t, torch.Tensor)]
                ctx.tpos = tpos
                flat_out = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
                for t in flat_out:
                    if not (t.is_floating_point() or t.is_complex()):
                        ctx.mark_non_differentiable(t)
                ctx.out_spec = tree_flatten(out)[1]
                return tuple(flat_out) if len(flat_out) != 1 else flat_out[0]

            def _backward(ctx, *grads):
                outs, gouts = [], []
                for r, g in zip(ctx.raw_out, grads):
                    if g is not None and r.requires_grad:
                        outs.append(r)
                        gouts.append(raw_of(g) if is_npu(g) else g)
                result = [None] * len(ctx.tpos)
                if not outs:
                    return tuple(result)
                inputs = [r for _, r in ctx.grad_in]
                cap = _CpuCapture()
                with emu._inside(), emu._mark("opscan::cpu"), cap.mode:
                    gin = torch.autograd.grad(outs, inputs, gouts, allow_unused=True)
                pos = {i: n for n, i in enumerate(ctx.tpos)}
                wrapped = []
                for (i, _), g in zip(ctx.grad_in, gin):
                    w = npu_from_raw(g.contiguous()) if g is not None else None
                    result[pos[i]] = w
                    wrapped.append(w)
                emu._emit(op, "composite", [g for g in grads if g is not None], {},
                          [w for w in wrapped if w is not None], cap.names, backward=True,
                          origin=ctx.origin)
                return tuple(result)

            flat = Fn.apply(*[leaves[i] for i in tpos])
            flat = flat if isinstance(flat, tuple) else (flat,)
            # Rebuild the op's return structure (tuple of tensors or one tensor).
            _, out_spec = tree_flatten(flat)
            return flat[0] if len(flat) == 1 and not op._schema.returns[1:] else flat

        return kernel

    # -------------------------------------------------------------- install

    def install(self) -> None:
        import torch

        ensure_npu_backend()
        lib = torch.library.Library("aten", "IMPL")
        fb = torch.library.Library("_", "IMPL")
        self._libs = [lib, fb]
        composite = self.composite_adapted
        for name in sorted(self.adapted):
            if not name.startswith("aten::"):
                continue
            op = _resolve(name)
            if op is None:
                self.unknown_ops.append(name)
                continue
            qn = qualified_name(op)
            implicit = torch._C._dispatch_has_kernel_for_dispatch_key(
                op._schema.name + ("" if op._overloadname == "default"
                                   else "." + op._overloadname), "CompositeImplicitAutograd")
            is_comp = (qn in composite) if composite is not None else implicit
            try:
                lib.impl(qn.split("::", 1)[1], self._backend_kernel(op, "adapted"),
                         "PrivateUse1")
                if is_comp and implicit:
                    lib.impl(qn.split("::", 1)[1], self._autograd_kernel(op),
                             "AutogradPrivateUse1")
                    self.registered[qn] = "composite"
                else:
                    self.registered[qn] = "adapted"
            except RuntimeError:
                self.unknown_ops.append(name)
        fb.fallback(self._fallback, "PrivateUse1")
        fb.fallback(_autocast_not_emulated, "AutocastPrivateUse1")

    def uninstall(self) -> None:
        for lib in reversed(self._libs):
            lib._destroy()
        self._libs = []


# ------------------------------------------------------------------ meta-mode cache
#
# In meta mode an op's outputs depend only on its inputs' metadata and its other
# arguments, and computing them is most of a meta trace's cost: torch's meta kernels for
# most pointwise and reduction ops are Python references (torch._refs, ~0.1-0.4 ms a call,
# behind torch._dynamo's disable wrapper). So the emulator remembers, per (op, arguments'
# signature), the geometry of what the op returned and the meta kernels it dispatched, and
# answers a repeat with fresh empty meta tensors of that geometry. Only ops that return
# fresh tensors qualify: the schema mutates no argument and returns plain `Tensor`s with no
# alias annotation, and the first run is checked (no output shares storage with an input
# or another output, storage offset 0, storage of exactly the size `empty_strided` gives);
# anything else is recomputed every time. Arguments outside the plain types below (CPU
# tensors, whose wrapped-number flag changes type promotion; generators; objects) make a
# call uncacheable.

_CACHEABLE: dict = {}  # OpOverload -> bool
_NO_CACHE = ()  # cached "recompute every time" answer
_PLAIN_ARGS: frozenset = frozenset()


def _autocast_not_emulated(op, *args, **kwargs):
    """The AutocastPrivateUse1 kernel of every op: only reached inside an enabled
    `torch.autocast("npu")` (autocast keys are excluded otherwise). torch_npu registers its
    own cast policy per op there (which ops run in float16/bfloat16, which in float32);
    the emulator has no such table, so it stops the step with what is missing and what
    to do, rather than let torch fail with a dispatch error naming every backend."""
    raise NotImplementedError(
        f"torch.autocast on the npu device is not emulated (reached by "
        f"{qualified_name(op)}): opscan does not know which ops torch_npu casts to "
        "float16/bfloat16; scan the step without autocast to get its float32 ops")


class _Uncacheable(Exception):
    pass


def _meta_cacheable(op) -> bool:
    ok = _CACHEABLE.get(op)
    if ok is None:
        schema = op._schema
        ok = (schema.name not in ("aten::_copy_from", "aten::_copy_from_and_resize")
              and bool(schema.returns)
              and all(str(r.type) == "Tensor" and r.alias_info is None for r in schema.returns)
              and not any(a.alias_info is not None and a.alias_info.is_write
                          for a in schema.arguments))
        _CACHEABLE[op] = ok
    return ok


def _sig(x):
    """A hashable signature of one argument (see the cache notes above)."""
    global _PLAIN_ARGS
    import torch

    t = type(x)
    if x is None or t is str:
        return x
    if t is bool or t is int or t is float or t is complex:
        return (t, x)  # 2 and 2.0 (equal keys) promote differently
    if isinstance(x, torch.Tensor):
        if x.device.type != DEVICE:
            raise _Uncacheable
        return (x.dtype, x.shape, x.stride(), x.storage_offset())
    if t is list or t is tuple:
        return (t, tuple(_sig(y) for y in x))
    if not _PLAIN_ARGS:
        _PLAIN_ARGS = frozenset({torch.dtype, torch.device, torch.layout, torch.memory_format})
    if t in _PLAIN_ARGS:
        return x
    raise _Uncacheable


def _meta_key(op, args, kwargs):
    try:
        return (op, _sig(args), tuple((k, _sig(v)) for k, v in kwargs.items()))
    except _Uncacheable:
        return None


def _meta_specs(args, kwargs, out, cpu_ops):
    """What to remember of a first run: ("one" | "tuple", [(shape, stride, dtype)], cpu
    ops), or _NO_CACHE when the outputs are not all fresh tensors."""
    import torch

    single = isinstance(out, torch.Tensor)
    outs = [out] if single else out
    if not isinstance(outs, (list, tuple)) or not all(
            isinstance(o, torch.Tensor) and o.device.type == DEVICE for o in outs):
        return _NO_CACHE
    storages = {t.untyped_storage()._cdata for t in _tensors(kwargs, _tensors(args, []))}
    specs = []
    for o in outs:
        st = o.untyped_storage()
        if st._cdata in storages or o.storage_offset() != 0:
            return _NO_CACHE
        storages.add(st._cdata)
        backing = getattr(st, "_opscan_raw", None)
        shape, stride = tuple(o.shape), tuple(o.stride())
        probe = torch.empty_strided(shape, stride, dtype=o.dtype, device="meta")
        nbytes = probe.untyped_storage().nbytes()
        if backing is None or backing.nbytes() != nbytes:
            return _NO_CACHE
        specs.append((shape, stride, o.dtype, nbytes,
                      0 not in shape and stride == _contiguous_strides(shape)))
    return ("one" if single else "tuple", tuple(specs), tuple(cpu_ops))


def _contiguous_strides(shape: tuple) -> tuple:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def _from_meta_specs(hit):
    """Fresh npu outputs, raw outputs (None) and cpu ops for a cached signature."""
    import torch

    kind, specs, cpu_ops = hit
    outs = []
    for shape, stride, dtype, nbytes, contiguous in specs:
        if contiguous:  # a contiguous npu tensor backed by a fresh meta storage: no restride
            t = torch._C._acc.create_empty_tensor(list(shape), dtype)
            t.untyped_storage()._opscan_raw = torch.UntypedStorage(nbytes, device="meta")
        else:
            t = npu_from_raw(torch.empty_strided(shape, stride, dtype=dtype, device="meta"))
        outs.append(t)
    out = outs[0] if kind == "one" else tuple(outs)
    return out, None, list(cpu_ops)


_LAYOUT_FREE: dict = {}  # OpOverload -> _keeps_layout_free(op)


def _keeps_layout_free(op) -> bool:
    """False for ops whose output strides are part of their contract (empty_strided...)."""
    free = _LAYOUT_FREE.get(op)
    if free is None:
        base = op._schema.name.split("::", 1)[1]
        free = _LAYOUT_FREE[op] = not (
            "strided" in base or "empty" in base or base.endswith("_like")
            or base in ("clone", "_to_copy", "contiguous", "set_", "resize_"))
    return free


def _resolve(name: str):
    """`aten::add.Tensor` -> torch.ops.aten.add.Tensor (None when this torch lacks it)."""
    import torch

    body = name.split("::", 1)[1]
    base, _, overload = body.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or "default")
    except AttributeError:
        return None
