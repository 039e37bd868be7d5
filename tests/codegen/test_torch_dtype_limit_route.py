"""A dtype the aclnn API lacks on the SoC (opdb.soc_dtypes) goes to torch's own
CompositeExplicitAutograd kernel when the op's family is device-generic in torch
(docs/opgen.md, "Dtype routes for single-tensor ops"). Nothing keys on an API or op
name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_a_dtype_the_api_lacks_takes_torchs_explicit_kernel(db):
    """op-plugin 517f2e7d ChunkCatKernelOpApi.cpp sends dtypes other than
    float/float16/bfloat16 to `at::native::_chunk_cat[_out]`; ops-math aclnn_chunk_cat.cpp
    refuses them. Before, every integer list reached the API."""
    r = prepare(db, "aclnnChunkCat", "torch", op="aten::_chunk_cat")
    text = r.files[ADAPTER.format("ChunkCat")]
    for sig, call in (("at::Tensor& _chunk_cat_out(",
                       "return at::native::_chunk_cat_out(tensors, dim, num_chunks, out);"),
                      ("at::Tensor _chunk_cat(",
                       "return at::native::_chunk_cat(tensors, dim, num_chunks);")):
        body = _fn(text, sig)
        assert ("if ((!tensors.empty() && tensors[0].scalar_type() != at::kBFloat16 && "
                "tensors[0].scalar_type() != at::kHalf && "
                "tensors[0].scalar_type() != at::kFloat) || (dim != 0)) {") in body
        assert call in body
        assert body.index(call) < body.index("EXEC_NPU_CMD(aclnnChunkCat")


def test_no_route_where_the_explicit_kernel_only_redispatches():
    """`abs` has a CompositeExplicitAutograd kernel, but `abs.out` has CPU/CUDA ones: the
    functional kernel would call the NPU's own `abs.out` again. An op with only device
    kernels (`adaptive_max_pool3d`) has no route upstream agrees on. Neither gets one."""
    from codegen import torch_facts
    from codegen.torch_target import _out_member
    assert torch_facts.explicit_kernel("aten::_chunk_cat") == "_chunk_cat"
    assert torch_facts.explicit_kernel(_out_member("aten::_chunk_cat")) == "_chunk_cat_out"
    assert torch_facts.explicit_kernel("aten::abs") == "abs"
    assert torch_facts.explicit_kernel(_out_member("aten::abs")) is None
    assert torch_facts.explicit_kernel("aten::adaptive_max_pool3d") is None
    # an explicit kernel that is the op's only one redispatches (`bitwise_or.Scalar` to
    # the Tensor overload, `mv` to `addmv`): no route; `_chunk_cat`'s stands beside CUDA's
    assert torch_facts.explicit_beside_device_kernel("aten::_chunk_cat")
    assert torch_facts.explicit_beside_device_kernel("aten::_chunk_cat.out")
    assert not torch_facts.explicit_beside_device_kernel("aten::bitwise_or.Scalar")
    assert not torch_facts.explicit_beside_device_kernel("aten::mv")
    assert not torch_facts.explicit_beside_device_kernel("aten::abs")
    assert _out_member("aten::add.Tensor") == "aten::add.Tensor_out"
    assert _out_member("aten::_chunk_cat.out") == "aten::_chunk_cat.out"


def test_a_redispatching_explicit_kernel_gets_no_route(db):
    """op-plugin 517f2e7d BitwiseOrKernelNpuOpApi.cpp routes no dtype of
    `bitwise_or.Scalar` to torch; its explicit kernel (its only one) would call the NPU's
    Tensor overload. The first version of the rule sent it there (render diff)."""
    r = prepare(db, "aclnnBitwiseOrScalar", "torch", op="aten::bitwise_or.Scalar")
    adapters = [v for k, v in r.files.items() if k.startswith("in-tree/") and k.endswith(".cpp")]
    assert adapters and any("EXEC_NPU_CMD(aclnnBitwiseOrScalar" in v for v in adapters)
    text = "".join(adapters)
    assert "at::native::bitwise_or" not in text


def test_a_value_the_api_doc_refuses_takes_torchs_explicit_kernel(db):
    """Ninth audit, torch row 24 (docs/opgen.md): aclnnChunkCat takes only `dim` 0 (its doc,
    "仅支持为0", opdb.doc_values `only`; ops-math aclnn_chunk_cat.cpp:204-206 refuses other
    values) and op-plugin 517f2e7d ChunkCatKernelOpApi.cpp sends other dims to
    `at::native::_chunk_cat[_out]`. Before, every dim reached the API."""
    r = prepare(db, "aclnnChunkCat", "torch", op="aten::_chunk_cat")
    text = r.files[ADAPTER.format("ChunkCat")]
    body = _fn(text, "at::Tensor _chunk_cat(")
    head = body[:body.index("return at::native::_chunk_cat(tensors, dim, num_chunks);")]
    assert "|| (dim != 0)) {" in head
    assert "`dim` only 0" in head


def test_no_value_route_without_a_doc_only_value(db):
    """An API whose doc states no `only` value for a passed number gets no value term:
    aclnnRenorm's `dim` goes to the API as given."""
    r = prepare(db, "aclnnRenorm", "torch", op="aten::renorm")
    text = "".join(v for k, v in r.files.items() if k.endswith(".cpp"))
    assert "dim != " not in text
