"""Configure, build and import-check generated standalone projects with CMake.

`build_projects(dirs, build_dir)` adds every project as a subdirectory of one
harness CMake project (one configure, one parallel build: the torch TUs are slow),
`check_module(...)` imports a built pybind11 module in a fresh interpreter and
returns what `is_available()` / `unavailable_reason()` say.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from opdb.errors import OpscanError


class BuildError(OpscanError):
    """cmake configure or build failed; `log` holds the output."""

    def __init__(self, message: str, log: str = "", hint: str = ""):
        super().__init__(message, hint)
        self.log = log


@dataclass
class BuildResult:
    build_dir: Path
    configure_seconds: float
    build_seconds: float
    log: str = ""
    failed_targets: list[str] = field(default_factory=list)

    @property
    def module_dir(self) -> Path:
        return self.build_dir / "python"


def _generator_args() -> list[str]:
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def _run(cmd: list[str], cwd: Path | None = None, timeout: int = 3600) -> tuple[int, str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def write_harness(project_dirs: list[Path], harness_dir: Path) -> Path:
    """A CMake project that adds every generated standalone project as a subdirectory."""
    harness_dir.mkdir(parents=True, exist_ok=True)
    lines = ["# opgen build harness: every generated standalone project in one build.",
             "cmake_minimum_required(VERSION 3.18)",
             "project(opgen_harness CXX)",
             "find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)",
             "execute_process(COMMAND \"${Python3_EXECUTABLE}\" -m pybind11 --cmakedir",
             "                OUTPUT_VARIABLE _pb OUTPUT_STRIP_TRAILING_WHITESPACE)",
             "find_package(pybind11 CONFIG REQUIRED HINTS \"${_pb}\")"]
    for i, d in enumerate(project_dirs):
        lines.append(f'add_subdirectory("{Path(d).resolve().as_posix()}" p{i})')
    path = harness_dir / "CMakeLists.txt"
    path.write_text("\n".join(lines) + "\n")
    return harness_dir


def build_projects(project_dirs: list[Path], build_dir: Path, *, cmake_args: list[str] = (),
                   jobs: int = 2, keep_going: bool = False) -> BuildResult:
    """Configure + build all projects in one harness. With keep_going, a failed
    target does not stop the others; `failed_targets` lists them."""
    build_dir = Path(build_dir)
    src = write_harness(list(project_dirs), build_dir / "harness-src")
    # no header flags: each project asks Python for its framework's headers itself
    args = list(cmake_args)
    t0 = time.monotonic()
    rc, log = _run(["cmake", "-S", str(src), "-B", str(build_dir / "build"),
                    "-DCMAKE_BUILD_TYPE=Release", *_generator_args(), *args])
    t1 = time.monotonic()
    if rc != 0:
        raise BuildError("cmake configure failed", log, hint=f"see {build_dir}")
    cmd = ["cmake", "--build", str(build_dir / "build"), "-j", str(jobs)]
    if keep_going:
        cmd += ["--", "-k", "0"] if shutil.which("ninja") else ["--", "-k"]
    rc, blog = _run(cmd)
    t2 = time.monotonic()
    result = BuildResult(build_dir / "build", t1 - t0, t2 - t1, log + blog)
    if rc != 0:
        result.failed_targets = sorted({line.split("]", 1)[-1].strip() if "]" in line else line
                                        for line in blog.splitlines()
                                        if line.startswith("FAILED:") or "Error " in line})
        if not keep_going:
            raise BuildError("cmake build failed", log + blog, hint=f"see {build_dir}")
    return result


def check_module(module_dir: Path, module_name: str, framework: str) -> dict:
    """Import `module_name` from `module_dir` in a fresh interpreter; returns
    {"ok", "is_available", "reason", "error"}."""
    pre = "import torch\n" if framework == "torch" else ""
    code = (pre + "import json, sys\n"
            f"sys.path.insert(0, {str(module_dir)!r})\n"
            f"import {module_name} as m\n"
            "print(json.dumps({'is_available': m.is_available(), "
            "'reason': m.unavailable_reason(), 'api': m.aclnn_api}))\n")
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    if proc.returncode != 0:
        return {"ok": False, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["ok"] = True
    return data
