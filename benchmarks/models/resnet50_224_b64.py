"""ResNet-50 at batch 64, 224x224, one SGD step: a real CPU step of about a minute of CPU
time (two threads on 2 cores; peak RSS about 6.3 GB), four times
benchmarks/models/resnet50_224.py's batch. The meta scan does not grow with the batch; the
real step does (scan_vs_dump_op.py --large)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from resnet50_224 import make_build  # noqa: E402

build = make_build(64)
