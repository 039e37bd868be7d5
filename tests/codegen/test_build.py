"""Slow: the standalone projects of 8 representative APIs x 2 targets build here in
one CMake harness (no CANN), their pybind11 modules import and report
is_available() == False with a reason; a signature mismatch fails the build."""
from __future__ import annotations

import time

import pytest

from codegen.api import prepare, write_tree
from codegen.build import BuildError, build_projects, check_module

from .conftest import CASES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(db, tmp_path_factory):
    root = tmp_path_factory.mktemp("opgen_build")
    dirs, modules = [], {}
    for cid, _cat, target, name, op in CASES:
        r = prepare(db, name, target, op=op, layout="standalone")
        out = write_tree(r.files, root / cid)
        dirs.append(out / "standalone")
        modules[cid] = (r.module_name, target)
    t0 = time.monotonic()
    res = build_projects(dirs, root / "harness", keep_going=True)
    print(f"opgen harness: {len(dirs)} projects, configure {res.configure_seconds:.1f}s, "
          f"build {res.build_seconds:.1f}s, total {time.monotonic() - t0:.1f}s")
    return res, modules


def test_categories_cover_the_required_kinds():
    cats = {c[1] for c in CASES}
    assert {"element-wise", "reduction", "conv", "norm", "optimizer", "attention", "in-place",
            "int-array+scalar"} <= cats
    assert {c[2] for c in CASES} == {"torch", "paddle"}


def test_all_projects_build(built):
    res, _ = built
    assert res.failed_targets == [], res.log[-8000:]


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_module_imports_and_reports_unavailable(built, cid):
    res, modules = built
    name, target = modules[cid]
    info = check_module(res.module_dir, name, target)
    assert info["ok"], info
    assert info["is_available"] is False
    assert "libopapi.so" in info["reason"]


def test_signature_mismatch_fails_the_build(db, tmp_path):
    r = prepare(db, "aclnnAbs", "paddle", op="abs", layout="standalone")
    files = dict(r.files)
    kernel = "standalone/src/abs_kernel.cc"
    good = "int32_t (*)(const aclTensor*, aclTensor*, uint64_t*, aclOpExecutor**)"
    assert good in files[kernel]
    # opdb saying the API takes an extra double: the call site no longer matches
    files[kernel] = files[kernel].replace(
        good, "int32_t (*)(const aclTensor*, double, aclTensor*, uint64_t*, aclOpExecutor**)")
    out = write_tree(files, tmp_path / "bad")
    with pytest.raises(BuildError) as exc:
        build_projects([out / "standalone"], tmp_path / "harness")
    assert "the arguments do not match aclnnAbsGetWorkspaceSize" in exc.value.log
