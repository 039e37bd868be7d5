"""The cyclic garbage collector paused for a dumped step.

A dumped step keeps a few small Python objects per tensor (its record, shape, cache entry)
until the step ends, so a model with a few hundred module calls crosses the collector's
allocation threshold several times per step, and now and then pays a full collection over
every object the framework holds (ShuffleNetV2 on torch: 8 young and 0.7 middle collections
per step, and a full one of ~150 ms every 20 steps, ~9 ms per step; the bare step triggers
none). These objects are freed by reference counting at the end of the step, so the pause
moves nothing but the collector's timing: the collections owed run once after the step.
The user's own `gc.collect()` still works during the step; a collector that was disabled
stays disabled.
"""
from __future__ import annotations

import gc


class GcPause:
    """`pause()` at the start of a step, `resume()` at its end (idempotent both)."""

    def __init__(self):
        self._paused = False

    def pause(self) -> None:
        if not self._paused and gc.isenabled():
            gc.disable()
            self._paused = True

    def resume(self) -> None:
        if self._paused:
            self._paused = False
            gc.enable()
