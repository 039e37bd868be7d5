"""Build and run the opgen runtime's C++ unit tests (csrc/tests) with CMake+ctest:
descriptor mapping, dtype names, the errors without CANN, and the full two-phase
call against a fake libopapi.so. ~3 s."""
from __future__ import annotations

import subprocess
from pathlib import Path

CSRC_TESTS = Path(__file__).resolve().parents[2] / "csrc" / "tests"


def test_runtime_unit_tests(tmp_path):
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(CSRC_TESTS), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    proc = subprocess.run(["ctest", "--output-on-failure"], cwd=build, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "100% tests passed" in proc.stdout
