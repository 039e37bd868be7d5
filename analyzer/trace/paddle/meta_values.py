"""What Paddle meta mode does where real model code needs tensor values.

Meta mode builds and runs the user's `build()` and step under `paddle.enable_static()`
(`analyzer.trace.paddle.meta`): every tensor is a `pir.Value` with a shape and a dtype
and no storage. Real model code trips over that in three places, each handled here
while build and step run (`ValueShims.installed`), and each counted for the report:

- `Layer.register_buffer(name, tensor)` refuses a Value (`The registered buffer should be
  a Paddle.Tensor, but received Value`). A Value is accepted and stored like a tensor:
  the buffer is then a value in the program, as a constant the step reads.
- `param.set_value(array)` does not exist on a Value. It becomes a shape check (a wrong
  shape raises as in dygraph) and no assignment: a meta trace needs no parameter values,
  and setting values in build() is initialisation, which real mode does not trace either.
- reading a value: `int(t)`, `float(t)`, `bool(t)` (an `if` or `min()` on a tensor),
  `t.item()`, `t.numpy()`, `t.tolist()`. The value is *computed* when it can be cheaply:
  the program slice it depends on is cut out of the program and run on CPU by Paddle's
  executor when that slice reads no parameter and no feed and its tensors total at most
  `COMPUTE_BUDGET` bytes. PP-OCR's DB loss, `int(positive.sum())` with
  `positive = gt * mask`, depends only on the labels: it gets its real value (the
  labels as build() made them; random labels are drawn again), and the branch and the
  slice length it drives follow it. A value that depends on parameters (so on the whole
  model, which meta mode exists not to allocate) gets a *placeholder*: 1 for numbers, True
  for conditions, ones for arrays. Branches then follow the placeholder, which is named
  with its source line in the report, since the op set can differ from a real run
  there.

Why not the alternatives: building the model in dygraph and tracing it on placeholder
tensors needs a meta device Paddle does not have (`paddle.LazyGuard` defers only
parameter initialisation, every activation is still allocated); falling back to a real
step on shrunken inputs needs to know which dimensions may shrink, which no model file
says, and still allocates every parameter.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from analyzer.trace.entry import user_source
from analyzer.trace.paddle.names import dtype_name
from analyzer.trace.patches import AttrPatches

# A value-reading slice is run for real only when its tensors total at most this.
COMPUTE_BUDGET = 64 * 2 ** 20
# Ops whose values the slice cannot have: parameters live in the never-run startup
# program, feeds have no data.
_NO_VALUE_OPS = frozenset({"builtin.parameter", "pd_op.data", "pd_op.feed",
                           "builtin.shadow_feed"})
_ITEM_SIZE = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "float16": 2, "bfloat16": 2,
              "int32": 4, "float32": 4, "int64": 8, "float64": 8, "complex64": 8,
              "complex128": 16}


@dataclass
class Read:
    """One tensor value the model code read in meta mode."""

    how: str  # "int(Tensor)", "bool(Tensor)", "Tensor.item()" ...
    source: str  # the user's source line
    computed: bool  # True: run on CPU; False: a placeholder


@dataclass
class ValueShims:
    """Counts of what was done; `notes()` says it in the report."""

    main: Any = None  # the program being built
    buffers: int = 0
    set_values: int = 0
    reads: list[Read] = field(default_factory=list)

    # ------------------------------------------------------------ values

    def value_of(self, v: Any, how: str) -> Any:
        """The numpy value of `v`: computed from its program slice, or None when it
        cannot be (then the caller uses a placeholder)."""
        arr = _compute(self.main, v)
        self.reads.append(Read(how, user_source(), arr is not None))
        return arr

    def notes(self) -> list[str]:
        out = []
        if self.buffers:
            out.append(f"meta mode: {self.buffers} register_buffer call(s) took program "
                       "values (constants the step reads)")
        if self.set_values:
            out.append(f"meta mode: {self.set_values} set_value call(s) were shape-checked "
                       "and not applied (a meta trace needs no parameter values)")
        computed = [r for r in self.reads if r.computed]
        guessed = [r for r in self.reads if not r.computed]
        if computed:
            out.append(f"meta mode: {len(computed)} tensor value read(s) computed on CPU from "
                       "a parameter-free slice of the program: " + _where(computed))
        if guessed:
            out.append(f"meta mode: {len(guessed)} tensor value read(s) depend on parameters "
                       "and got a placeholder (1 / True / ones); branches and sizes that "
                       "depend on them follow the placeholder and may differ from a real "
                       "step: " + _where(guessed))
        return out

    # ------------------------------------------------------------ install

    @contextlib.contextmanager
    def installed(self):
        import numpy as np
        import paddle

        Value = paddle.pir.Value
        Layer = paddle.nn.Layer
        patches = AttrPatches()
        put = patches.put
        shims = self

        register_buffer = Layer.register_buffer

        def register(layer, name, tensor, persistable=True):
            if not isinstance(tensor, Value):
                return register_buffer(layer, name, tensor, persistable)
            if "_buffers" not in layer.__dict__:
                raise ValueError("super().__init__() should be called first")
            if not isinstance(name, str) or not name or "." in name:
                raise KeyError(f"bad buffer name {name!r}")
            layer._buffers[name] = tensor
            if persistable:
                layer._non_persistable_buffer_names_set.discard(name)
            else:
                layer._non_persistable_buffer_names_set.add(name)
            shims.buffers += 1

        def set_value(v, value):
            want = tuple(int(d) for d in v.shape)
            got = tuple(int(d) for d in (value.shape if hasattr(value, "shape")
                                         else np.shape(value)))
            if want != got and -1 not in want and -1 not in got:
                raise ValueError(f"set_value: the shape {list(got)} of the value does not "
                                 f"match the tensor's shape {list(want)}")
            shims.set_values += 1

        def array(v, how):
            arr = shims.value_of(v, how)
            if arr is not None:
                return arr
            shape = [d if d > 0 else 1 for d in (int(x) for x in v.shape)]
            return np.ones(shape, dtype=_numpy_dtype(v))

        def scalar(v, how):
            arr = array(v, how)
            if arr.size != 1:
                raise TypeError(f"{how}: only a one-element tensor has a scalar value, this "
                                f"one has shape {list(arr.shape)}")
            return arr.reshape(()).item()

        try:
            put(Layer, "register_buffer", register)
            put(Value, "set_value", set_value)
            put(Value, "__int__", lambda v: int(scalar(v, "int(Tensor)")))
            put(Value, "__index__", lambda v: int(scalar(v, "int(Tensor)")))
            put(Value, "__float__", lambda v: float(scalar(v, "float(Tensor)")))
            put(Value, "__bool__", lambda v: bool(scalar(v, "bool(Tensor)")))
            put(Value, "item", lambda v, *a: scalar(v, "Tensor.item()"))
            put(Value, "numpy", lambda v: array(v, "Tensor.numpy()"))
            put(Value, "tolist", lambda v: array(v, "Tensor.tolist()").tolist())
            yield self
        finally:
            patches.restore()


def _where(reads: list[Read]) -> str:
    seen: dict[tuple[str, str], int] = {}
    for r in reads:
        seen[(r.how, r.source)] = seen.get((r.how, r.source), 0) + 1
    return ", ".join(f"{how} at {src or 'an unknown line'}" + (f" x{n}" if n > 1 else "")
                     for (how, src), n in seen.items())


def _numpy_dtype(v: Any) -> str:
    name = dtype_name(v.dtype)
    return {"bfloat16": "float32"}.get(name, name) if name in _ITEM_SIZE else "float32"


def _nbytes(v: Any) -> int | None:
    try:
        shape = [int(d) for d in v.shape]
    except Exception:  # noqa: BLE001 - vectors of values
        return 0
    if any(d < 0 for d in shape):
        return None
    n = _ITEM_SIZE.get(dtype_name(v.dtype), 8)
    for d in shape:
        n *= d
    return n


def _compute(main: Any, v: Any):
    """Run the program slice `v` depends on; its numpy value, or None when the slice
    reads a parameter or a feed, or is bigger than COMPUTE_BUDGET."""
    import paddle

    if main is None:
        return None
    ops = list(main.global_block().ops)
    pos = {op.id(): i for i, op in enumerate(ops)}
    top = v.get_defining_op()
    if top is None or top.id() not in pos:
        return None
    need: set[int] = set()
    todo = [top]
    total = 0
    while todo:
        op = todo.pop()
        if op.id() in need:
            continue
        if op.name() in _NO_VALUE_OPS or op.id() not in pos:
            return None
        need.add(op.id())
        for r in op.results():
            size = _nbytes(r)
            if size is None:
                return None
            total += size
        if total > COMPUTE_BUDGET:
            return None
        for src in op.operands_source():
            if src is not None and src.initialized():
                todo.append(src.get_defining_op())
    clone = main.clone()
    cops = list(clone.global_block().ops)
    if len(cops) != len(ops):
        return None
    target = cops[pos[top.id()]].result(v.index())
    block = clone.global_block()
    for i in reversed(range(len(ops))):
        if ops[i].id() not in need:
            block.remove_op(cops[i])
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        out = exe.run(clone, fetch_list=[target], scope=paddle.static.Scope())
    except Exception:  # noqa: BLE001 - anything the executor refuses: a placeholder
        return None
    import numpy as np

    return np.asarray(out[0])
