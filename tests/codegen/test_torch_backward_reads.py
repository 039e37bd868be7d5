"""An output the paired backward API reads takes the dtype that backward accepts on the
chip: aclnnMaxPool2dWithIndices' `indices` (int64 by the meta function, the API takes
int32/int64) is read by aclnnMaxPool2dWithIndicesBackward, whose `indices` takes only INT32
on A2/A3 (ops-nn aclnn_max_pool2d_with_indices_backward.cpp:51-52,105-108; its doc's nested
bullet aclnnMaxPool2dWithIndicesBackward.md:224) and INT32/INT64 on Ascend950. The pairing
is derivatives.yaml's (`result1` passed as the backward's `indices`), not a name."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()
INT32 = ("self.options().dtype(std::get<1>(meta).scalar_type() == at::kLong ? at::kInt : "
         "std::get<1>(meta).scalar_type()));")


def test_backward_reads_come_from_derivatives_yaml():
    assert torch_facts.backward_reads("aten::max_pool2d_with_indices") == {
        1: ("aten::max_pool2d_with_indices_backward", "indices")}
    assert torch_facts.backward_reads("aten::native_layer_norm") == {
        1: ("aten::native_layer_norm_backward", "mean"),
        2: ("aten::native_layer_norm_backward", "rstd")}
    assert torch_facts.return_names("aten::native_layer_norm") == {1: "mean", 2: "rstd"}


def test_an_output_the_backward_reads_takes_the_backwards_dtype_on_the_chip(db):
    r = prepare(db, "aclnnMaxPool2dWithIndices", "torch", op="aten::max_pool2d_with_indices")
    body = _fn(r.files[ADAPTER.format("MaxPool2dWithIndices")],
               "std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(")
    assert INT32 in body
    assert "aclnnMaxPool2dWithIndicesBackward reads `indices`" in body
    assert "aclnnMaxPool2dWithIndicesBackward.md:224" in body
    r950 = prepare(db, "aclnnMaxPool2dWithIndices", "torch", op="aten::max_pool2d_with_indices",
                   soc="ascend950")
    assert "at::kInt" not in r950.files[ADAPTER.format("MaxPool2dWithIndices")]


def test_a_float_output_the_backward_reads_is_left_alone(db):
    r = prepare(db, "aclnnLayerNorm", "torch", op="aten::native_layer_norm")
    assert "at::kInt" not in r.files[ADAPTER.format("NativeLayerNorm")]
