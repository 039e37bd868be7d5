"""pytest plugin: with OPSCAN_STRICT_SKIPS=1 a run fails when any test skips that is not
marked `npu` (needs an Ascend NPU). scripts/test.sh (run by .ci/run) sets it, so a fresh
clone whose setup left something out fails instead of passing with tests skipped."""
from __future__ import annotations

import os

import pytest

_BAD: list[tuple[str, str]] = []


def _strict() -> bool:
    return os.environ.get("OPSCAN_STRICT_SKIPS") == "1"


def _reason(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and item.get_closest_marker("npu") is None:
        _BAD.append((item.nodeid, _reason(report)))


def pytest_collectreport(report):
    if report.skipped:
        _BAD.append((report.nodeid, _reason(report)))


def pytest_terminal_summary(terminalreporter):
    if _strict() and _BAD:
        tr = terminalreporter
        tr.write_line(f"OPSCAN_STRICT_SKIPS: {len(_BAD)} test(s) skipped without the npu marker "
                      "(only tests that need an Ascend NPU may skip; run scripts/setup.sh):", red=True)
        for nodeid, reason in _BAD:
            tr.write_line(f"  {nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    if _strict() and _BAD and exitstatus == 0:
        session.exitstatus = 1
