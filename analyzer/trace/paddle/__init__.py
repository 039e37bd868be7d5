"""The paddle tracer: real mode reads paddle.profiler's kernel-launch events (real.py),
meta mode builds the step as a static PIR program (meta.py); names.py maps program ops to
phi kernel names. `trace()` is the package's side of the tracer contract in
`analyzer.trace`."""
from __future__ import annotations

from analyzer.trace.paddle.tracer import trace

__all__ = ["trace"]
