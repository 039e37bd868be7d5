"""Real-mode Paddle tracing: run the step on CPU under `paddle.profiler` and turn its
kernel-launch events into `OpCall`s, with Python-side context attached.

What comes from where:
- kernel name and order: the profiler's `DygraphKernelLaunch` events. Paddle's generated
  dygraph API code (forward `api.cc`, grad `backward_api.cc`, optimizer APIs) opens
  `RecordEvent("<kernel_name> kernel launch")` right after
  `KernelFactory::SelectKernelOrThrowError(kernel_name, key)`, so the name is the phi
  kernel key name itself (`adam` for the `adam_` API, `conv2d_grad` inside
  `Conv2dGradNodeFinal`), the name PaddleCustomDevice registers and the fallback log line
  (`... kernel not found ..., fallback to CPU`) prints.
- tensors, user source line, layer path: Python wrappers around every `core.eager.ops`
  function object reachable from loaded modules (`paddle._C_ops.conv2d`, `paddle.matmul`
  is the same object) and around `paddle.Tensor`'s C++ operator methods (`__mul__` ...).
  Each wrapper opens a marker event (`opscan|api|<n>`) so the kernel launches inside it
  are matched by nesting, not by guessing.
- backward attribution: a gradient hook on every forward output that needs a gradient.
  Paddle runs a tensor's hooks inside the grad node of the op that produced it, so the
  hook's marker (`opscan|grad|<n>`) sits inside `Global_<Op>GradNode` and ties that
  node's grad kernels to forward call n (its layer, source line and tensors).
- layer path: `paddle.nn.Layer.__call__` is wrapped; the path is the attribute path from
  the model (`layer1.0.conv1`).
- kernels with no launch event: an API scope (`add_n dygraph`) or grad-node scope
  (`Global_EmbeddingGradNode`) with no launch inside names its kernel
  (`unrecorded_kernel`); the NPU's gradient-accumulation `add`s, which CPU runs as BLAS
  without a kernel, come from the recorded gradient fan-in (`accumulations`). See
  docs/tracing-paddle.md.
- phase: `Gradient Backward` / grad-node events -> backward; the optimizer's step
  (Paddle's `Optimization Step` event and opscan's own marker from
  `analyzer.trace.entry.optimizer_step_hooks`) -> optimizer; everything else -> forward.
"""
from __future__ import annotations

import contextlib
import functools
import re
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from analyzer.trace.entry import optimizer_step_hooks, user_source
from analyzer.trace.patches import AttrPatches
from analyzer.model import SETUP, OpCall, TensorMeta
from analyzer.trace.paddle.names import aliases_for, dtype_name, kernel_for, registered_kernels

MARK = "opscan|"
LAUNCH = " kernel launch"


@dataclass(slots=True)
class ApiCall:
    """One Python-visible Paddle op call seen by a wrapper."""

    idx: int
    name: str
    inputs: list[TensorMeta]
    needs_grad: list[TensorMeta]
    module: str
    source: str
    outputs: list[TensorMeta] = field(default_factory=list)
    grads: list[TensorMeta] = field(default_factory=list)  # grads of outputs, from hooks
    pending: list = field(default_factory=list, repr=False)  # needs_grad tensors, until _end


# Leaves `_walk_tensors` passes over without a call: shapes, axes and flags are most of
# an op's arguments.
_SCALARS = frozenset({int, float, bool, str, type(None)})


def _walk_tensors(obj: Any, tensor_type: type, out: list, depth: int = 0) -> list:
    """The tensors in obj (lists, tuples, dicts nested up to 3 deep), in order."""
    if isinstance(obj, tensor_type):
        out.append(obj)
    elif depth < 3 and isinstance(obj, (list, tuple)):
        for x in obj:
            if type(x) in _SCALARS:
                continue
            if isinstance(x, tensor_type):  # the common element: no call for it
                out.append(x)
            else:
                _walk_tensors(x, tensor_type, out, depth + 1)
    elif depth < 3 and isinstance(obj, dict):
        for x in obj.values():
            if type(x) not in _SCALARS:
                _walk_tensors(x, tensor_type, out, depth + 1)
    return out


class _NoEvent:
    """What a marker is while no profiler records (`RecordEvent.begin()` does nothing then)."""

    __slots__ = ()

    def end(self) -> None:
        pass


_NO_EVENT = _NoEvent()


