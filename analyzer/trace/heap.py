"""Keep Python's cyclic garbage collector off the framework's heap during a CLI scan.

Importing torch (and torch._dynamo, which torch.optim imports on first use) or paddle
leaves millions of container objects behind; each full (generation 2) collection that the
trace's allocations trigger later walks all of them again: 0.1-0.2 s each, 0.4 s of a
ResNet-50 meta scan and 0.09 s of a MobileNetV3 one (measured with `gc.callbacks`).
`settle()`, called by the meta tracers once the model is built, moves everything alive
then into the permanent generation (`gc.freeze()`): later collections look only at
objects the step creates, and objects are still freed by reference counting.

Only a process that is the `opscan` program turns it on (`enable()`, from
`analyzer.cli.main` run as the program, like its `gc.freeze()` at exit): library callers
(tests, notebooks) keep their collector as it was. Cyclic garbage alive at the freeze stays
until the process exits.
"""
from __future__ import annotations

import gc

_enabled = False


def enable() -> None:
    global _enabled
    _enabled = True


def settle() -> None:
    """`gc.freeze()` when enabled (see the module docstring); otherwise nothing."""
    if _enabled:
        gc.freeze()
