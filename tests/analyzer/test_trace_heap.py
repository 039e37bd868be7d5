"""Issue 16 (scan wall time): a real-mode trace freezes the imported and built heap
(gc.freeze) so the scan's full collections skip it, and hands everything back to the
collector when it ends, unless the process is `opscan` itself (analyzer.trace.heap)."""
from __future__ import annotations

import gc
from pathlib import Path

from analyzer.trace import heap

FIX = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "models"


def test_frozen_heap_freezes_inside_and_unfreezes_after(monkeypatch):
    monkeypatch.setattr(heap, "_program", False)
    gc.unfreeze()
    heap.settle()  # neither the program nor inside frozen_heap(): nothing
    assert gc.get_freeze_count() == 0
    with heap.frozen_heap():
        assert gc.get_freeze_count() > 0
        built = [object() for _ in range(10)]  # noqa: F841 - tracked objects made inside
        before = gc.get_freeze_count()
        heap.settle()
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0
    with heap.frozen_heap(enabled=False):
        assert gc.get_freeze_count() == 0


def test_program_keeps_the_heap_frozen(monkeypatch):
    monkeypatch.setattr(heap, "_program", False)
    heap.enable()
    try:
        with heap.frozen_heap():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_torch_real_trace_hands_the_heap_back(monkeypatch):
    import torch  # noqa: F401 - installed by scripts/setup.sh

    from analyzer.trace.torch.tracer import trace_torch
    from tests.analyzer import npu_adapted

    monkeypatch.setattr(heap, "_program", False)
    frozen_during: list[int] = []
    real_freeze = heap.settle

    def spy():
        real_freeze()
        frozen_during.append(gc.get_freeze_count())

    monkeypatch.setattr(heap, "settle", spy)
    gc.unfreeze()
    tr = trace_torch(FIX / "tiny_mlp.py", adapted=set(npu_adapted.adapted_ops()), steps=2)
    assert not tr.partial, tr.error
    assert frozen_during and frozen_during[0] > 0  # the built model was frozen
    assert gc.get_freeze_count() == 0