def _marker_factory() -> Callable[[str], Any]:
    """name -> an open profiler range (call `.end()` on it): what
    `paddle.profiler.RecordEvent(name).begin()` opens, without the Python checks it repeats
    on every call (a traced step opens one per API call, layer and gradient hook). Like
    RecordEvent, it opens nothing unless a `paddle.profiler.Profiler` is recording."""
    from paddle.base.core import TracerEventType, _RecordEvent
    from paddle.profiler import utils

    kind = TracerEventType.PythonUserDefined

    def open_event(name: str):
        if not utils._is_profiler_used:
            return _NO_EVENT
        return _RecordEvent(name, kind)

    return open_event


class Recorder:
    """Installs the wrappers, hooks and markers; collects `ApiCall`s."""

    def __init__(self, model: Any = None):
        import paddle

        self._paddle = paddle
        self._event = _marker_factory()
        self._tensor = paddle.Tensor
        self.calls: list[ApiCall] = []
        # gradient fan-in since the last backward: grad target (`_grad_target`) -> (its
        # metadata, the calls whose grad nodes send it a gradient); see `accumulations()`
        self.grad_uses: dict[tuple, tuple[TensorMeta, list[int]]] = {}
        self.producer: dict[tuple, int] = {}  # grad target -> the call that made it
        self.fan_in: list[Accumulation] = []  # closed at each backward
        self.create_graph = False  # paddle.grad(create_graph=True) ran
        self._hooked = -1  # the call whose gradient hook ran last in this backward
        # id(tensor) -> (tensor id, weakref): a strong reference here kept every
        # activation of the run alive (2.7x the plain step's peak RSS on PP-OCRv4)
        self._ids: dict[int, tuple[int, Any]] = {}
        self._prune_at = 4096
        self._next_id = 1
        self._depth = 0
        self._layer_stack: list[str] = []
        self._names: dict[int, str] = {}
        if model is not None and isinstance(model, paddle.nn.Layer):
            for path, layer in model.named_sublayers(include_self=True):
                self._names.setdefault(id(layer), path)
        self._patched = AttrPatches()
        # how a gradient hook is registered: the C++ method `Tensor.register_hook` ends in,
        # without its Python layers (a `dygraph_only` decorator, a stop_gradient check
        # `_end` has made, a remove-helper object nobody keeps): ~3.5 -> ~1.2 us a hook,
        # one per forward output that needs a gradient (366 a MobileNetV3 step)
        self._add_hook = getattr(paddle.Tensor, "_register_grad_hook", None) or \
            paddle.Tensor.register_hook
        self.enabled = False
        self.on_calls: Callable[[int], None] | None = None  # every 500 API calls

    # ------------------------------------------------------------ tensors

    def meta(self, t: Any, fresh: bool = False) -> TensorMeta:
        """The tensor's record. A tensor seen before (same Python object, alive) keeps its
        id; its record is reused while the tensor's in-place version and shape are those
        it was recorded with (a traced step reads most tensors several times: ~1 us of
        shape and dtype reads saved per repeat read)."""
        key = id(t)
        known = self._ids.get(key)
        if not fresh and known is not None and known[1]() is t:
            try:
                shape = t.shape
            except Exception:  # noqa: BLE001 - uninitialised tensors
                shape = []
            try:
                if shape == known[4] and t._inplace_version() == known[3]:
                    return known[2]
            except Exception:  # noqa: BLE001 - no in-place version: never reused
                pass
            m = TensorMeta(known[0], dtype_name(t.dtype), tuple(shape))
            self._remember(key, t, m, shape)
            return m
        tid = self._next_id
        self._next_id += 1
        if t is None:
            return TensorMeta(tid, "", ())
        try:
            shape = t.shape  # a list of Python ints (pybind's std::vector<int64_t>)
        except Exception:  # noqa: BLE001 - uninitialised tensors
            shape = []
        m = TensorMeta(tid, dtype_name(t.dtype), tuple(shape))
        # a plain weak reference, no callback: a callback would run Python inside
        # Paddle's tensor destruction (seen to crash long mixed processes); dead
        # entries are pruned in batches instead
        self._remember(key, t, m, shape)
        if len(self._ids) >= self._prune_at:
            self._prune()
        return m

    def _remember(self, key: int, t: Any, m: TensorMeta, shape: list) -> None:
        try:
            version = t._inplace_version()
        except Exception:  # noqa: BLE001 - not a dense tensor: never reused
            version = None
        self._ids[key] = (m.id, weakref.ref(t), m, version, shape)

    def _prune(self) -> None:
        """Drop the id entries of dead tensors; ids are kept for live tensors only, and
        no tensor is kept alive. Amortised: the next prune waits for twice the live size."""
        self._ids = {k: v for k, v in self._ids.items() if v[1]() is not None}
        self._prune_at = max(4096, 2 * len(self._ids))

    def fresh_like(self, m: TensorMeta) -> TensorMeta:
        tid = self._next_id
        self._next_id += 1
        return TensorMeta(tid, m.dtype, m.shape)

    # ------------------------------------------------------------ markers

    def instant(self, text: str) -> None:
        self._event(MARK + text).end()

    # ------------------------------------------------------------ api wrappers

    def _wrap(self, name: str, fn: Callable) -> Callable:
        rec = self

        def wrapper(*args, **kwargs):
            if not rec.enabled or rec._depth:
                return fn(*args, **kwargs)
            rec._depth += 1
            try:
                call = rec._begin(name, args, kwargs)
                ev = rec._event(f"{MARK}api|{call.idx}")
                try:
                    out = fn(*args, **kwargs)
                finally:
                    ev.end()
                rec._end(call, out)
                return out
            finally:
                rec._depth -= 1

        # what functools.update_wrapper(wrapper, fn, assigned=(name, qualname, doc)) sets,
        # set directly: ~3 -> ~0.5 us a wrapper, 2,500 op functions wrapped per trace
        try:
            wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = \
                fn.__name__, fn.__qualname__, fn.__doc__
        except AttributeError:  # an op function without one of them: set what it has
            functools.update_wrapper(wrapper, fn,
                                     assigned=("__name__", "__qualname__", "__doc__"))
        wrapper.__wrapped__ = fn
        wrapper.__opscan_wrapped__ = fn
        return wrapper

    def _begin(self, name: str, args: tuple, kwargs: dict) -> ApiCall:
        self._hooked = -1  # a call between two hooks: the next hook marks its node again
        tensors = _walk_tensors(args, self._tensor, [])
        if kwargs:
            _walk_tensors(tuple(kwargs.values()), self._tensor, tensors)
        inputs, needs, pending = [], [], []
        for t in tensors:
            m = self.meta(t)
            inputs.append(m)
            if not t.stop_gradient:
                needs.append(m)
                pending.append(t)
        call = ApiCall(len(self.calls), name, inputs, needs,
                       self._layer_stack[-1] if self._layer_stack else "", user_source())
        call.pending = pending
        self.calls.append(call)
        if self.on_calls is not None and len(self.calls) % 500 == 0:
            self.on_calls(len(self.calls))
        return call

    def _end(self, call: ApiCall, out: Any) -> None:
        tensors = _walk_tensors(out, self._tensor, [])
        call.outputs = [self.meta(t, fresh=True) for t in tensors]
        pending, call.pending = call.pending, []
        if not self._paddle.is_grad_enabled():
            return
        made_node = False
        for t, m in zip(tensors, call.outputs):
            if not t.stop_gradient:
                made_node = True
                self.producer[_grad_target(t, m)] = call.idx
        if pending and made_node:
            # this call made a grad node: backward sends each of these inputs a gradient
            # (targets read after the call: a leaf gets its accumulation node on first use)
            for t, m in zip(pending, call.needs_grad):
                self.grad_uses.setdefault(_grad_target(t, m), (m, []))[1].append(call.idx)
        add_hook = self._add_hook
        for t in tensors:
            if t.stop_gradient:
                continue
            try:
                add_hook(t, self._grad_hook(call))
            except Exception:  # noqa: BLE001 - leaf/inplace tensors refuse hooks
                continue

    def _grad_hook(self, call: ApiCall) -> Callable:
        rec = self
        text = f"{MARK}grad|{call.idx}"
        idx = call.idx

        def hook(grad):
            # a call's hooks all run inside its grad node, one after another (Paddle
            # applies a node's gradient hooks in a loop before its kernel): the first one
            # names the node's forward call, a marker from the others would say it again
            # (MobileNetV3: 366 hooks, 171 of them batch_norm's further outputs)
            if rec._hooked != idx:
                rec._hooked = idx
                rec._event(text).end()
            if grad is not None:
                call.grads.append(rec.meta(grad))
            return None

        return hook

    def close_fan_in(self) -> None:
        """A backward starts: the gradients of the calls recorded since the last one flow
        now. Their fan-in becomes `Accumulation`s; the next window starts empty (a
        parameter used once per step is not a fan-in across steps)."""
        for key, (meta, uses) in self.grad_uses.items():
            if len(uses) > 1:
                self.fan_in.append(Accumulation(meta, tuple(uses),
                                                self.producer.get(key, -1)))
        self.grad_uses.clear()
        self.producer.clear()
        self._hooked = -1  # a new backward: every grad node runs anew

    # ------------------------------------------------------------ layers

    def _layer_path(self, layer: Any) -> str:
        known = self._names.get(id(layer))
        if known is not None:
            return known
        parent = self._layer_stack[-1] if self._layer_stack else None
        name = type(layer).__name__
        if parent is not None and self._layer_stack:
            for pname, sub in self._parent_layers.get(parent, ()):
                if sub is layer:
                    name = pname
                    break
        path = f"{parent}.{name}" if parent else name
        return path

    def _wrap_layer_call(self, fn: Callable) -> Callable:
        rec = self

        def __call__(layer, *args, **kwargs):
            if not rec.enabled:
                return fn(layer, *args, **kwargs)
            path = rec._layer_path(layer)
            if path not in rec._parent_layers:  # once per path, not per call
                rec._parent_layers[path] = list(layer.named_children())
            rec._layer_stack.append(path)
            ev = rec._event(f"{MARK}layer|{path}")  # what `span` opens, without a generator
            try:
                return fn(layer, *args, **kwargs)
            finally:
                ev.end()
                rec._layer_stack.pop()

        __call__.__opscan_wrapped__ = fn
        return __call__

    # ------------------------------------------------------------ install

    @contextlib.contextmanager
    def installed(self):
        """Wrap op functions, Tensor operators, Layer.__call__ and the optimizer step."""
        self._parent_layers: dict[str, list] = {}
        wrappers: dict[int, Callable] = {}
        try:
            for owner, attr, name, fn in op_function_slots():
                w = wrappers.get(id(fn))
                if w is None:
                    w = wrappers[id(fn)] = self._wrap(name, fn)
                self._patched.put(owner, attr, w)
            T = self._tensor
            for attr, val in list(vars(T).items()):
                if (attr.startswith("__") and attr != "__new__"
                        and type(val).__name__ == "method_descriptor"):
                    self._patched.put(T, attr, self._wrap(attr, val))
            # indexing is Python code calling C++ directly (no op function in between):
            # wrapped so its kernels get tensors and its input counts as a consumer
            for attr in ("__getitem__", "__setitem__"):
                val = getattr(T, attr, None)
                if callable(val) and not hasattr(val, "__opscan_wrapped__"):
                    self._patched.put(T, attr, self._wrap(attr, val))
            grad_fn = self._paddle.grad

            def grad(*args, **kwargs):
                if kwargs.get("create_graph") or (len(args) > 4 and args[4]):
                    self.create_graph = True
                self.close_fan_in()
                return grad_fn(*args, **kwargs)

            for mod in (self._paddle, self._paddle.autograd):
                if getattr(mod, "grad", None) is grad_fn:
                    self._patched.put(mod, "grad", grad)
            backward_fn = self._paddle.autograd.backward

            def backward(*args, **kwargs):
                self.close_fan_in()
                return backward_fn(*args, **kwargs)

            self._patched.put(self._paddle.autograd, "backward", backward)
            tensor_backward = T.backward

            def tensor_bw(t, *args, **kwargs):
                self.close_fan_in()
                return tensor_backward(t, *args, **kwargs)

            self._patched.put(T, "backward", tensor_bw)
            layer_cls = self._paddle.nn.Layer
            self._patched.put(layer_cls, "__call__", self._wrap_layer_call(layer_cls.__call__))
            opt_span: list = []

            def pre():
                opt_span.append(self._event(MARK + "phase|optimizer"))

            def post():
                if opt_span:
                    opt_span.pop().end()

            with optimizer_step_hooks("paddle", pre, post):
                yield self
        finally:
            self._patched.restore()


