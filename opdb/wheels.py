"""torch_npu wheels the way a user gets them: `pip download --no-deps` into the user cache.

The wheels live in `<cache>/wheels/` (`$OPSCAN_CACHE/wheels`, else
`$XDG_CACHE_HOME/opscan/wheels`, else `~/.cache/opscan/wheels`), never in a fixed
system directory. `scripts/setup.sh` runs `python -m opdb.wheels` so tests and the
standalone torch builds find them; library code calls `find_wheel` / `fetch_wheel`.

    python -m opdb.wheels [VERSION ...]    download the releases opdb reads (default: all)
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from opdb.errors import OpscanError
from opdb.fsutil import cache_dir

# The releases whose adapter lists are committed under opdb/sources/torch_npu/.
RELEASES = ("2.1.0.post17", "2.3.1.post6", "2.4.0.post4", "2.5.1.post1", "2.6.0.post5",
            "2.7.1.post11", "2.8.0.post5", "2.9.1", "2.10.0.post7", "2.11.0.post3",
            "2.12.0.post3", "2.13.0", "2.14.0")
PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


class WheelMissing(OpscanError):
    """A torch_npu wheel is neither cached nor downloadable."""


def wheel_cache_dir() -> Path:
    return cache_dir() / "wheels"


def _matches(name: str, version: str) -> bool:
    return (name.startswith(f"torch_npu-{version}-") and name.endswith(".whl")
            and PY_TAG in name)


def find_wheel(version: str, cache: Path | None = None) -> Path | None:
    """The cached wheel of torch_npu `version` for this Python, or None."""
    cache = cache or wheel_cache_dir()
    if not cache.is_dir():
        return None
    hits = sorted(p for p in cache.iterdir() if _matches(p.name, version) and p.is_file())
    return hits[0] if hits else None


def fetch_wheel(version: str, cache: Path | None = None) -> Path:
    """The cached wheel, downloaded with `pip download --no-deps` when missing."""
    cache = cache or wheel_cache_dir()
    found = find_wheel(version, cache)
    if found:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--only-binary=:all:", f"torch-npu=={version}", "-d", str(cache)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = find_wheel(version, cache)
    if proc.returncode != 0 or found is None:
        last = ((proc.stderr or proc.stdout).strip().splitlines() or ["no output"])[-1]
        raise WheelMissing(f"pip download torch-npu=={version} failed: {last}",
                           hint=f"check access to PyPI, or put the wheel into {cache}")
    return found


def main(argv: list[str] | None = None) -> int:
    from opdb import clikit

    prog = "python -m opdb.wheels"
    ap = clikit.ArgumentParser(prog=prog, description="download torch_npu wheels into the cache")
    ap.add_argument("versions", nargs="*", type=clikit.text_arg,
                    help=f"torch_npu versions (default: {' '.join(RELEASES)})")
    versions = ap.parse_args(argv).versions or list(RELEASES)

    def go() -> None:
        for v in versions:
            print(f"torch_npu {v}: {fetch_wheel(v)}")

    return clikit.run(go, prog)


if __name__ == "__main__":
    sys.exit(main())
