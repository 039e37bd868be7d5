"""`scan_checkout`: lexical scan of a PaddleCustomDevice checkout (fixture .cc files)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest.paddle_custom_device import (checkout_version, mask_cpp, parse_cpp_params,
                                              scan_checkout, structure_text)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "paddle"
CHECKOUT = FIX / "checkout"


@pytest.fixture(scope="module")
def scan():
    return scan_checkout(CHECKOUT)


def _by_op(result):
    return {a.op: a for a in result.adapters}


def test_kernels_found(scan):
    ops = _by_op(scan)
    assert sorted(ops) == ["adam", "equal", "equal_raw", "less_than", "less_than_raw",
                           "reduce_stats", "rms_norm", "set_value", "softmax", "softmax_grad"]
    assert "log_softmax" not in ops  # commented-out registration
    assert {a.version for a in scan.adapters} == {"local"}  # fixture dir is not a repo root


def test_adam_registration_and_signature(scan):
    adam = _by_op(scan)["adam"]
    assert adam.function == "AdamKernel"
    assert (adam.source.path, adam.source.line) == ("backends/npu/kernels/adam_kernel.cc", 75)
    assert adam.dtypes == ("float16", "bfloat16", "float32", "float64")
    assert len(adam.signature) == 22
    assert [p.name for p in adam.signature if p.role == "output"] == [
        "param_out", "moment1_out", "moment2_out", "beta1_pow_out", "beta2_pow_out",
        "master_param_out"]
    assert adam.signature[8].ctype == "const paddle::optional<phi::DenseTensor>&"
    assert adam.legacy_ops == ("ApplyAdamD", "Mul")  # "Muls" is only in a comment
    assert adam.aclnn == ()
    assert "unused_params: skip_update" in adam.notes
    assert "helpers: AdamUpdate, ToFloat32" in adam.notes
    assert "calls_other_kernels: CastKernel" in adam.notes
    assert "signature_line: backends/npu/kernels/adam_kernel.cc:46" in adam.notes


def test_compat_and_exec(scan):
    ops = _by_op(scan)
    sm, smg = ops["softmax"], ops["softmax_grad"]
    assert sm.aclnn == ("aclnnSoftmax",) and sm.legacy_ops == ("SoftmaxV2",)
    assert "conditional: DO_COMPATIBILITY" in sm.notes
    assert smg.aclnn == ("aclnnSoftmax", "aclnnSoftmaxBackward")  # commented EXEC ignored
    assert smg.legacy_ops == ("SoftmaxGrad",)  # NpuOpRunner(std::string("..."))
    assert "aclnn_exec: aclnnSoftmaxBackward" in smg.notes
    conf = {(m.op, m.aclnn): m.confidence for m in scan.mappings}
    assert conf[("softmax_grad", "aclnnSoftmaxBackward")] == 0.9
    assert conf[("softmax_grad", "aclnnSoftmax")] == 0.5
    assert conf[("softmax", "aclnnSoftmax")] == 0.9
    assert ("softmax", "aclnnLogSoftmax") not in conf  # only inside a string


def test_macro_expansion(scan):
    ops = _by_op(scan)
    lt, ltr = ops["less_than"], ops["less_than_raw"]
    assert lt.function == "LessThanKernel" and ltr.function == "LessThanRawKernel"
    assert lt.source.line == ltr.source.line == 73
    assert lt.dtypes == ("bool", "int32", "int64", "float32", "float16")
    assert any(n.startswith("via_macro: PD_REGISTER_COMPARE_KERNEL(less_than, LessThan) "
                            "defined at backends/npu/kernels/compare_kernel.cc:49")
               for n in lt.notes)
    assert lt.aclnn == ("aclnnLtTensor",) and lt.legacy_ops == ("Less",)  # through the helper
    assert ops["equal_raw"].legacy_ops == ("Equal",)


def test_preprocessor_and_gates(scan):
    ops = _by_op(scan)
    sv = ops["set_value"]
    assert sv.dtypes == ("float32", "float16", "float64", "int32", "int64")
    assert "dtype_condition: float16 if (CANN_VERSION_CODE >= 700000)" in sv.notes
    assert any(n.startswith("has_unimplemented_branch") for n in sv.notes)
    rs = ops["reduce_stats"]
    # op type from a variable, both #if branches, SetType on a second runner
    assert rs.legacy_ops == ("BN3DTrainingReduce", "BNTrainingReduce", "Squeeze")
    assert rs.aclnn == ("aclnnMean",)
    assert "conditional: FLAGS_npu_storage_format" in rs.notes
    assert "body_preprocessor_condition: (CANN_VERSION_CODE >= 700000)" in rs.notes
    rms = ops["rms_norm"]
    assert any(n.startswith("stub_unimplemented") for n in rms.notes)
    assert rms.signature[-1].role == "output" and rms.signature[4].ctype == "const int"


def test_deterministic(scan):
    again = scan_checkout(CHECKOUT)
    assert again.adapters == scan.adapters and again.provenance == scan.provenance


def test_unterminated_registration_names_file_and_line():
    with pytest.raises(ParseError, match=r"backends/npu/kernels/broken_kernel.cc:13: "
                                         r"unterminated PD_REGISTER_PLUGIN_KERNEL"):
        scan_checkout(FIX / "bad_checkout")


def _one_file(tmp_path, text):
    k = tmp_path / "backends" / "npu" / "kernels"
    k.mkdir(parents=True)
    (k / "x_kernel.cc").write_text(text)
    return tmp_path


def test_registration_without_dtypes(tmp_path):
    _one_file(tmp_path, "\n\nPD_REGISTER_PLUGIN_KERNEL(x, npu, ALL_LAYOUT,\n"
                        "  custom_kernel::XKernel) {}\n")
    with pytest.raises(ParseError, match=r"x_kernel.cc:3: .*needs \(name, backend|"
                                         r"x_kernel.cc:3: .*registers no dtype"):
        scan_checkout(tmp_path)


def test_bad_kernel_name(tmp_path):
    _one_file(tmp_path, 'PD_REGISTER_PLUGIN_KERNEL("x", npu, ALL_LAYOUT, XKernel, float) {}\n')
    with pytest.raises(ParseError, match=r'x_kernel.cc:1: kernel name "x" is not an identifier \(the first'):
        scan_checkout(tmp_path)


def test_not_a_checkout(tmp_path):
    with pytest.raises(OpscanError, match="has no backends/npu/kernels"):
        scan_checkout(tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_branch_is_the_version_and_the_commit_the_source(tmp_path):
    repo = tmp_path / "pcd"
    shutil.copytree(CHECKOUT, repo)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2024-10-18T16:08:21+08:00",
           "GIT_COMMITTER_DATE": "2024-10-18T16:08:21+08:00", "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["checkout", "-q", "-b", "release/9.9"], ["add", "."],
                ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env)
    commit, date = checkout_version(repo)
    assert len(commit) == 40 and date == "2024-10-18T16:08:21+08:00"
    result = scan_checkout(repo)
    assert {a.version for a in result.adapters} == {"release-9.9"}  # PaddleCustomDevice@release-9.9
    assert {a.source.version for a in result.adapters} == {commit}
    assert result.adapters[0].source.date == date
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach"], check=True, env=env)
    assert {a.version for a in scan_checkout(repo).adapters} == {commit}  # detached: the commit


def test_mask_and_params():
    src = 'int a = 1; // NpuOpRunner("X")\nauto s = "aclnnFoo"; /* aclnnBar */ aclnnBaz(s);\n'
    nocomment, masked = mask_cpp(src)
    assert len(nocomment) == len(masked) == len(src)
    assert "NpuOpRunner" not in nocomment and '"aclnnFoo"' in nocomment
    assert "aclnnFoo" not in masked and "aclnnBar" not in masked and "aclnnBaz" in masked
    params = parse_cpp_params("const Context& dev_ctx, const phi::DenseTensor &x UNUSED,\n"
                              "   std::vector<phi::DenseTensor *> outs, int axis = -1,\n"
                              "   const std::map<std::string, int>& m")
    assert [(p.name, p.ctype, p.default, p.unused) for p in params] == [
        ("dev_ctx", "const Context&", None, False),
        ("x", "const phi::DenseTensor&", None, True),
        ("outs", "std::vector<phi::DenseTensor*>", None, False),
        ("axis", "int", "-1", False),
        ("m", "const std::map<std::string, int>&", None, False)]
    flat, conds = structure_text("#if A\nx\n#else\ny\n#endif\n")
    assert conds[2] == ("A",) and conds[4] == ("!(A)",) and "#" not in flat