def op_function_slots() -> list[tuple[Any, str, str, Callable]]:
    """(module, attribute, op name, function) for every Paddle op function bound in a
    loaded module: `paddle._C_ops.conv2d`, `paddle.matmul`, `paddle.tensor.math.add`...

    `paddle._C_ops.x` is `core.pir.ops.x` (it dispatches to dygraph outside static mode);
    `core.eager.ops.x` is bound directly by some modules. Matching is by identity, so
    only real op functions are touched.
    """
    from paddle.base import core

    by_id: dict[int, tuple[str, Any]] = {}
    for ops in (core.eager.ops, core.pir.ops):
        for n in dir(ops):
            if n.startswith("_"):
                continue
            obj = getattr(ops, n)
            if callable(obj) and type(obj).__name__ == "builtin_function_or_method":
                by_id[id(obj)] = (n, obj)
    slots = []
    ids = by_id.keys()
    for mod in list(sys.modules.values()):
        d = getattr(mod, "__dict__", None)
        # most modules bind no op function: one C-level pass over their values says so
        if not isinstance(d, dict) or ids.isdisjoint(map(id, list(d.values()))):
            continue
        for attr, val in list(d.items()):
            hit = by_id.get(id(val))
            if hit is not None and hit[1] is val:
                slots.append((mod, attr, hit[0], val))
    return slots


