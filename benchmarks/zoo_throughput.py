"""Zoo throughput: models per minute with --jobs 1, --jobs 2 and Ray local, in one run.

    python benchmarks/zoo_throughput.py [--models 6] [--mode meta]

Each configuration scans the same first N entries of examples/zoo/zoo-torch.yaml with an
empty result cache of its own, so every model is really scanned; ratios are against
--jobs 1 from the same run. Prints one table row per configuration, plus the peak RSS of
the largest worker.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--mode", default="meta")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()

    from analyzer.zoo.entries import expand_sources
    from analyzer.zoo.runner import ZooOptions, run_zoo

    entries = expand_sources([str(ROOT / "examples" / "zoo" / "zoo-torch.yaml")])[:args.models]
    configs = [("--jobs 1", dict(jobs=1)), ("--jobs 2", dict(jobs=2))]
    if not args.no_ray:
        configs.append(("--ray local (2 CPUs)", dict(jobs=2, ray="local")))
    rows = []
    base = None
    for label, kw in configs:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["OPSCAN_CACHE"] = cache
            start = time.monotonic()
            results = run_zoo(entries, ZooOptions(framework="torch", mode=args.mode,
                                                  targets=["torch_npu==2.13.0"],
                                                  cache_dir=Path(cache) / "zoo", **kw))
            wall = time.monotonic() - start
        ok = sum(r.result.get("status") == "ok" for r in results)
        rss = max((r.result.get("peak_rss_mb") or 0) for r in results)
        per_min = len(results) / wall * 60
        base = base or per_min
        rows.append((label, len(results), ok, wall, per_min, per_min / base, rss))
    print(f"{'configuration':24} {'models':>6} {'ok':>4} {'wall s':>8} {'models/min':>10} "
          f"{'vs jobs 1':>9} {'max worker RSS MB':>18}")
    for label, n, ok, wall, pm, ratio, rss in rows:
        print(f"{label:24} {n:6d} {ok:4d} {wall:8.1f} {pm:10.2f} {ratio:9.2f} {rss:18.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
