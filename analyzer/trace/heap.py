"""Keep Python's cyclic collector off what a real-mode scan imported and built.

Importing torch or paddle and building a model leaves about a million tracked objects
on the heap. Every full (generation 2) collection walks all of them: 0.15-0.4 s each on
the 2-core machine. A plain run of the model triggers its full collections while
importing and building; a scan imports more (opdb, the report writers) and allocates
more (its call records, the classification, the reports), and so pays one to three
more full collections, each walking the whole heap again: 0.2-0.6 s of a 3-7 s scan of
a bundled example (measured with `gc.callbacks`, see docs/benchmarks.md).

`frozen_heap()` wraps a tracer's work from just after the framework import: on entry,
and again after the model is built (`freeze_built()`), it moves every object alive into
the permanent generation (`gc.freeze`), so later collections walk only what the steps
and the rest of the scan allocate. Objects are still freed as soon as nothing
references them (reference counting is untouched); only garbage *cycles* among the
frozen objects are not collected while frozen. Nothing of a step is frozen: the second
freeze happens before the first step (build() mode), and in script mode, where the
build is not separable from the first step, only the first one (before the script
runs) is made. On exit the objects are handed back to the collector (`gc.unfreeze`), so
a process that traces many models (tests, `opscan zoo` in one process) keeps nothing it
would otherwise have freed, unless `keep_frozen()` was called: `opscan` run as the
program does that (it exits after writing the reports, and skips the exit-time
collections too).
"""
from __future__ import annotations

import contextlib
import gc

_keep = False
_depth = 0


def keep_frozen() -> None:
    """The process ends after this command: leave frozen objects frozen."""
    global _keep
    _keep = True


@contextlib.contextmanager
def frozen_heap(enabled: bool = True):
    """Around a tracer's build and steps: see the module docstring. (Real mode only for
    now: meta scans are tuned on their own, analyzer/trace/paddle/meta*.py.)"""
    global _depth
    if not enabled:
        yield
        return
    gc.freeze()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _keep and _depth == 0:
            gc.unfreeze()


def freeze_built() -> None:
    """Inside frozen_heap(), after the model is built and before its first step."""
    if _depth:
        gc.freeze()
