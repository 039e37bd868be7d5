"""Issue 16: a generated standalone project configures and builds with the plain
`cmake -S standalone -B build && cmake --build build`: its CMakeLists asks Python
for the framework's headers the way it asks for pybind11, and the -D flags still
override. (Before, a plain configure stopped with a FATAL_ERROR asking for
-DPADDLE_INCLUDE_DIR / -DTORCH_NPU_ROOT.)"""
from __future__ import annotations

import subprocess

import pytest

from codegen.api import prepare, write_tree

pytestmark = pytest.mark.slow


def _cmake(*args, cwd):
    proc = subprocess.run(["cmake", *args], cwd=cwd, capture_output=True, text=True, timeout=1800)
    return proc.returncode, proc.stdout + proc.stderr


def _project(db, tmp_path, target, name, op):
    r = prepare(db, name, target, op=op, layout="standalone")
    return write_tree(r.files, tmp_path / target), r.module_name


def test_paddle_project_builds_without_flags(db, tmp_path):
    root, module = _project(db, tmp_path, "paddle", "aclnnAbs", "abs")
    rc, log = _cmake("-S", "standalone", "-B", "build", cwd=root)
    assert rc == 0, log[-4000:]
    rc, log = _cmake("--build", "build", "-j2", cwd=root)
    assert rc == 0, log[-4000:]
    assert list((root / "build" / "python").glob(f"{module}*.so"))
    assert list((root / "build").glob("lib*_adapter.so"))


def test_torch_project_configures_without_flags(db, tmp_path):
    # the torch TUs take minutes to compile; test_build.py compiles every torch
    # project through the harness, which passes no header flag either
    root, _ = _project(db, tmp_path, "torch", "aclnnAbs", "aten::abs")
    rc, log = _cmake("-S", "standalone", "-B", "build", cwd=root)
    assert rc == 0, log[-4000:]
    cache = (root / "build" / "CMakeCache.txt").read_text()
    npu_root = next(line.split("=", 1)[1] for line in cache.splitlines()
                    if line.startswith("TORCH_NPU_ROOT:"))
    assert npu_root.endswith("torch_npu")


@pytest.mark.parametrize("target,name,op,flag", [
    ("paddle", "aclnnAbs", "abs", "PADDLE_INCLUDE_DIR"),
    ("torch", "aclnnAbs", "aten::abs", "TORCH_NPU_ROOT"),
])
def test_flag_still_overrides(db, tmp_path, target, name, op, flag):
    root, _ = _project(db, tmp_path, target, name, op)
    rc, log = _cmake("-S", "standalone", "-B", "build", f"-D{flag}={tmp_path / 'nowhere'}", cwd=root)
    assert rc != 0
    assert f"{flag}='{tmp_path / 'nowhere'}'" in log
