"""A forward kernel upstream composes of several aclnn calls renders the whole composition
(docs/opgen.md "Paddle class 8 after batch N"): batch N scored `label_smooth` 0, asked for
with aclnnAdd it rendered label + prior_dist; upstream (label_smooth_kernel.cc) computes
(1 - epsilon) * label + epsilon * prior_dist, or + epsilon / num_classes without prior_dist.
The facts: opdb/sources/forward_compositions.yaml, keyed by the phi op."""
from __future__ import annotations

import pytest

from codegen.paddle_composition import compositions, forward_composition, load_compositions


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def test_label_smooth_branches_on_prior_dist(db):
    from codegen.api import prepare
    op = db.framework_op("paddle", "label_smooth")
    for api in ("aclnnAdd", "aclnnMuls", "aclnnAdds"):  # each call upstream makes
        c = forward_composition(db, db.aclnn_api(api), op)
        assert c is not None and c.step, api
    assert forward_composition(db, db.aclnn_api("aclnnExp"), op) is None
    r = prepare(db, "aclnnAdd", "paddle", op="label_smooth", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert not r.todos
    body = [ln.strip() for ln in cc.split("void LabelSmoothKernel")[1].splitlines()]
    given, absent = "\n".join(body).split("} else {")
    assert "if (prior_dist) {  // given" in given
    assert "const phi::DenseTensor& prior_dist_v = *prior_dist.get_ptr();" in given
    assert "phi::Scalar out_h1(1.0 - static_cast<double>(epsilon));  // 1 - epsilon" in given
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, label, out_h1, out_t2);" in given
    assert "phi::Scalar out_s3(epsilon);" in given  # a float attribute as an aclScalar
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, prior_dist_v, out_s3, out_t4);" in given
    assert "out_t4.set_meta(prior_dist_v.meta());" in given  # shaped like prior_dist
    assert "EXEC_NPU_CMD(aclnnAdd, dev_ctx, out_t2, out_t4, out_c5, *out);" in given
    assert ("phi::Scalar out_h3(static_cast<double>(epsilon) / static_cast<double>("
            "label.dims()[label.dims().size() - 1]));") in absent
    assert "EXEC_NPU_CMD(aclnnAdds, dev_ctx, out_t2, out_h3, out_c4, *out);" in absent
    assert "prior_dist" not in absent



def test_square_passes_x_as_both_operands(db):
    # seventh audit (paddle rows 13-24): asked for with aclnnMul, `square` passed a
    # placeholder nullptr for aclnn's `other`; upstream (activation_kernel.cc SquareKernel)
    # passes `x` twice
    from codegen.api import prepare
    op = db.framework_op("paddle", "square")
    c = forward_composition(db, db.aclnn_api("aclnnMul"), op)
    assert c is not None and c.step
    r = prepare(db, "aclnnMul", "paddle", op="square", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert not r.todos
    body = [ln.strip() for ln in cc.split("void SquareKernel")[1].splitlines()]
    assert "EXEC_NPU_CMD(aclnnMul, dev_ctx, x, x, *out);" in body
    assert "nullptr" not in cc.split("void SquareKernel")[1]

def test_every_composition_binds_to_its_kernel(db):
    # a typo in the table (a leaf the kernel does not take) would silently keep it unused
    from codegen.resolve import resolve
    for name in compositions():
        if name.endswith("_grad") and name[: -len("_grad")] in compositions():
            continue  # a companion: bound next to its forward (test_paddle_body_composition)
        steps = {m.aclnn for m in db.mappings(framework="paddle", op=name)
                 if m.evidence == "adapter"}
        assert steps, name
        # the kernel as opgen resolves it (dropout's signature is its registration's)
        op = resolve(db, sorted(steps)[0], "paddle", op=name).op
        assert any(forward_composition(db, db.aclnn_api(s), op) for s in steps), name


@pytest.mark.parametrize("text, says", [
    ("compositions: [{op: x, outs: {out: 'Mul(a, b)'}}]", "needs a phi `op`"),
    ("compositions: [{op: x, outs: {out: 'Mul(a, b'}, evidence: e}]", "bad gradient"),
    ("compositions: [{op: x, outs: {out: a}, absent: {y: {z: a}}, evidence: e}]", "absent"),
    ("compositions: [{op: x, outs: {out: a}, when: 1, evidence: e}]", "unknown keys"),
])
def test_a_malformed_table_is_a_one_line_error(text, says):
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError, match=says):
        load_compositions(text)


def test_an_optional_input_outside_its_branch_does_not_bind(db, monkeypatch):
    import codegen.paddle_composition as m
    table = {"label_smooth": {**compositions()["label_smooth"]}}
    table["label_smooth"]["absent"] = {}  # prior_dist read without a branch
    monkeypatch.setattr(m, "compositions", lambda: table)
    assert forward_composition(db, db.aclnn_api("aclnnAdd"),
                               db.framework_op("paddle", "label_smooth")) is None
