"""An in-place aclnn API matched by role to a paddle kernel's output reads that output,
so the kernel's one unused input is copied into it first (docs/opgen.md "Batch M after
the fixes", class 7 of "Why paddle first passes fail"): fill_diagonal_grad asked for with
aclnnInplaceFillDiagonal filled the diagonal of an uninitialised x_grad (batch L scored
1; upstream fill_diagonal_kernel.cc copies out_grad into x_grad first). The in-place APIs
that overwrite every element (opdb/sources/inplace_overwrites.yaml, keyed by API with
evidence) read nothing and get no copy."""
from __future__ import annotations

import pytest

from codegen.paddle_target import inplace_overwrites


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


def _cc(db, api, kernel):
    from codegen.api import prepare
    r = prepare(db, api, "paddle", op=kernel, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r


def test_fill_diagonal_grad_copies_out_grad_before_filling(db):
    cc, r = _cc(db, "aclnnInplaceFillDiagonal", "fill_diagonal_grad")
    copy = ("  if (x_grad_tensor.data() != out_grad.data() && "
            "x_grad_tensor.dims() == out_grad.dims()) {\n"
            "    phi::Copy(dev_ctx, out_grad, dev_ctx.GetPlace(), false, &x_grad_tensor);\n"
            "  }\n")
    assert copy in cc
    assert cc.index(copy) < cc.index("EXEC_NPU_CMD(aclnnInplaceFillDiagonal, dev_ctx, "
                                      "x_grad_tensor, acl_fill_value, wrap);")
    assert not [t for t in r.todos if "`out_grad`" in t and "is not passed" in t]


@pytest.mark.parametrize("api, kernel", [("aclnnInplaceZero", "fill_grad"),
                                         ("aclnnInplaceZero", "floor_grad")])
def test_an_api_that_overwrites_every_element_gets_no_copy(db, api, kernel):
    cc, _ = _cc(db, api, kernel)
    assert "phi::Copy(" not in cc and f"EXEC_NPU_CMD({api}, dev_ctx, " in cc


def test_the_table_names_in_place_apis_of_opdb(db):
    table = inplace_overwrites()
    assert "aclnnInplaceZero" in table and "aclnnInplaceFillDiagonal" not in table
    for name in sorted(table):
        api = db.aclnn_api(name)
        assert api is not None, name
        assert [p.name for p in api.params if p.role == "inout"] == ["selfRef"], name


@pytest.mark.parametrize("text, says", [
    ("overwrites:\n  - api: aclnnInplaceZero\n", "overwrites[0]: needs an aclnnInplace"),
    ("overwrites:\n  - api: aclnnZero\n    evidence: x\n", "overwrites[0]: needs"),
    ("overwrites:\n  - {api: aclnnInplaceOne, evidence: x}\n  - {api: aclnnInplaceOne, "
     "evidence: y}\n", "overwrites[1]: aclnnInplaceOne is listed twice"),
])
def test_a_malformed_table_is_a_one_line_error(text, says):
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError) as exc:
        inplace_overwrites(text, "t.yaml")
    assert says in str(exc.value) and "\n" not in str(exc.value) and "t.yaml" in str(exc.value)


# batch N's full_like (scored 2): `selfRef` fed by the input `x`, so batch E's rule copied
# x into `out` first, a wasted copy that also gave `out` x's dtype (`full_like(x, v,
# dtype)`); an API of the overwrites table updates the output with nothing copied in.
# index_put (aclnnIndexPutImpl reads its tensor) keeps E's copy
def test_an_overwriting_api_fed_by_an_input_fills_the_output_without_a_copy(db):
    for kernel in ("full_like", "full_batch_size_like"):
        cc, r = _cc(db, "aclnnInplaceFillScalar", kernel)
        assert "phi::Copy(" not in cc, kernel
        assert "EXEC_NPU_CMD(aclnnInplaceFillScalar, dev_ctx, *out, " in cc, kernel
        assert any("overwrites every element" in t for t in r.todos), kernel
    cc, _ = _cc(db, "aclnnIndexPutImpl", "index_put")
    assert "phi::Copy(dev_ctx, x, dev_ctx.GetPlace(), false, out);" in cc
