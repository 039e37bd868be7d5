"""CPU trace vs NPU route: every op a CPU profiler shows for the step, accounted for.

A porting engineer who compares the report with a CPU profiler run ("dump op") sees
ops the report does not list. Most are right to be missing, because the NPU takes
another route; this module says which route, per op (`analyzer.model.RouteDiff`):

- inside-adapted-op: a CPU kernel that ran inside an NPU kernel. In real mode this is
  measured, not guessed: the step runs under torch's RecordFunction profiler and every
  emulated kernel marks itself (`opscan::kernel::<op>` around the kernel, `opscan::cpu`
  around its CPU computation), so the profiler's nesting says what ran inside what
  (once two profiled steps agree, later identical steps reuse their rows:
  `tracer._StepProfiler`);
- inside-cpu-fallback: the same inside an op the NPU lacks (it runs on the CPU whole);
- cpu-only: the same, for CPU-specific kernels (`_scaled_dot_product_flash_attention_for_cpu`);
- view: an op whose every overload returns an alias of an input (no kernel on the NPU);
- composite: an op that decomposes above the backend on both devices (`aten::linear`):
  its parts are in the report;
- foreach: the CPU's optimizers take the single-tensor path (`aten::add_` per
  parameter); the NPU's default is foreach (`aten::_foreach_add_`).

In meta mode the step runs no profiler (speed); the CPU ops each emulated kernel
dispatched (`OpCall.cpu_ops`, seen at operator level) give the inside-adapted-op and
cpu-only rows, and foreach rows come from the optimizer calls as in real mode.
"""
from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable

from analyzer.model import OpCall, RouteDiff

KERNEL_MARK = "opscan::kernel::"
FALLBACK_MARK = "opscan::fallback::"
CPU_MARK = "opscan::cpu"


def base(name: str) -> str:
    """`aten::add.Tensor` -> `aten::add` (profiler events carry no overload)."""
    ns, _, rest = name.partition("::")
    return f"{ns}::{rest.split('.', 1)[0]}" if rest else name


@functools.lru_cache(maxsize=4096)
def is_view_op(name: str) -> bool:
    """True when every overload of `aten::x` returns only aliases of its inputs."""
    import torch

    ns, _, rest = base(name).partition("::")
    packet = getattr(getattr(torch.ops, ns, None), rest, None)
    if packet is None:
        return False
    seen = False
    for ov in packet.overloads():
        rets = getattr(packet, ov)._schema.returns
        if not rets or any(r.alias_info is None or r.alias_info.is_write for r in rets):
            return False
        seen = True
    return seen


def _is_cpu_only(name: str) -> bool:
    from analyzer.trace.torch.tracer import is_cpu_only_kernel

    return is_cpu_only_kernel(name)


# Utility ops every profiler hides (torch.autograd.profiler_util._filter_name).
_HIDDEN = frozenset({"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
                     "profiler::_record_function_enter_new", "profiler::_record_function_exit",
                     "aten::is_leaf", "aten::output_nr", "aten::_version"})

# What an event sees above it: (kernel or fallback op it runs inside, is it a fallback,
# does an `opscan::cpu` range lie between the event and that kernel, nearest aten op
# above the event when no `opscan::cpu` range is nearer).
_Context = tuple  # (str | None, bool, bool, str)
_TOP: _Context = (None, False, False, "")


def _row(name: str, ctx: _Context):
    """The route row of an `aten::` event under ctx, or None (no row)."""
    kernel, fallback, in_cpu, parent_op = ctx
    if kernel is not None:
        if not in_cpu:
            return None  # the emulator's own bookkeeping (unwrapping storages)
        if base(name) == base(kernel.replace(" (backward)", "")):
            return None
        reason = ("cpu-only" if _is_cpu_only(name) else
                  "inside-cpu-fallback" if fallback else "inside-adapted-op")
        return (name, reason, kernel)
    return (name, "view" if is_view_op(name) else "composite", parent_op)


