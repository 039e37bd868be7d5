"""Will a real-mode step fit in this machine's memory? (`--mode auto`) And if it does not
after all, stop with a message instead of being killed by the kernel's OOM killer.

The estimate comes from a meta trace (no storage is allocated): every call's tensors carry
ids, dtypes and shapes, so the live bytes of a real step can be simulated call by call:

- leaves (tensors first seen as an input: parameters, buffers, the inputs, and gradients
  the autograd engine accumulated) live all step;
- optimizer state (tensors the optimizer phase updates in place but that are not leaves:
  Adam's exp_avg/exp_avg_sq, momentum buffers) lives from its birth to the end;
- every other tensor (activations, gradients, temporaries) lives from the call that
  produced it to the last call that reads it;
- outputs of view ops share their base's storage and cost nothing.

The peak of that sum is the estimate. It ignores the allocator's caching and
fragmentation and the framework's own footprint (already in the process when the
available memory is read), so `fits()` asks for a wide margin.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.model import Trace

# A real run is chosen when the estimated peak stays under this share of the free memory.
COMFORT = 0.5
# The watchdog stops a real run when the process grows by this share of the free memory.
WATCHDOG_SHARE = 0.9

# Paddle kernels whose output shares the input's storage (phi stride kernels / inplace views).
PADDLE_VIEW_KERNELS = frozenset({
    "reshape", "reshape_grad", "squeeze", "unsqueeze", "flatten", "view_shape", "view_dtype",
    "as_strided", "as_real", "as_complex", "share_data", "assign_out_",
})


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated bytes of one real training step, by kind, and its simulated peak."""

    leaves: int  # tensors no traced kernel produced: parameters, buffers, inputs, gradients
    optimizer_state: int
    peak: int  # the simulated peak of all live tensors (includes the two above)

    @property
    def transient(self) -> int:
        """Activations, gradients and temporaries at the peak."""
        return self.peak - self.leaves - self.optimizer_state

    def describe(self) -> str:
        return (f"{gb(self.peak)}: parameters, buffers, inputs and gradients "
                f"{gb(self.leaves)}, optimizer state {gb(self.optimizer_state)}, "
                f"activations and temporaries {gb(self.transient)}")


def gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def torch_view_ops(names: set[str]) -> set[str]:
    """Of the `aten::view.default`-style overload names, those whose schema returns an alias."""
    import torch

    views = set()
    for name in names:
        ns, _, rest = name.partition("::")
        base, _, overload = rest.partition(".")
        try:
            op = getattr(getattr(getattr(torch.ops, ns), base), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        rets = op._schema.returns
        if rets and all(r.alias_info is not None and not r.alias_info.is_write for r in rets):
            views.add(name)
    return views


def estimate(trace: Trace, *, steady: bool = False) -> MemoryEstimate:
    """Simulate the live bytes of `trace` (a meta trace of one step) call by call.

    steady: the real run has more steps than the traced one, so the estimate is of a later
    step: the optimizer state the traced step created (Adam's moments, born in its
    optimizer phase, after the forward's peak) is already alive when that step's forward
    runs, and is counted from the start, like the parameters. A later step is otherwise the
    same step again (a multi-step meta trace would count each step's new inputs as leaves
    alive all run, an estimate growing with --steps that no real run shows)."""
    calls = trace.calls
    if trace.framework == "torch":
        views = torch_view_ops({c.overload or c.op for c in calls})
        is_view = lambda c: (c.overload or c.op) in views  # noqa: E731
    else:
        is_view = lambda c: c.op in PADDLE_VIEW_KERNELS  # noqa: E731
    size: dict[int, int] = {}
    last_use: dict[int, int] = {}
    leaves: set[int] = set()
    produced: set[int] = set()
    state: set[int] = set()
    for i, c in enumerate(calls):
        in_ids = {t.id for t in c.inputs}
        for t in c.inputs:
            if t.id not in produced and t.id not in size:
                leaves.add(t.id)
                size[t.id] = t.nbytes()
            last_use[t.id] = i
        for t in c.outputs:
            if t.id not in size:
                size[t.id] = 0 if is_view(c) else t.nbytes()
                produced.add(t.id)
            if c.phase == "optimizer" and t.id in in_ids and t.id not in leaves:
                state.add(t.id)
            last_use[t.id] = i
    ends: dict[int, int] = {}
    for tid, i in last_use.items():
        if tid not in leaves and tid not in state:
            ends[i] = ends.get(i, 0) + size[tid]
    leaf_bytes = sum(size[t] for t in leaves)
    state_bytes = sum(size[t] for t in state)
    live = leaf_bytes
    born: set[int] = set(leaves)
    if steady:
        live += state_bytes
        born |= state
    peak = live
    for i, c in enumerate(calls):
        for t in c.outputs:
            if t.id not in born:
                born.add(t.id)
                live += size[t.id]
        peak = max(peak, live)
        live -= ends.get(i, 0)
    return MemoryEstimate(leaf_bytes, state_bytes, max(peak, leaf_bytes + state_bytes))


def available_bytes() -> int | None:
    """Memory this process may still take: MemAvailable, capped by a cgroup v2 limit."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        return None
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
                used = int(f.read().strip())
            room = int(limit) - used
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return avail


def fits(est: MemoryEstimate, available: int | None) -> bool:
    """True when a real step comfortably fits (unknown free memory: assume it does)."""
    return available is None or est.peak <= COMFORT * available


def rss_bytes() -> int:
    """This process's resident set size (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Watchdog:
    """Stop the process with a one-line message before the OOM killer would kill it.

    A real-mode step that outgrows the machine is killed by the kernel with no message.
    This thread polls the resident size; past `limit` bytes it writes why to stderr and
    exits with status 3 (a C++ kernel holding the GIL-free allocation cannot be
    interrupted more gently).
    """

    def __init__(self, limit: int, what: str, interval: float = 0.05,
                 exit_fn: Callable[[int], None] = os._exit):
        self.limit = limit
        self.what = what
        self.interval = interval
        self.exit_fn = exit_fn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="opscan-watchdog", daemon=True)

    @classmethod
    def for_real_run(cls, what: str) -> "Watchdog | None":
        avail = available_bytes()
        if avail is None:
            return None
        return cls(rss_bytes() + int(WATCHDOG_SHARE * avail), what)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            rss = rss_bytes()
            if rss > self.limit:
                sys.stderr.write(
                    f"opscan: error: stopped {self.what}: it used {gb(rss)} of memory, close "
                    f"to all this machine has free (use --mode meta, which allocates no "
                    f"tensor storage)\n")
                sys.stderr.flush()
                self.exit_fn(3)
                return

    def __enter__(self) -> "Watchdog":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
