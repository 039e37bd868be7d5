"""scripts/test.sh runs the suite as several pytest processes (its groups): every test file
pytest would collect is in exactly one group, so no file is left out of CI (the bad-input
matrix once was) and none runs twice."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# pyproject.toml's norecursedirs: directories pytest does not collect from
SKIP_DIRS = {"build", "fixtures", "golden", "__pycache__"}


def collected_files() -> list[str]:
    out = []
    for p in sorted((ROOT / "tests").rglob("test_*.py")):
        parts = p.relative_to(ROOT / "tests").parts[:-1]
        if any(d in SKIP_DIRS or d.startswith(".") or d.endswith(".egg-info") for d in parts):
            continue
        out.append(p.relative_to(ROOT).as_posix())
    return out


def test_groups_cover_every_test_file_once():
    proc = subprocess.run(["bash", "scripts/test.sh", "--list-groups"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    args = [a for line in proc.stdout.splitlines() for a in line.split()]
    assert args
    runs: dict[str, int] = {}
    for f in collected_files():
        runs[f] = sum(1 for a in args if f == a or f.startswith(a.rstrip("/") + "/"))
    assert {f: n for f, n in runs.items() if n != 1} == {}
    assert all((ROOT / a).exists() for a in args), args
