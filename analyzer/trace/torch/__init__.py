"""The torch tracer: an emulated Ascend `npu` device (npu_emulation.py) and the step
tracer on top of it (tracer.py). `trace()` is the package's side of the tracer contract
in `analyzer.trace`."""
from __future__ import annotations

from analyzer.trace.torch.tracer import trace

__all__ = ["trace"]
