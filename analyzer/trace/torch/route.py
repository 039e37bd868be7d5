"""CPU trace vs NPU route: every op a CPU profiler shows for the step, accounted for.

A porting engineer who compares the report with a CPU profiler run ("dump op") sees
ops the report does not list. Most are right to be missing, because the NPU takes
another route; this module says which route, per op (`analyzer.model.RouteDiff`):

- inside-adapted-op: a CPU kernel that ran inside an NPU kernel. In real mode this is
  measured, not guessed: the step runs under the torch profiler and every emulated
  kernel marks itself (`opscan::kernel::<op>` around the kernel, `opscan::cpu` around
  its CPU computation), so the profiler's nesting says what ran inside what;
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


def route_from_events(events: Iterable, recorded: set[str]) -> Counter:
    """(op, reason, under) -> count from profiler FunctionEvents of an emulated step.

    recorded: base names of the ops the trace recorded (they need no row)."""
    rows: Counter = Counter()
    for e in events:
        name = e.name
        if not name.startswith("aten::"):
            continue
        kernel = None
        fallback = False
        in_cpu = False
        parent_op = ""
        p = e.cpu_parent
        while p is not None:
            pn = p.name
            if pn == CPU_MARK and kernel is None:
                in_cpu = True
            elif pn.startswith(KERNEL_MARK):
                kernel = pn[len(KERNEL_MARK):]
                break
            elif pn.startswith(FALLBACK_MARK):
                kernel = pn[len(FALLBACK_MARK):]
                fallback = True
                break
            elif pn.startswith("aten::") and not parent_op and not in_cpu:
                parent_op = pn
            p = p.cpu_parent
        if kernel is not None:
            if not in_cpu:
                continue  # the emulator's own bookkeeping (unwrapping storages)
            under = kernel
            if base(name) == base(under.replace(" (backward)", "")):
                continue
            reason = ("cpu-only" if _is_cpu_only(name) else
                      "inside-cpu-fallback" if fallback else "inside-adapted-op")
            rows[(name, reason, under)] += 1
            continue
        if base(name) in recorded:
            continue
        rows[(name, "view" if is_view_op(name) else "composite", parent_op)] += 1
    return rows


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
