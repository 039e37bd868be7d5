"""Planted faults for testing the localiser: perturb one op's output by a relative amount.

A Fault names an op kind (gelu, layer_norm, softmax, conv, matmul), which forward call of
that kind to hit (counted over the step, in execution order, inside modules) and the
relative size (default 1e-3: out * (1 + 1e-3)). The recorder that applies it writes where
it landed (module call key and op call key) into the run record, so a benchmark can score
the compare's answer against the truth.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Op kind -> op names (torch: aten schema names without "aten::"; paddle: _C_ops names).
KINDS = {
    "gelu": {"torch": {"gelu"}, "paddle": {"gelu"}},
    "layer_norm": {"torch": {"native_layer_norm", "layer_norm"}, "paddle": {"layer_norm"}},
    "softmax": {"torch": {"_softmax", "_safe_softmax", "softmax"}, "paddle": {"softmax"}},
    "conv": {"torch": {"convolution", "_convolution", "conv2d", "conv1d", "mkldnn_convolution"},
             "paddle": {"conv2d", "conv1d", "conv3d", "depthwise_conv2d"}},
    "matmul": {"torch": {"mm", "bmm", "addmm", "matmul", "baddbmm"},
               "paddle": {"matmul", "linear", "fc", "bmm", "mm"}},
}


@dataclass(frozen=True)
class Fault:
    kind: str
    occurrence: int = 0  # 0-based index among forward calls of this kind in the step
    rel: float = 1e-3
    step: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if self.occurrence < 0 or self.step < 0:
            raise ValueError(f"the call index N must be 0 or more, got {self.occurrence}")
        if not math.isfinite(self.rel) or self.rel == 0:
            raise ValueError(f"the relative size REL must be a finite number other than 0, got {self.rel}")

    def names(self, framework: str) -> set[str]:
        return KINDS[self.kind][framework]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def parse(cls, text: str) -> "Fault":
        """KIND[:OCCURRENCE[:REL]], e.g. gelu:3 or softmax:0:1e-3."""
        parts = text.split(":")
        return cls(parts[0], int(parts[1]) if len(parts) > 1 else 0,
                   float(parts[2]) if len(parts) > 2 else 1e-3)


def kind_of(op_name: str, framework: str) -> str | None:
    for kind, names in KINDS.items():
        if op_name in names[framework]:
            return kind
    return None
