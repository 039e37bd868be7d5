"""Forward kernels upstream composes of several aclnn calls that the expression language
cannot say, given as reviewed `body` entries of opdb/sources/forward_compositions.yaml
(docs/opgen.md "Paddle compositions: warpctc, cross_entropy_with_softmax,
strided_slice_array, dropout"). Before them: cross_entropy_with_softmax rendered
aclnnInplaceZero on `softmax` (scored 0), dropout a DoMask of an unwritten mask, warpctc raw
logits into aclnnCtcLoss with placeholder lengths, strided_slice_array an aclnnSliceV2 of
nullptr."""
from __future__ import annotations

import pytest

from codegen.paddle_composition import (BodyComposition, _body_composition, body_calls,
                                        compositions, load_compositions)


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def _kernel(db, api, op, fn):
    from codegen.api import prepare
    r = prepare(db, api, "paddle", op=op, layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    body = cc.split(f"void {fn}(")[1].split("\n}\n")[0]
    return r, cc, body


def test_cross_entropy_with_softmax_is_a_softmax_and_a_cross_entropy(db):
    r, cc, body = _kernel(db, "aclnnInplaceZero", "cross_entropy_with_softmax",
                          "CrossEntropyWithSoftmaxKernel")
    assert "aclnnInplaceZero" not in body.split("composition; the kernel")[1]
    assert "EXEC_NPU_CMD(aclnnSoftmax, dev_ctx, logits, acl_axis, *softmax);" in body
    assert "EXEC_NPU_CMD(aclnnLogSoftmax, dev_ctx, logits, acl_axis, acl_logp);" in body
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *softmax, logits);" in body  # !use_softmax
    assert ("EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, acl_prod, acl_dims, acl_keep, acl_dtype, "
            "*loss);") in body  # soft labels
    assert "EXEC_NPU_CMD(aclnnGather, dev_ctx, acl_logp, acl_axis, acl_index, *loss);" in body
    assert "EXEC_NPU_CMD(aclnnEqScalar, dev_ctx, label, acl_ignore_index, acl_ignored);" in body
    # log(0) as -1e20 without softmax; the other labels checked in range (upstream's CPU path)
    assert "EXEC_NPU_CMD(aclnnClampMin, dev_ctx, acl_log, acl_tolerable, acl_logp);" in body
    assert "PADDLE_ENFORCE_LT(acl_h_hi.data<int64_t>()[0], logits.dims()[acl_axis]" in body
    assert body.rstrip().endswith(
        "EXEC_NPU_CMD(aclnnInplaceMaskedFillScalar, dev_ctx, *loss, acl_ignored, acl_zero);")
    assert [t for t in r.todos if "numeric_stable_mode" in t]  # upstream ignores it too
    assert len(r.todos) == 1


def test_dropout_generates_its_mask_and_branches_on_mode(db):
    r, cc, body = _kernel(db, "aclnnDropoutDoMask", "dropout", "DropoutRawKernel")
    assert not r.todos
    gen = body.index("EXEC_NPU_CMD(aclnnDropoutGenMask, dev_ctx, acl_shape, acl_p, acl_seed, "
                     "acl_offset, *mask);")
    assert gen < body.index("EXEC_NPU_CMD(aclnnDropoutDoMask, dev_ctx, acl_x, *mask, acl_p, "
                            "acl_out);")
    assert "const bool acl_upscale = mode == \"upscale_in_train\";" in body
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, x, acl_keep, *out);" in body  # is_test, downscale
    assert "phi::Copy(dev_ctx, *seed_tensor.get_ptr(), phi::CPUPlace(), true" in body
    assert "mask->Resize(phi::make_ddim({acl_bits / 8}));" in body
    reg = cc.split("PD_REGISTER_PLUGIN_KERNEL(dropout,")[1].split("}")[0]
    assert "double" in reg  # computed in float32 (float64_as_float32)
    assert "kernel->OutputAt(1).SetDataType(phi::DataType::UINT8);" in reg


def test_warpctc_and_its_grad(db):
    r, cc, body = _kernel(db, "aclnnCtcLoss", "warpctc", "WarpctcKernel")
    assert ("EXEC_NPU_CMD(aclnnLogSoftmax, dev_ctx, logits, acl_class_dim, acl_log_probs);"
            in body)
    assert ("EXEC_NPU_CMD(aclnnCtcLoss, dev_ctx, acl_log_probs, acl_label64, acl_in_vec, "
            "acl_lab_vec, acl_blank, acl_zero_infinity, acl_loss, acl_log_alpha);") in body
    assert "bool acl_zero_infinity = true;" in body
    assert "aclnnCtcLossBackward" in body and "aclnnLogSoftmaxBackward" in body
    grad = cc.split("void WarpctcGradKernel(")[1].split("\n}\n")[0]
    # the companion: warpctcgrad * loss_grad, not aclnnCtcLossBackward with inputs by position
    assert "EXEC_NPU_CMD(aclnnMul, dev_ctx, warpctcgrad, acl_dloss, *logits_grad);" in grad
    assert "EXEC_NPU_CMD(aclnnCtcLossBackward" not in grad
    assert "rendered next to its forward's composition" in grad
    assert [t for t in r.todos if "norm_by_times" in t]