# ---------------------------------------------------------------- profiler tree -> calls

class _Ctx(NamedTuple):
    step: int = 1
    phase: str = "forward"
    api: int = -1
    grad_of: int = -1
    layer: str = ""
    in_grad_node: bool = False


@dataclass
class Launch:
    """One kernel the step ran. `unrecorded`: the profiler had the API's or grad node's
    scope but no kernel-launch event inside it; the kernel is named from that scope
    (`unrecorded_kernel`)."""

    kernel: str
    ctx: _Ctx
    unrecorded: bool = False


API_SCOPE = " dygraph"  # the `Operator` event every dygraph API function opens
# scopes a dygraph API opens inside its operator that never hold a kernel launch (shape
# inference, grad-node creation): skipped by name, before the node's type is read
_LEAF_SCOPES = (" infer_meta", " node_creation")
# scopes Paddle's Python bindings open around each API function (`conv2d
# pybind_imperative_func`, `UserDefined` events, ~470 a MobileNetV3 step): nothing in them
# but their children counts, so their type (a pybind enum, ~1 us a read) is not read
_PASS_SCOPES = (" pybind_imperative_func", " pybind_patch_func")
# a dygraph API scope (`conv2d dygraph`, an `Operator` event, ~480 a step): its type is
# read only when no launch was found in it (the unrecorded-kernel rule needs `Operator`)
_API_SCOPE_TYPE_UNREAD = -1
_PENDING = -2  # a grad node's forward call, until the node's first marker is seen


