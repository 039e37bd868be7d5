"""`opscan log` on the real public log excerpts of tests/fixtures/logs/public/: recall and
precision against their hand labels (labels.json), as a Markdown table.

    python benchmarks/log_scan_public.py [--labels PATH] [--prefilter auto|grep|python]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.logscan.score import render_table, score_labels  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--labels", default=str(ROOT / "tests/fixtures/logs/public/labels.json"))
    p.add_argument("--prefilter", default="auto", choices=["auto", "grep", "python"])
    a = p.parse_args()
    sys.stdout.write(render_table(score_labels(a.labels, a.prefilter)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
