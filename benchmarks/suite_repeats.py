"""CPU of the work two test modules used to repeat (docs/benchmarks.md, "Test suite").

    python benchmarks/test_suite_repeats.py

Times, twice each after a warm-up trace, with time.process_time(): the real-mode traces
tests/analyzer/test_trace_torch.py now makes once instead of twice (torch_resnet50,
torch_lstm_attention, torch_transformer), and the `opdb sync torch-npu` of a 2.14.0 wheel
tests/analyzer/test_scan_pairing.py now runs once per module instead of once per test.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from analyzer.trace.torch.tracer import trace_torch
    from opdb import sync
    from tests.analyzer import npu_adapted
    from tests.opdb.test_sync_equals_build import make_wheel

    adapted = set(npu_adapted.adapted_ops())
    trace_torch(ROOT / "tests/fixtures/models/tiny_mlp.py", adapted=adapted)  # warm-up
    for rep in (1, 2):
        for name in ("torch_resnet50.py", "torch_lstm_attention.py", "torch_transformer.py"):
            t0 = time.process_time()
            trace_torch(ROOT / "examples" / name, adapted=adapted)
            print(f"run {rep}: trace {name}: {time.process_time() - t0:.2f} s CPU", flush=True)
    for rep in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            os.environ["OPSCAN_HOME"] = str(Path(d) / "home")
            t0 = time.process_time()
            sync.run_sync("torch-npu", {"wheel": make_wheel(Path(d), "2.14.0", "2.14.0")})
            print(f"run {rep}: sync torch_npu 2.14.0: {time.process_time() - t0:.2f} s CPU",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
