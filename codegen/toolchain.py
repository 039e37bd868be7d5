"""Where the standalone builds find their headers: the torch_npu wheel (found in
the cache, /tmp/npuwheels, or fetched with `pip download --no-deps`; extracted with
zipfile, never imported) and the installed paddle wheel's include dir.

`python -m codegen.toolchain torch-npu|paddle` prints the directory to pass to CMake.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from opdb.errors import OpscanError
from opdb.fsutil import cache_dir

TORCH_NPU_VERSION = "2.13.0"
WHEEL_DIRS = ("/tmp/npuwheels",)


class ToolchainError(OpscanError):
    """A header set the standalone build needs is missing."""


def _wheel_name_ok(name: str, version: str) -> bool:
    return name.startswith(f"torch_npu-{version}-") and name.endswith(".whl") and "cp311" in name


def find_torch_npu_wheel(version: str = TORCH_NPU_VERSION, download: bool = True) -> Path:
    cache = cache_dir() / "wheels"
    for d in (cache, *map(Path, WHEEL_DIRS)):
        if d.is_dir():
            for f in sorted(d.iterdir()):
                if _wheel_name_ok(f.name, version):
                    return f
    if not download:
        raise ToolchainError(f"no torch_npu {version} wheel in {cache}",
                             hint=f"pip download --no-deps torch-npu=={version} -d {cache}")
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           f"torch-npu=={version}", "-d", str(cache)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"pip download torch-npu=={version} failed: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}",
                             hint="download the wheel by hand into " + str(cache))
    return find_torch_npu_wheel(version, download=False)


def torch_npu_root(version: str = TORCH_NPU_VERSION, download: bool = True) -> Path:
    """The extracted `torch_npu/` package dir (holding include/), extracting the
    wheel's headers once into the cache."""
    dest = cache_dir() / "wheels" / f"torch_npu-{version}-headers"
    root = dest / "torch_npu"
    marker = root / "include" / "third_party" / "op-plugin" / "op_plugin" / "utils" / "op_api_common.h"
    if marker.is_file():
        return root
    wheel = find_torch_npu_wheel(version, download)
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    with zipfile.ZipFile(wheel) as z:
        members = [n for n in z.namelist() if n.startswith("torch_npu/include/")]
        if not members:
            raise ToolchainError(f"{wheel} has no torch_npu/include/")
        z.extractall(tmp, members)
    if dest.exists():
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, dest)
    if not marker.is_file():
        raise ToolchainError(f"{wheel} has no op-plugin headers (op_api_common.h)")
    return root


def paddle_include_dir() -> Path:
    """site-packages/paddle/include, found without importing paddle."""
    import importlib.util

    spec = importlib.util.find_spec("paddle")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError("paddle is not installed", hint="pip install paddlepaddle==3.3.1")
    inc = Path(list(spec.submodule_search_locations)[0]) / "include"
    if not (inc / "paddle" / "phi" / "extension.h").is_file():
        raise ToolchainError(f"{inc} has no paddle/phi/extension.h",
                             hint="install a paddlepaddle wheel that ships headers")
    return inc


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv not in (["torch-npu"], ["paddle"]):
        print("usage: python -m codegen.toolchain torch-npu|paddle", file=sys.stderr)
        return 2
    try:
        print(torch_npu_root() if argv[0] == "torch-npu" else paddle_include_dir())
    except OpscanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
