"""scripts/test.sh fails a run where a test skipped without the npu marker (issue 8)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASE = '''
import pytest

@pytest.mark.npu
def test_needs_npu():
    pytest.skip("needs an Ascend NPU")

def test_ok():
    pass
'''


def _run(tmp_path, body, strict=True):
    (tmp_path / "test_case.py").write_text(body)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPSCAN_STRICT_SKIPS="1" if strict else "0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.skipguard", "-c", os.devnull, "--rootdir", str(tmp_path),
                           str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_npu_marked_skip_passes(tmp_path):
    proc = _run(tmp_path, CASE)
    assert proc.returncode == 0, proc.stdout


def test_unmarked_skip_fails_the_run(tmp_path):
    proc = _run(tmp_path, CASE + '''
def test_missing_tool():
    pytest.skip("cmake is not installed")
''')
    assert proc.returncode == 1, proc.stdout
    assert "test_missing_tool: cmake is not installed" in proc.stdout


def test_module_level_skip_fails_the_run(tmp_path):
    (tmp_path / "test_other.py").write_text("def test_fine():\n    pass\n")
    proc = _run(tmp_path, 'import pytest\npytest.importorskip("no_such_module_xyz")\n' + CASE)
    assert proc.returncode == 1, proc.stdout


def test_not_armed_without_the_variable(tmp_path):
    proc = _run(tmp_path, CASE + '''
def test_missing_tool():
    pytest.skip("cmake is not installed")
''', strict=False)
    assert proc.returncode == 0


def test_test_sh_arms_the_guard_and_setup_fetches_the_wheels():
    test_sh = (ROOT / "scripts" / "test.sh").read_text()
    assert "OPSCAN_STRICT_SKIPS=1" in test_sh
    assert "python" in (ROOT / "scripts" / "setup.sh").read_text()
    assert "-m opdb.wheels" in (ROOT / "scripts" / "setup.sh").read_text()


def test_no_code_or_test_reads_a_machine_path():
    """No path outside the repository (shared folders, /tmp caches) in code or tests."""
    import re

    roots = "|".join(re.escape("/" + d) for d in ("tmp", "work", "root", "home"))
    machine_path = re.compile(r"[\"'](" + f"(?:{roots})" + r"/\w+)")
    bad = []
    for base in ("analyzer", "codegen", "opdb", "tests", "benchmarks", "scripts"):
        for p in (ROOT / base).rglob("*"):
            if p.suffix not in (".py", ".sh") or "fixtures" in p.parts or p == Path(__file__):
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
            for m in re.finditer(machine_path, text):
                bad.append(f"{p.relative_to(ROOT)}: {m.group(1)}")
    assert bad == []