def test_warpctc_grad_asked_with_its_forwards_api(db):
    # upstream computes the gradient in warpctc (aclnnCtcLossBackward); warpctc_grad asked
    # alone with that API renders its own body (was: CtcLossBackward, tensors by position)
    r, cc, body = _kernel(db, "aclnnCtcLossBackward", "warpctc_grad", "WarpctcGradKernel")
    assert "EXEC_NPU_CMD(aclnnMul, dev_ctx, warpctcgrad, acl_dloss, *logits_grad);" in body
    assert "EXEC_NPU_CMD(aclnnCtcLossBackward" not in body
    assert ("upstream's `warpctc` (the forward of `warpctc_grad`) calls aclnnCtcLossBackward"
            in body)
    from codegen.resolve import resolve
    from codegen.paddle_composition import forward_composition
    gop = resolve(db, "aclnnCtcLossBackward", "paddle", op="warpctc_grad").op
    assert forward_composition(db, db.aclnn_api("aclnnExp"), gop) is None


def test_strided_slice_array_copies_members(db):
    r, cc, body = _kernel(db, "aclnnSliceV2", "strided_slice_array", "StridedSliceArrayKernel")
    assert not r.todos
    assert "nullptr" not in body and "aclnnSliceV2," not in body
    assert "EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, acl_member, acl_in);" in body
    assert "out->resize(acl_from.size());" in body


def test_a_body_binds_by_the_signature_and_opdb_arity(db):
    from codegen.resolve import resolve
    op = resolve(db, "aclnnInplaceZero", "paddle", op="cross_entropy_with_softmax").op
    api = db.aclnn_api("aclnnInplaceZero")
    ent = compositions()["cross_entropy_with_softmax"]
    assert isinstance(_body_composition(db, api, op, ent), BodyComposition)
    # a need the kernel does not have: no composition (the kernel renders as before)
    assert _body_composition(db, api, op, {**ent, "needs": ent["needs"] + ["nope"]}) is None
    # a call with another number of arguments than opdb declares: no composition
    bad = [(a, n + 1 if a == "aclnnGather" else n) for a, n in ent["arity"]]
    assert _body_composition(db, api, op, {**ent, "arity": bad}) is None
    # an API neither among the calls nor upstream's adapter's: no composition
    assert _body_composition(db, db.aclnn_api("aclnnExp"), op, ent) is None


def test_body_calls_counts_top_level_arguments():
    assert body_calls(["EXEC_NPU_CMD(aclnnX, dev_ctx, f(a, b), c->d, *e);"]) == [("aclnnX", 3)]


@pytest.mark.parametrize("text, says", [
    ("compositions: [{op: x, needs: [a], calls: [aclnnExp], body: ['EXEC_NPU_CMD(aclnnNeg, "
     "dev_ctx, a, b);'], evidence: e}]", "must list exactly"),
    ("compositions: [{op: x, needs: a, calls: [aclnnExp], body: [';'], evidence: e}]",
     "a body entry has"),
])
def test_a_malformed_body_entry_is_a_one_line_error(text, says):
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError, match=says):
        load_compositions(text)


_ARRAY_HARNESS = r"""
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
int main() {
  long n, b, e, s;
  while (std::scanf("%ld %ld %ld %ld", &n, &b, &e, &s) == 4) {
    const int64_t acl_n = n;
    std::vector<int64_t> acl_starts{b}, acl_ends{e}, acl_strides{s};
    const bool acl_decrease = false;
LINES
    for (int64_t k : acl_from) std::printf("%ld ", (long)k);
    std::printf("|\n");
  }
}
"""


def test_strided_slice_array_takes_pythons_members(db, tmp_path):
    """The rendered member selection, compiled and run, takes the members Python's slice
    rule does (Paddle 3.x's normalize_interval): `x[::-1]` passes end INT_MIN, which
    Paddle 2.x's normalisation floored at 0, dropping member 0."""
    import itertools
    import subprocess
    _, _, body = _kernel(db, "aclnnSliceV2", "strided_slice_array", "StridedSliceArrayKernel")
    lines = body.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("int64_t acl_s = "))
    end = next(i for i, ln in enumerate(lines) if ln.strip().startswith("out->resize("))
    keep = [ln for ln in lines[start:end] if "PADDLE_ENFORCE" not in ln and "acl_decrease =" not in ln]
    src = tmp_path / "members.cc"
    src.write_text(_ARRAY_HARNESS.replace("LINES", "\n".join(keep)))
    exe = tmp_path / "members"
    subprocess.run(["g++", "-std=c++17", "-o", str(exe), str(src)], check=True)
    bounds = list(range(-8, 9)) + [-2**31, 2**31 - 1]
    cases = [(n, b, e, s) for n in (1, 2, 5) for b, e in itertools.product(bounds, repeat=2)
             for s in (-3, -1, 1, 2)]
    out = subprocess.run([str(exe)], input="\n".join(" ".join(map(str, c)) for c in cases),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    for (n, b, e, s), line in zip(cases, out):
        taken = [int(t) for t in line.rstrip("|").split()]
        assert taken == list(range(n))[b:e:s], (n, b, e, s, line)
