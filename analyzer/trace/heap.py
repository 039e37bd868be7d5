"""Keep Python's cyclic garbage collector off the heap a scan imported and built.

Importing torch (and torch._dynamo, which torch.optim imports on first use) or paddle and
building a model leaves about a million tracked objects on the heap. Every full
(generation 2) collection walks all of them again: 0.1-0.4 s each on the 2-core machine,
0.4 s of a ResNet-50 meta scan, 0.2-0.6 s of a 3-7 s real-mode scan of a bundled example
(measured with `gc.callbacks`, docs/benchmarks.md). A plain run of the model pays its full
collections while importing and building; a scan allocates more afterwards (call records,
classification, reports) and would pay one to three more, each walking the whole heap.

`settle()` moves every object alive into the permanent generation (`gc.freeze()`), so later
collections look only at what the steps and the rest of the scan allocate. The tracers call
it once the framework is imported and again once the model is built, before its first
step, so nothing of a step is frozen. Reference counting is untouched: objects are still
freed as soon as nothing references them; only garbage *cycles* among frozen objects wait.

Who freezes:
- the `opscan` program (`enable()`, from `analyzer.cli.main` run as the program): every
  `settle()` freezes, in both modes, and nothing is unfrozen; the process exits after
  writing its reports (and skips the exit-time collections too);
- a library caller (tests, `opscan zoo` in one process, notebooks): only inside a real-mode
  tracer's `frozen_heap()`, which hands everything back (`gc.unfreeze()`) when the trace
  ends, so a process that traces many models keeps nothing it would otherwise have freed.

Inside `frozen_heap()` the young generation is also collected less often
(`YOUNG_THRESHOLD`), handed back the same way.
"""
from __future__ import annotations

import contextlib
import gc

_program = False
_depth = 0
# Young-generation threshold while a real-mode trace runs (and, in the program, until it
# exits): the recorder keeps every call record until the reports are written, and at
# CPython's default of 700 allocations each record was traversed by several young
# collections on its way to the old generation (paddle MobileNetV3, 4 steps: 126 young
# collections in the trace and 100 after it, 34 ms, against 13 collections and 17 ms at
# 10,000). A step's cyclic garbage still meets a collection every 10,000 allocations.
YOUNG_THRESHOLD = 10_000


def enable() -> None:
    """The process is the opscan program and ends after this command (module docstring)."""
    global _program
    _program = True


def settle() -> None:
    """Freeze what is alive now, when the program enabled it or inside `frozen_heap()`."""
    if _program or _depth:
        gc.freeze()


@contextlib.contextmanager
def frozen_heap(enabled: bool = True):
    """Around a real-mode tracer's build and steps: freezes on entry; on exit unfreezes
    unless the process is the opscan program."""
    global _depth
    if not enabled:
        yield
        return
    gc.freeze()
    thresholds = gc.get_threshold()
    if _depth == 0:
        gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _program and _depth == 0:
            gc.unfreeze()
            gc.set_threshold(*thresholds)
