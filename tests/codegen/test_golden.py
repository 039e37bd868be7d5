"""Golden files pin the rendered output for a handful of APIs (both targets).
Regenerate after an intended change with OPGEN_UPDATE_GOLDEN=1 and review the diff."""
from __future__ import annotations

import os

import pytest

from codegen.api import prepare

from .conftest import FIXTURES

GOLDEN = FIXTURES / "golden"
GOLDEN_CASES = [
    ("abs_torch", "aclnnAbs", "torch", "aten::abs"),
    ("abs_paddle", "aclnnAbs", "paddle", "abs"),
    ("adam_torch", "Adam", "torch", None),
    ("adam_paddle", "Adam", "paddle", None),
    ("pad_torch", "aclnnConstantPadNd", "torch", "aten::constant_pad_nd"),
    ("layernorm_paddle", "aclnnLayerNorm", "paddle", "layer_norm"),
    ("add_torch", "aclnnAdd", "torch", "aten::add.Tensor"),
    ("cat_torch", "aclnnCat", "torch", "aten::cat"),
]


def _pinned(files: dict[str, str]) -> dict[str, str]:
    # csrc/ and the tests' opgen_*_check.py are verbatim copies of the runtime (csrc/opgen,
    # codegen/testlib); they are tested on their own
    return {k: v for k, v in files.items() if not k.startswith("standalone/csrc/")
            and not k.startswith("standalone/tests/opgen_")}


@pytest.mark.parametrize("case,name,target,op", GOLDEN_CASES, ids=[c[0] for c in GOLDEN_CASES])
def test_golden(db, case, name, target, op):
    r = prepare(db, name, target, op=op, command=f"opgen aclnn {name} --target {target}")
    files = _pinned(r.files)
    root = GOLDEN / case
    if os.environ.get("OPGEN_UPDATE_GOLDEN"):
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    expected = {p.relative_to(root).as_posix(): p.read_text()
                for p in sorted(root.rglob("*")) if p.is_file()}
    assert sorted(files) == sorted(expected)
    for rel, text in files.items():
        assert text == expected[rel], f"{case}/{rel} differs from the golden file"


def test_render_is_deterministic(db):
    a = prepare(db, "Adam", "paddle").files
    b = prepare(db, "Adam", "paddle").files
    assert a == b


def test_paddle_adam_maps_inplace_refs_and_scalars(db):
    r = prepare(db, "Adam", "paddle")
    kernel = r.files["in-tree/backends/npu/kernels/adam_kernel.cc"]
    # the in-place refs are the outputs (float64 goes through a float32 copy: compute_as)
    assert "opgen_compute_as(dev_ctx, acl_var_ref_master, {phi::DataType::FLOAT64, " in kernel
    assert ("EXEC_NPU_CMD(aclnnApplyAdamWV2, dev_ctx, acl_var_ref_float32, acl_m_ref_float32, "
            "acl_v_ref_float32") in kernel
    assert "opgen_cast_back(dev_ctx, acl_var_ref_float32, param_out);" in kernel
    assert "phi::Copy(dev_ctx, param, dev_ctx.GetPlace(), false, param_out);" in kernel
    assert "float acl_beta1 = static_cast<float>(beta1.to<double>());" in kernel
    assert "PD_REGISTER_PLUGIN_KERNEL(adam," in kernel
    # the wheel registers float32/float64 for adam on the CPU; the other
    # PaddleCustomDevice backends add float16, phi's GPU registration bfloat16; aclnn has
    # fp16/bf16/fp32, so float64 is computed in float32 (PaddleCustomDevice adam_kernel.cc
    # registers double the same way, and bfloat16)
    assert "custom_kernel::AdamDenseKernel,\n                          float,\n" \
           "                          phi::dtype::float16,\n                          double,\n" \
           "                          phi::dtype::bfloat16) {" in kernel
    # beta1_pow/beta2_pow are read where they are (the other backends' settings, re-indexed
    # by name on this signature)
    assert "kernel->InputAt(6).SetBackend(phi::Backend::ALL_BACKEND);" in kernel
    # every unmapped/guessed param is a TODO naming both sides
    assert "TODO(opgen): aclnn param `weightDecay` (float) has no framework counterpart" in kernel
    # the beta powers the API does not advance are advanced after it (kernel_rules)
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, acl_beta1_pow_out_in, acl_beta1_pow_out_factor, *beta1_pow_out);" in kernel
    assert "framework param `beta1_pow` (const phi::DenseTensor&) is not passed" not in kernel


def test_paddle_grad_kernel_rendered_when_both_sides_have_one(db):
    r = prepare(db, "aclnnLayerNorm", "paddle", op="layer_norm")
    kernel = r.files["in-tree/backends/npu/kernels/layer_norm_kernel.cc"]
    assert "EXEC_NPU_CMD(aclnnLayerNormBackward, dev_ctx" in kernel
    assert "PD_REGISTER_PLUGIN_KERNEL(layer_norm_grad," in kernel


def test_torch_layout_files(db):
    r = prepare(db, "aclnnAbs", "torch", op="aten::abs", layout="in-tree")
    assert sorted(r.files) == ["README.md", "in-tree/op_plugin/config/op_plugin_functions.yaml.entry",
                               "in-tree/op_plugin/ops/opapi/AbsKernelNpuOpApi.cpp"]
    r = prepare(db, "aclnnAbs", "torch", op="aten::abs", layout="standalone")
    assert "standalone/src/binding.cpp" in r.files and not any(k.startswith("in-tree") for k in r.files)
