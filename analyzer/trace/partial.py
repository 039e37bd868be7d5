"""The one partial-trace finisher every tracer ends with.

A step that raises after kernels were recorded still gives a useful trace: it is marked
`partial`, carries the error's first line in `error` and the whole message in `notes`, and
every report says PARTIAL. A failure before anything was recorded is the user's error
alone, so it is raised.
"""
from __future__ import annotations

from analyzer.errors import ModelError
from analyzer.model import Trace


def finish(trace: Trace, error: ModelError | None) -> Trace:
    """Mark `trace` partial when `error` is set; raise `error` when nothing was recorded."""
    if error is None:
        return trace
    if not trace.calls:
        raise error
    trace.partial = True
    trace.error = str(error).splitlines()[0]
    trace.notes.append(str(error))
    return trace