def _inner(name: str, ctx: _Context) -> _Context:
    """The context events nested inside a range `name` (itself under ctx) see."""
    if name.startswith("aten::"):
        return (ctx[0], ctx[1], ctx[2], name)
    if name == CPU_MARK:
        return (ctx[0], ctx[1], True, "")
    if name.startswith(KERNEL_MARK):
        return (name[len(KERNEL_MARK):], False, False, "")
    if name.startswith(FALLBACK_MARK):
        return (name[len(FALLBACK_MARK):], True, False, "")
    return ctx


class RouteFolder:
    """Folds profiler records into route rows, (op, reason, under) -> count.

    Records are RecordFunction push/pop events per thread, in order (the legacy
    profiler's `torch.autograd._disable_profiler_legacy()`); nesting is the push/pop
    stack, so no event tree is built and nothing of a step is kept once folded. A
    row for an `aten::` event: inside a kernel mark, the kernel it ran inside when an
    `opscan::cpu` range lies between (else the emulator's own bookkeeping: no row);
    outside every kernel, a view or composite row under the nearest aten op above it.
    The trace later drops composite/view rows of ops it recorded as kernels."""

    def __init__(self):
        self.counts: Counter = Counter()
        self._memo: dict = {}  # (name, ctx) -> (row or None, inner ctx)

    def fold(self, thread_records) -> Counter:
        """Fold one profiler session's records: their rows, also added to `counts`."""
        counts: Counter = Counter()
        memo, hidden = self._memo, _HIDDEN
        for records in thread_records:
            stack: list = []  # (handle, context of the enclosing range)
            ctx = _TOP
            last = ""  # the name of the previous record when it was a push
            for r in records:
                kind = r.kind()
                if kind == "push":
                    name = r.name()
                    if name == last or name in hidden:
                        # a redispatch logs the op twice in a row: one event (as kineto)
                        continue
                    last = name
                    hit = memo.get((name, ctx))
                    if hit is None:
                        row = _row(name, ctx) if name.startswith("aten::") else None
                        hit = memo[(name, ctx)] = (row, _inner(name, ctx))
                    if hit[0] is not None:
                        counts[hit[0]] += 1
                    stack.append((r.handle(), ctx))
                    ctx = hit[1]
                    continue
                last = ""
                if kind == "pop" and stack:
                    h = r.handle()
                    if stack[-1][0] == h:
                        ctx = stack.pop()[1]
                        continue
                    for i in range(len(stack) - 2, -1, -1):  # a range left open inside
                        if stack[i][0] == h:
                            ctx = stack[i][1]
                            del stack[i:]
                            break
        self.counts.update(counts)
        return counts


def route_from_cpu_ops(calls: Iterable[OpCall]) -> Counter:
    """Meta mode: the operator-level CPU/meta kernels each emulated kernel dispatched."""
    rows: Counter = Counter()
    for c in calls:
        own = base(c.op)
        under = c.op
        for x in c.cpu_ops:
            if base(x) == own:
                continue
            reason = "cpu-only" if _is_cpu_only(x) else "inside-adapted-op"
            rows[(base(x), reason, under)] += 1
    return rows


def foreach_route(calls: Iterable[OpCall]) -> Counter:
    """The single-tensor op a CPU optimizer runs for each foreach kernel the NPU runs."""
    rows: Counter = Counter()
    for c in calls:
        b = base(c.op)
        if c.phase == "optimizer" and b.startswith("aten::_foreach_"):
            single = "aten::" + b[len("aten::_foreach_"):]
            rows[(single, "foreach", c.op)] += 1
    return rows


def name_backward_kernels(counts: Counter, kernel_name) -> Counter:
    """Rows under `X (backward)` move under the backward kernel torch_npu runs for X."""
    out: Counter = Counter()
    for (op, reason, under), n in counts.items():
        if under.endswith(" (backward)"):
            under = kernel_name(under[:-len(" (backward)")])
        out[(op, reason, under)] += n
    return out


def to_rows(counts: Counter) -> list[RouteDiff]:
    """RouteDiff rows in a stable order: by op, reason, under."""
    return [RouteDiff(op, reason, under, n) for (op, reason, under), n in sorted(counts.items())]