def _snake(camel: str) -> str:
    """`EmbeddingGrad` -> `embedding_grad`, `AddN` -> `add_n`, `Conv2d` -> `conv2d`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


def unrecorded_kernel(scope: str) -> str:
    """The phi kernel a profiler scope without a kernel-launch event ran, or "".

    Paddle 3.3.1 opens `RecordEvent("<kernel> kernel launch")` only in the generated API
    code for single-kernel ops. Hand-written APIs (`api_custom_impl.cc`: `embedding_grad`)
    and ops dispatching over several kernels by input type (`add_n`: dense, selected
    rows, tensor array) select and run their kernel without one, inside the API's
    `<api> dygraph` scope or the grad node's `Global_<Op>GradNode` scope, which the
    profiler does record. The kernel is the scope's API name (`add_n`), or the grad
    node's op (`Global_EmbeddingGradNode` -> `embedding_grad`), when the installed
    registry has it; "" otherwise (nothing is invented)."""
    if scope.endswith(API_SCOPE):
        name = kernel_for(scope[: -len(API_SCOPE)])
    elif scope.startswith("Global_") and "GradNode" in scope:
        op = scope[len("Global_"):].split("GradNode", 1)[0]
        name = kernel_for(_snake(op) + "_grad") if op else ""
    else:
        return ""
    return name if name in registered_kernels() else ""


def _is_grad_name(name: str) -> bool:
    return name.startswith("Global_") and name.endswith(
        ("GradNode", "GradNodeFinal", "GradNodeCompat"))


def _time_order(node: Any) -> tuple:
    """Children in time order; of two starting together, the enclosing one first."""
    return (node.start_ns, -node.end_ns)


def _in_time_order(nodes: list) -> bool:
    """Strictly increasing start times: `_time_order` would keep the list as it is.
    Paddle's tree lists children so (one property read per node instead of two and a
    sort); a tie or a step back leaves the sort to decide."""
    prev = -1
    for n in nodes:
        start = n.start_ns
        if start <= prev:
            return False
        prev = start
    return True


def collect_launches(result: Any, setup: bool = False) -> list[Launch]:
    """Kernel launches in time order with their context, from a profiler result.

    setup=True (script mode): forward-phase launches before the first Layer call of step 1
    are the "setup" phase (parameter initialisation, positional tables), step 0; when no
    Layer call ever marks the step's start, nothing is setup."""
    from paddle.profiler import TracerEventType as T

    # node types as ints: comparing pybind enums costs ~1 us each, and a node was
    # compared with up to six of them
    BACKWARD, OPTIMIZATION, OPERATOR, LAUNCH_T = (T.Backward.value, T.Optimization.value,
                                                  T.Operator.value, T.DygraphKernelLaunch.value)
    launches: list[Launch] = []
    step = [1]
    inside = [False]  # after the `opscan|begin` marker
    in_setup = [setup]
    # the grad nodes being walked, innermost last: the forward call of each, from the
    # first `opscan|grad|n` marker inside it (None until one is seen)
    grad_of: list[int | None] = []
    roots = [root for _, root in sorted(result.get_data().items(), key=lambda kv: kv[0])]

    def walk(node: Any, ctx: _Ctx) -> None:
        name = node.name
        # the type is a pybind property, read once per node and only when needed: the
        # markers (a quarter of the nodes) are told by name, and so are the leaf scopes
        # every dygraph API opens inside its operator (another fifth)
        if name.startswith(MARK):
            kind, _, val = name[len(MARK):].partition("|")
            if kind == "grad":
                for i, known in enumerate(grad_of):
                    if known is None:
                        grad_of[i] = int(val)
                return
            if kind == "begin":
                inside[0] = True
                return
            if kind == "stepend":
                step[0] += 1
                in_setup[0] = False
                return
            typ = None
            if kind == "api":
                ctx = _Ctx(step[0], ctx.phase, int(val), ctx.grad_of, ctx.layer,
                           ctx.in_grad_node)
            elif kind == "layer":
                ctx = _Ctx(step[0], ctx.phase, ctx.api, ctx.grad_of, val, ctx.in_grad_node)
                in_setup[0] = False
            elif kind == "phase":
                ctx = _Ctx(step[0], val, ctx.api, ctx.grad_of, ctx.layer, ctx.in_grad_node)
        elif name.endswith(_LEAF_SCOPES):
            return
        elif name.endswith(_PASS_SCOPES):
            typ = None
        elif name.endswith(API_SCOPE):
            typ = _API_SCOPE_TYPE_UNREAD
        else:
            typ = node.type.value
        grad_node = False
        if typ is None or typ == _API_SCOPE_TYPE_UNREAD:
            pass
        elif typ == BACKWARD:
            if ctx.phase != "backward":
                ctx = ctx._replace(phase="backward")
        elif typ == OPTIMIZATION:
            if ctx.phase != "optimizer":
                ctx = ctx._replace(phase="optimizer")
        elif typ == OPERATOR and _is_grad_name(name):
            ctx = _Ctx(step[0], "backward", -1, _PENDING, ctx.layer, True)
            grad_node = True
            grad_of.append(None)
        elif typ == LAUNCH_T and name.endswith(LAUNCH):
            if inside[0]:
                if in_setup[0] and ctx.phase == "forward" and not ctx.in_grad_node:
                    launches.append(Launch(name[: -len(LAUNCH)],
                                           ctx._replace(step=0, phase=SETUP)))
                else:
                    in_setup[0] = False
                    # a context made under a marker carries the step already (shared
                    # by the launches under it; contexts are never changed in place)
                    launches.append(Launch(name[: -len(LAUNCH)], ctx if ctx.step == step[0]
                                           else _Ctx(step[0], *ctx[1:])))
            return
        before = len(launches)
        children = node.children_node
        if len(children) > 1 and not _in_time_order(children):
            children = sorted(children, key=_time_order)
        for child in children:
            walk(child, ctx)
        if typ == _API_SCOPE_TYPE_UNREAD and len(launches) == before and inside[0]:
            typ = node.type.value
        if len(launches) == before and inside[0] and typ == OPERATOR and (
                name.endswith(API_SCOPE) or grad_node):
            kernel = unrecorded_kernel(name)
            if kernel:
                launch_ctx = ctx._replace(step=step[0])
                if in_setup[0] and ctx.phase == "forward" and not ctx.in_grad_node:
                    launch_ctx = ctx._replace(step=0, phase=SETUP)
                launches.append(Launch(kernel, launch_ctx, unrecorded=True))
        if grad_node:
            # the node's own launches learn their forward call now (nested grad nodes
            # resolved theirs already)
            found = grad_of.pop()
            found = -1 if found is None else found
            for la in launches[before:]:
                if la.ctx.grad_of == _PENDING:
                    la.ctx = la.ctx._replace(grad_of=found)

    for root in roots:
        walk(root, _Ctx())
    if setup and not any(la.ctx.layer for la in launches):
        launches = [Launch(la.kernel, la.ctx._replace(step=1, phase="forward"))
                    if la.ctx.phase == SETUP else la for la in launches]
    return launches


