"""Where the standalone builds find their headers: the torch_npu wheel (found in the
user cache or fetched with `pip download --no-deps`, see opdb.wheels; extracted with
zipfile, never imported) and the installed paddle wheel's include dir.

`python -m codegen.toolchain torch-npu|paddle` prints the directory to pass to CMake.
"""
from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from opdb.errors import OpscanError
from opdb.fsutil import cache_dir

TORCH_NPU_VERSION = "2.13.0"


class ToolchainError(OpscanError):
    """A header set the standalone build needs is missing."""


def find_torch_npu_wheel(version: str = TORCH_NPU_VERSION, download: bool = True) -> Path:
    from opdb import wheels

    if download:
        return wheels.fetch_wheel(version)
    found = wheels.find_wheel(version)
    if found is None:
        cache = wheels.wheel_cache_dir()
        raise ToolchainError(f"no torch_npu {version} wheel in {cache}",
                             hint=f"run `python -m opdb.wheels {version}`")
    return found


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
