"""PaddleCustomDevice JSONL facts -> adapters and adapter mappings (real shared files)."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest.paddle_custom_device import (BRANCHES, load_all_extracted, load_extracted,
                                              param_role)
from opdb.model import Adapter, from_row, to_row
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

SHARED = (REPO_SOURCES / "paddle")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} not present")


def _kernels(result):
    return [a for a in result.adapters if not any(n.startswith("custom op") for n in a.notes)]


@needs_shared
@pytest.mark.parametrize("branch,kernels,custom", [
    ("develop", 357, 36), ("release-3.0-beta", 350, 36), ("release-2.6", 326, 1)])
def test_branch_counts(branch, kernels, custom):
    result = load_extracted(SHARED, branch)
    assert len(_kernels(result)) == kernels
    assert len(result.adapters) - kernels == custom
    assert {a.version for a in result.adapters} == {branch}
    assert len({a.key() for a in result.adapters}) == len(result.adapters)
    prov = {p.kind: p for p in result.provenance}
    assert prov["npu-kernels"].rows == kernels and len(prov["npu-kernels"].sha256) == 64
    assert prov["npu-custom-ops"].rows == custom


@needs_shared
def test_adam_matches_readme_spot_check():
    result = load_extracted(SHARED, "develop")
    adam = next(a for a in result.adapters if a.op == "adam")
    assert adam.function == "AdamKernel"
    assert adam.source.path == "backends/npu/kernels/adam_kernel.cc"
    assert adam.source.version == "77090b642bfecc527ea0dc8ede72e9f0eec60a10"
    assert "signature_line: backends/npu/kernels/adam_kernel.cc:240" in adam.notes
    assert len(adam.signature) == 22
    assert adam.dtypes == ("float16", "bfloat16", "float32", "float64")
    assert adam.legacy_ops == ("ApplyAdamD", "Cast", "Mul") and adam.aclnn == ()
    roles = collections.Counter(p.role for p in adam.signature)
    assert roles == {"input": 16, "output": 6}
    assert [p.name for p in adam.signature][5:7] == ["beta1_pow_in", "beta2_pow_in"]
    assert "moment2_max" not in {p.name for p in adam.signature}
    assert not [m for m in result.mappings if m.op == "adam"]


@needs_shared
def test_exec_vs_probe_confidence():
    result = load_extracted(SHARED, "develop")
    conf = {(m.op, m.aclnn): m.confidence for m in result.mappings}
    assert conf[("softmax_grad", "aclnnSoftmaxBackward")] == 0.9
    assert conf[("softmax_grad", "aclnnSoftmax")] < 0.9
    assert conf[("conv2d", "aclnnConvolution")] == 0.9
    sg = next(a for a in result.adapters if a.op == "softmax_grad")
    assert "aclnn_exec: aclnnSoftmaxBackward" in sg.notes
    assert "conditional: DO_COMPATIBILITY" in sg.notes
    assert {m.evidence for m in result.mappings} == {"adapter"}


@needs_shared
def test_notes_carry_special_facts():
    result = load_extracted(SHARED, "develop")
    by_op = {a.op: a for a in result.adapters}
    assert "dtype_condition: float16 if (CANN_VERSION_CODE >= 700000)" in by_op["set_value"].notes
    assert any(n.startswith("stub_unimplemented") for n in by_op["rms_norm"].notes)
    assert any(n.startswith("has_unimplemented_branch") for n in by_op["memcpy"].notes)
    assert any(n.startswith("mixed_ungated") for n in by_op["cross_entropy_with_softmax"].notes)
    assert any(n.startswith("via_macro: PD_REGISTER_COMPARE_KERNEL(less_than, LessThan)")
               for n in by_op["less_than"].notes)
    stubs = [a.op for a in _kernels(result) if any(n.startswith("stub_unimpl") for n in a.notes)]
    assert len(stubs) == 8
    fa = by_op["flash_attention_npu_grad"]
    assert fa.dtypes is None and fa.notes[0].startswith("custom op (PD_BUILD_GRAD_OP")


@needs_shared
def test_all_branches_and_round_trip():
    result = load_all_extracted(SHARED)
    assert {a.version for a in result.adapters} == set(BRANCHES)
    for a in result.adapters[:50]:
        assert from_row(Adapter, json.loads(json.dumps(to_row(a)))) == a


def test_param_role():
    assert param_role("phi::DenseTensor*") == "output"
    assert param_role("std::vector<phi::DenseTensor*>") == "output"
    assert param_role("const std::vector<const phi::DenseTensor*>&") == "input"
    assert param_role("const paddle::optional<phi::DenseTensor>&") == "input"
    assert param_role("int") == "input"


def _mini(tmp_path, kernel_lines):
    (tmp_path / "custom_npu_summary.json").write_text(json.dumps(
        {"develop": {"ref": "develop", "commit": "abc", "commit_date": "2024-01-01"}}))
    (tmp_path / "custom_npu_kernels.develop.jsonl").write_text("\n".join(kernel_lines) + "\n")
    return tmp_path


def test_bad_json_names_line(tmp_path):
    good = json.dumps({"kernel": "k", "function": "K", "dtypes": [], "layout": "ALL_LAYOUT",
                       "path": "a.cc", "line": 1, "signature": [], "aclnn": [], "acl_ops": [],
                       "conditional": False})
    _mini(tmp_path, [good, "{not json"])
    with pytest.raises(ParseError, match=r"custom_npu_kernels.develop.jsonl:2: invalid JSON"):
        load_extracted(tmp_path, "develop")
    _mini(tmp_path, [good, good])
    with pytest.raises(ParseError, match=r":2: kernel 'k' already defined at line 1"):
        load_extracted(tmp_path, "develop")
    _mini(tmp_path, ['{"kernel": "x"}'])
    with pytest.raises(ParseError, match=r":1: record lacks function"):
        load_extracted(tmp_path, "develop")


def test_unknown_branch(tmp_path):
    _mini(tmp_path, [])
    with pytest.raises(OpscanError, match="branch 'release-9' is not in"):
        load_extracted(tmp_path, "release-9")
    assert load_extracted(tmp_path, "develop").adapters == []