# What the CPU runs instead of the NPU's accumulation `add` kernel (OpCall.cpu_ops).
CPU_ACCUMULATE = "imperative::TensorAdd (BLAS axpy, no kernel)"


@dataclass(frozen=True)
class Accumulation:
    """A tensor that receives gradients from several grad nodes: on a custom device
    (the NPU) backward sums them with `uses - 1` calls of the `add` kernel."""

    tensor: TensorMeta
    uses: tuple[int, ...]  # forward call indices whose grad nodes send it a gradient
    producer: int  # forward call that made the tensor, -1 for a leaf (parameter, input)


def accumulations(rec: Recorder) -> list[Accumulation]:
    """Gradient fan-in from the recorded forward calls.

    Paddle's backward (`egr::RunBackward`) collects the gradients a grad node receives in
    its `GradTensorHolder`; a second and later gradient for the same tensor is added in
    `GradTensorHolder::add`, which in Paddle 3.3.1 calls `add_ad_func` (the `add` kernel)
    when the tensor is on a custom device (or create_graph is set) and
    `imperative::TensorAdd` (BLAS axpy, no kernel, no profiler event) on CPU. So the CPU
    trace cannot show these kernels; they are counted here: every forward call that made
    a grad node sends one gradient to each of its inputs that needs one (an input used
    twice, `h * h`, gets two)."""
    return list(rec.fan_in)


