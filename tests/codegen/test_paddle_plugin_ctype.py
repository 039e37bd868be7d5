"""phi's polymorphic `TensorBase` is declared `DenseTensor` in a PaddleCustomDevice kernel
(docs/opgen.md batch N, class 16): add_n asked for with aclnnSum kept the wheel's
`std::vector<const TensorBase*>`, unqualified, and did not compile in-tree (scored 2);
upstream add_n_kernel.cc takes `std::vector<const phi::DenseTensor*>`."""
from __future__ import annotations

import pytest

from codegen.paddle_target import plugin_ctype, qualify


@pytest.mark.parametrize("ctype, want", [
    ("const std::vector<const TensorBase*>&", "const std::vector<const DenseTensor*>&"),
    ("const phi::TensorBase&", "const DenseTensor&"),
    ("const DenseTensor&", "const DenseTensor&"),
    ("const MyTensorBase&", "const MyTensorBase&"),  # only phi's own name
])
def test_tensor_base_is_a_dense_tensor(ctype, want):
    assert plugin_ctype(ctype) == want


def test_add_n_takes_a_list_of_dense_tensors():
    from codegen.api import prepare
    from opdb.query import OpDB
    assert qualify("const std::vector<const TensorBase*>&") == \
        "const std::vector<const phi::DenseTensor*>&"
    r = prepare(OpDB.open(), "aclnnSum", "paddle", op="add_n", layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert "const std::vector<const phi::DenseTensor*>& x," in cc
    assert "TensorBase" not in cc
    # no float64 computed in float32: the list's members would reach aclnnSum uncast
    # (test_paddle_tensor_list_dtypes.py)
    assert "EXEC_NPU_CMD(aclnnSum, dev_ctx, acl_tensors, *out);" in cc
