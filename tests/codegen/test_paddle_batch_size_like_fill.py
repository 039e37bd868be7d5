"""full_batch_size_like keeps phi's LoD batch and FullLikeKernel's value check (docs/opgen.md
"Fifth audit: the pool at head, paddle": scored 1 blind, both missing). A reviewed
kernel rule of opdb/sources/arg_rules.yaml keyed on the attribute `x_batch_size_dim` (no
mechanism reads phi's kernel bodies), with its evidence: Paddle phi full_kernel.cc
FullBatchSizeLikeKernel, PaddleCustomDevice full_kernel.cc (77090b64)."""
from __future__ import annotations


def _cc(kernel):
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnInplaceFillScalar", "paddle", op=kernel, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r


def test_a_lod_x_sets_the_batch_dim_of_out_before_the_fill():
    cc, r = _cc("full_batch_size_like")
    lod = "  if (!x.lod().empty() && x_batch_size_dim == 0) {"
    assert lod in cc
    assert ("acl_x_batch_size_dim_dims[out_batch_size_dim] = "
            "static_cast<int64_t>(x.lod().back().size()) - 1;") in cc
    assert cc.index(lod) < cc.index("EXEC_NPU_CMD(aclnnInplaceFillScalar, dev_ctx, *out, val);")
    # x is read now: no "is not passed" TODO for it, nor for the batch dims
    assert not [t for t in r.todos if "is not passed" in t
                and any(f"`{n}`" in t for n in ("x", "x_batch_size_dim", "out_batch_size_dim"))]


def test_the_fill_value_is_checked_against_t_as_phi_full_like_does():
    cc, _ = _cc("full_batch_size_like")
    assert "The filled value is out of range for target type" in cc
    assert "std::isinf(acl_x_batch_size_dim_v) || std::isnan(acl_x_batch_size_dim_v)" in cc


def test_the_rule_is_a_reviewed_entry_with_its_evidence():
    from opdb.arg_rules import load
    (rule,) = [r for r in load().kernel_rules if r.param == "x_batch_size_dim"]
    assert rule.where == "before" and not rule.apis
    assert "FullBatchSizeLikeKernel" in rule.evidence and "77090b64" in rule.evidence