def _grad_target(t: Any, m: TensorMeta) -> tuple:
    """Where backward collects `t`'s gradients: its grad node (for a parameter, its
    accumulation node) and, for a node with several outputs (`split`), the output's
    storage and shape. Python identity is not enough: APIs hand kernels new Python
    wrappers of the same tensor (`F.adaptive_avg_pool2d` passes `x._use_gpudnn(False)`)."""
    try:
        return (t.grad_fn.node_ptr(), t.data_ptr(), m.shape)
    except Exception:  # noqa: BLE001 - no grad node (yet): the Python identity
        return ("id", m.id)


def _accumulation_calls(launches: list[Launch], accs: list[Accumulation],
                        rec: Recorder) -> dict[int, list[OpCall]]:
    """launch position -> accumulation OpCalls to put after it (-1: before the first)."""
    by_grad: dict[int, list[int]] = {}
    last_backward = -1
    for i, la in enumerate(launches):
        if la.ctx.grad_of >= 0:
            by_grad.setdefault(la.ctx.grad_of, []).append(i)
        if la.ctx.phase == "backward":
            last_backward = i
    out: dict[int, list[OpCall]] = {}
    for acc in accs:
        after = [i for u in acc.uses for i in by_grad.get(u, ())]
        before = by_grad.get(acc.producer, [])
        if after:
            pos = max(after)
        elif before:
            pos = min(before) - 1
        else:
            pos = last_backward
        step = launches[pos].ctx.step if pos >= 0 else 1
        owner = rec.calls[acc.producer] if acc.producer >= 0 else rec.calls[acc.uses[0]]
        for _ in acc.uses[1:]:
            c = OpCall(index=0, op="add", overload="", phase="backward", step=step,
                       module=owner.module, source=owner.source, aliases=aliases_for("add"),
                       cpu_ops=[CPU_ACCUMULATE])
            c.inputs = [rec.fresh_like(acc.tensor), rec.fresh_like(acc.tensor)]
            c.outputs = [rec.fresh_like(acc.tensor)]
            out.setdefault(pos, []).append(c)
    return out


