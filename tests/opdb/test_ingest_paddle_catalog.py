"""Installed Paddle kernel catalog: registry + phi headers + YAML; signature drift."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from opdb.ingest.paddle_catalog import (ALL_CUSTOM_PROVIDER, DeclIndex, camel,
                                        load_paddle_catalog, parse_phi_headers,
                                        signature_drift)
from opdb.ingest.paddle_custom_device import load_extracted
from opdb.model import Param
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "paddle"
SHARED = (REPO_SOURCES / "paddle")
HAS_PADDLE = importlib.util.find_spec("paddle") is not None
needs_real = pytest.mark.skipif(not (HAS_PADDLE and SHARED.is_dir()),
                                reason="needs the installed paddle and the shared sources")


@pytest.fixture(scope="module")
def fixture_catalog():
    registry = json.loads((FIX / "phi_registry_sample.json").read_text())
    return load_paddle_catalog(FIX / "yaml", registry=registry,
                               include_dir=FIX / "phi_include", version="3.3.1")


def test_camel():
    assert camel("adam_dense_param_sparse_grad") == "AdamDenseParamSparseGrad"


def test_header_parsing_and_matching():
    decls = parse_phi_headers(FIX / "phi_include")
    names = {d.function for d in decls}
    assert {"AdamDenseKernel", "MergedAdamKernel", "ReluKernel", "TanhKernel", "ConvKernel",
            "MatMulKernel"} == names  # `DenseTensor Matmul(...)` is not a kernel
    relu = next(d for d in decls if d.function == "ReluKernel")
    assert relu.line == 12 and [p.name for p in relu.params] == ["x", "out"]
    index = DeclIndex(decls)
    d, how = index.match("adam")
    assert d.function == "AdamDenseKernel" and "dense variant" in how
    assert index.match("merged_adam")[0].function == "MergedAdamKernel"
    assert index.match("merged_adam")[1] == ("matched MergedAdamKernel by CamelCase name in "
                                             "paddle/phi/kernels/adam_kernel.h")
    assert index.match("matmul")[1].startswith("matched MatMulKernel case-insensitively")
    assert index.match("conv2d")[0].function == "ConvKernel"
    assert index.match("nothing_like_this") == (
        None, "no C++ declaration found in the installed phi headers")


def test_fixture_catalog(fixture_catalog):
    ops = {o.name: o for o in fixture_catalog.framework_ops}
    assert sorted(ops) == ["adam", "adamw", "c_embedding", "conv2d", "feed", "flatten",
                           "matmul", "matmul_grad", "relu", "reshape", "sgd"]
    adam = ops["adam"]
    assert adam.kind == "optimizer" and adam.aliases == ("adam_",)
    assert adam.function == "AdamDenseKernel"
    assert adam.source.path == "paddle/phi/kernels/adam_kernel.h" and adam.source.line == 10
    assert adam.schema.startswith("void AdamDenseKernel(const Context& dev_ctx, "
                                  "const DenseTensor& param")
    assert [p.role for p in adam.params][-2:] == ["output", "output"]
    assert "registered CPU: float32, float64" in adam.notes
    assert ops["matmul"].aliases == ("matmul_v2",)
    assert ops["matmul_grad"].kind == "backward"
    assert ops["matmul_grad"].aliases == ("matmul_v2_grad",)
    assert ops["relu"].function == "ReluKernel"
    customs = {a.op: a for a in fixture_catalog.adapters}
    assert set(customs) == {"c_embedding", "feed", "flatten", "reshape"}
    assert customs["c_embedding"].dtypes == ("bfloat16", "float16", "float32")
    assert {a.provider for a in customs.values()} == {ALL_CUSTOM_PROVIDER}
    assert customs["flatten"].notes[0] == "layouts: STRIDED, Undefined(AnyLayout)"


def test_fixture_catalog_is_deterministic(fixture_catalog):
    registry = json.loads((FIX / "phi_registry_sample.json").read_text())
    again = load_paddle_catalog(FIX / "yaml", registry=registry,
                                include_dir=FIX / "phi_include", version="3.3.1")
    assert again.framework_ops == fixture_catalog.framework_ops
    assert again.provenance == fixture_catalog.provenance


def _p(name, ctype):
    return Param(name, ctype)


def test_signature_drift_rules():
    adapter = [_p("x", "const phi::DenseTensor&"), _p("beta1_in", "const phi::Scalar&"),
               _p("old", "int"), _p("out", "phi::DenseTensor*")]
    framework = [_p("x", "const DenseTensor&"), _p("beta1", "const Scalar&"),
                 _p("new", "bool"), _p("out", "std::vector<DenseTensor*>")]
    assert signature_drift(adapter, framework) == [
        "added: new (bool) at 2", "retyped: out (phi::DenseTensor* -> std::vector<DenseTensor*>)",
        "removed: old (int)"]
    assert signature_drift(adapter, adapter) == []


@pytest.fixture(scope="module")
def real():
    return load_paddle_catalog(SHARED / "yaml")


@needs_real
def test_installed_paddle_catalog(real):
    import paddle
    assert len(real.framework_ops) == len(paddle.base.core._get_registered_phi_kernels("function"))
    matched = sum(1 for o in real.framework_ops if o.function)
    assert matched / len(real.framework_ops) > 0.75
    assert len(real.adapters) >= 80   # CUSTOM-backend kernels of the CPU wheel (87 in 3.3.1)
    assert {"feed", "reshape", "flatten"} <= {a.op for a in real.adapters}
    kinds = {o.name: o.kind for o in real.framework_ops}
    assert kinds["adam"] == kinds["sgd"] == kinds["momentum"] == "optimizer"
    assert kinds["conv2d_grad"] == "backward" and kinds["conv2d"] == "forward"


@needs_real
@pytest.mark.parametrize("kernel", ["adam", "adamw"])
def test_adam_drift_against_custom_device(real, kernel):
    ops = {o.name: o for o in real.framework_ops}
    fw = ops[kernel]
    names = [p.name for p in fw.params]
    assert "moment2_max" in names and "amsgrad" in names       # Paddle 3.3.1 has AMSGrad
    pcd = {a.op: a for a in load_extracted(SHARED, "develop").adapters}[kernel]
    assert "moment2_max" not in {p.name for p in pcd.signature}
    drift = signature_drift(pcd.signature, fw.params)
    added = [d for d in drift if d.startswith("added:")]
    assert [d.split()[1] for d in added] == ["moment2_max", "amsgrad", "moment2_max_out"]
    assert not [d for d in drift if d.startswith(("removed:", "retyped:"))]
    assert "moved: beta1_pow (5 -> 6)" in drift  # beta1_pow_in <-> beta1_pow, shifted by one
