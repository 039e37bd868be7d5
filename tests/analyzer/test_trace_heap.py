"""analyzer.trace.heap (issues 12 and 16): the opscan program freezes the collector's heap
after import and build (meta and real mode); a library caller's real-mode trace freezes it
only inside frozen_heap() and hands everything back when it ends; library callers keep
their collector as it was otherwise."""
from __future__ import annotations

import gc
import subprocess
import sys
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


def test_frozen_heap_raises_the_young_threshold_and_restores_it(monkeypatch):
    monkeypatch.setattr(heap, "_program", False)
    before = gc.get_threshold()
    with heap.frozen_heap():
        inside = gc.get_threshold()
        with heap.frozen_heap():  # nested: unchanged, and not restored early
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside
    assert inside[0] >= heap.YOUNG_THRESHOLD and inside[1:] == before[1:]
    assert gc.get_threshold() == before


def test_program_keeps_the_heap_frozen(monkeypatch):
    monkeypatch.setattr(heap, "_program", False)
    heap.enable()
    try:
        thresholds = gc.get_threshold()
        with heap.frozen_heap():
            pass
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= heap.YOUNG_THRESHOLD  # kept until the program exits
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


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


CODE = """
import gc
from analyzer.trace import heap
heap.settle()
before = gc.get_freeze_count()
heap.enable()
heap.settle()
print(before, gc.get_freeze_count() > 0)
"""


def test_settle_freezes_only_when_the_program_enabled_it():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["0", "True"]


def test_library_main_does_not_enable_it():
    code = ("import contextlib, analyzer.cli as c, analyzer.trace.heap as h\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(None):\n"
            "    c.main(['--help'])\n"
            "print(h._program)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