def build_calls(launches: list[Launch], rec: Recorder) -> tuple[list[OpCall], list[str]]:
    """OpCalls from launches + the recorder's ApiCalls. Returns (calls, notes).

    Inside one API call (or one grad node) the launch named after the API's kernel
    (`<kernel>_grad` in a grad node) gets the call's tensors; helper launches next to it
    (`full` turning a Python scalar into a tensor) get none. When no launch carries the
    API's name the API is a composite (`linear` -> `matmul` + `add`) and every launch in
    it gets the API's input tensors, an approximation noted in the trace.
    """
    _attribute_composite_grads(launches)
    groups: dict[tuple[str, int], list[int]] = {}
    for i, la in enumerate(launches):
        if la.ctx.in_grad_node and la.ctx.grad_of >= 0:
            groups.setdefault(("grad", la.ctx.grad_of), []).append(i)
        elif not la.ctx.in_grad_node and la.ctx.api >= 0:
            groups.setdefault(("api", la.ctx.api), []).append(i)
    role: dict[int, str] = {}  # launch -> primary | composite | helper
    for (kind, idx), members in groups.items():
        want = kernel_for(rec.calls[idx].name) if not rec.calls[idx].name.startswith("__") \
            else ""
        if kind == "grad":
            want = want + "_grad" if want else ""
        named = [i for i in members if launches[i].kernel == want]
        if named:
            role[named[0]] = "primary"
        elif len(members) == 1 or want == "" and kind == "api":
            role[members[-1]] = "primary"
        else:
            for i in members:
                role[i] = "composite"
    calls: list[OpCall] = []
    bare = composite = 0
    # paddle.grad(create_graph=True) runs the accumulation kernels on CPU too (they are
    # in the launches already): not counted twice
    accs = [] if rec.create_graph else accumulations(rec)
    extra = _accumulation_calls(launches, accs, rec)
    for c in extra.get(-1, []):
        c.index = len(calls)
        calls.append(c)
    for i, la in enumerate(launches):
        ctx = la.ctx
        kernel = la.kernel
        c = OpCall(index=len(calls), op=kernel, overload="", phase=ctx.phase, step=ctx.step,
                   module=ctx.layer)
        r = role.get(i, "helper")
        if ctx.in_grad_node and ctx.grad_of >= 0:
            fwd = rec.calls[ctx.grad_of]
            c.module, c.source = fwd.module, fwd.source
            c.aliases = aliases_for(kernel)
            if r != "helper":
                c.inputs = list(fwd.inputs) + list(fwd.grads)
                c.outputs = [rec.fresh_like(m) for m in fwd.needs_grad]
                composite += r == "composite"
            else:
                bare += 1
        elif not ctx.in_grad_node and ctx.api >= 0:
            api = rec.calls[ctx.api]
            c.module, c.source = api.module, api.source
            if r == "primary":
                c.inputs, c.outputs = list(api.inputs), list(api.outputs)
                c.aliases = aliases_for(kernel, _api_alias(api.name))
            elif r == "composite":
                c.inputs = list(api.inputs)
                c.aliases = aliases_for(kernel)
                c.cpu_ops = []
                composite += 1
            else:
                c.aliases = aliases_for(kernel)
                bare += 1
        else:
            c.aliases = aliases_for(kernel)
            bare += 1
        calls.append(c)
        for a in extra.get(i, []):
            a.index = len(calls)
            calls.append(a)
    notes = []
    unrecorded: dict[str, int] = {}
    for la in launches:
        if la.unrecorded:
            unrecorded[la.kernel] = unrecorded.get(la.kernel, 0) + 1
    n_acc = sum(len(a.uses) - 1 for a in accs)
    if n_acc:
        notes.append(f"{n_acc} gradient accumulation(s) added as `add` kernel calls: on the NPU "
                     f"Paddle sums the gradients of the {len(accs)} tensor(s) used by several "
                     "ops with the add kernel (GradTensorHolder::add -> add_ad_func); on CPU "
                     "with BLAS axpy, which no CPU trace shows")
    if unrecorded:
        notes.append("kernels the profiler records no launch event for, named from their API "
                     "or grad-node scope: " + ", ".join(
                         f"{k} x{n}" for k, n in sorted(unrecorded.items())))
    if bare:
        notes.append(f"{bare} kernel call(s) ran as helpers inside another call or were "
                     "launched from C++ (scalar-to-tensor `full`, gradient seeds); they carry "
                     "no tensor metadata")
    if composite:
        notes.append(f"{composite} kernel call(s) come from composite APIs (e.g. `linear` -> "
                     "`matmul` + `add`); their tensors are the API's inputs")
    return calls, notes


def _attribute_composite_grads(launches: list[Launch]) -> None:
    """Grad nodes inside a composite API (`linear` = matmul + add) get no hook marker:
    only the API's final output is visible to Python. Give such a grad launch the
    forward call of the grad node just before it when that call launched the matching
    forward kernel (`matmul_grad` after `linear`'s `add_grad` -> `linear`)."""
    fwd_kernels: dict[int, set[str]] = {}
    for la in launches:
        if not la.ctx.in_grad_node and la.ctx.api >= 0:
            fwd_kernels.setdefault(la.ctx.api, set()).add(la.kernel)
    last = -1
    for i, la in enumerate(launches):
        ctx = la.ctx
        if not ctx.in_grad_node:
            continue
        if ctx.grad_of >= 0:
            last = ctx.grad_of
        elif last >= 0 and la.kernel.endswith("_grad") and \
                la.kernel[: -len("_grad")] in fwd_kernels.get(last, ()):
            launches[i] = Launch(la.kernel, ctx._replace(grad_of=last))


def _api_alias(name: str) -> str:
    """Dunder operator wrappers are not op names worth keeping as aliases."""
    return "" if name.startswith("__") else name
