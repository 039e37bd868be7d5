"""What each provider release adds to the shipped snapshot: adapter rows and bytes, and
the bytes of its committed source extract; plus the time of a full `opdb build`.

    python benchmarks/opdb_release_sizes.py [--build]

Rows and bytes are read from `opdb/snapshot/adapters.jsonl` (one line per adapter, so
a release's bytes are the sum of its lines). Mapping rows are shared between releases
(one row per op and API, listing the releases) and are counted in the total only.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _version_key(v: str) -> tuple:
    import re

    return tuple(int(x) for x in re.findall(r"\d+", v)) or (10 ** 6,)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="store_true", help="also time a full opdb build")
    args = ap.parse_args()
    snap = ROOT / "opdb" / "snapshot"
    rows: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for line in (snap / "adapters.jsonl").read_bytes().splitlines(keepends=True):
        r = json.loads(line)
        rows[(r["provider"], r["version"])][0] += 1
        rows[(r["provider"], r["version"])][1] += len(line)
    src = ROOT / "opdb" / "sources"
    extract = {("torch_npu", d.name): sum(f.stat().st_size for f in d.iterdir())
               for d in (src / "torch_npu").iterdir() if d.is_dir() and d.name[0].isdigit()}
    for f in (src / "paddle" / "scan").glob("*.jsonl"):
        extract[("PaddleCustomDevice", f.stem)] = f.stat().st_size
    print("| release | adapter rows | snapshot bytes | committed extract bytes |")
    print("|---|---:|---:|---:|")
    for key in sorted(rows, key=lambda k: (k[0] != "torch_npu", k[0], _version_key(k[1]))):
        if key[0] not in ("torch_npu", "PaddleCustomDevice"):
            continue
        sep = "==" if key[0] == "torch_npu" else "@"
        print(f"| {key[0]}{sep}{key[1]} | {rows[key][0]} | {rows[key][1]:,} | "
              f"{extract.get(key, 0):,} |")
    total = sum(p.stat().st_size for p in snap.iterdir())
    print(f"\nsnapshot total: {total:,} bytes in {len(list(snap.iterdir()))} files")
    if args.build:
        from opdb.build import build

        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            build(out_dir=Path(tmp))
            print(f"opdb build: {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
