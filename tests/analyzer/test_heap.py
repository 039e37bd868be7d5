"""analyzer.trace.heap: only the opscan program freezes the collector's heap (issue 12,
item 7); library callers, tests included, keep their collector as it was."""
from __future__ import annotations

import subprocess
import sys

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
