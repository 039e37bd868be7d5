"""Issue 9: an aclnn output the API pads beyond torch's meta shape (class 19).
aclnnCtcLoss refuses a `logAlphaOut` whose last dim is not `2 * max(target_lengths) + 1`
rounded up to a multiple of 8 before Ascend950 (ops-nn e5c3fa93
loss/ctc_loss_v2/op_api/aclnn_ctc_loss.cpp:176-182, ctc_loss_v2.cpp:210-229); op-plugin
517f2e7d CtcLossKernelNpuOpApi.cpp allocates it so (`ctc_loss_npu_output_size`) and
returns it padded, and `_ctc_loss_backward` passes it to aclnnCtcLossBackward as received.
A reviewed per-API entry (arg_rules.yaml `api_output_shapes`); the `.out` member resizes
its output to the entry's sizes, as the functional member allocates it."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

PADDED = ("std::vector<int64_t>{log_probs.dim() == 3 ? log_probs.size(1) : 1, log_probs.size(0), "
          "[&] { int64_t tail = 1; for (int64_t len : target_lengths) { tail = 2 * len + 1 > tail "
          "? 2 * len + 1 : tail; } return (c10_npu::GetSocVersion() >= "
          "c10_npu::SocVersion::Ascend950) ? tail : (tail + 7) / 8 * 8; }()}")


def _ctc(db):
    return prepare(db, "aclnnCtcLoss", "torch", op="aten::_ctc_loss").files[
        ADAPTER.format("CtcLoss")]


def test_ctc_loss_log_alpha_is_allocated_padded_and_returned_so(db):
    body = _fn(_ctc(db), "std::tuple<at::Tensor, at::Tensor> _ctc_loss(")
    assert f"at::Tensor out1 = npu_preparation::apply_tensor_without_format({PADDED}, " in body
    assert "std::get<1>(meta).sizes()" not in body
    assert "at::Tensor opgen_out1_api = out1;" in body
    assert "zero_infinity, out0, opgen_out1_api);" in body
    # returned as upstream returns it: the padded tensor, no narrowed view
    assert "return std::make_tuple(out0, out1);" in body
    assert "narrow" not in body
    # the loss keeps the meta function's shape
    assert ("at::Tensor out0 = npu_preparation::apply_tensor_without_format("
            "std::get<0>(meta).sizes(),") in body


def test_ctc_loss_out_resizes_log_alpha_to_the_apis_shape(db):
    body = _fn(_ctc(db), "std::tuple<at::Tensor&, at::Tensor&> _ctc_loss_out(")
    assert (f"npu_preparation::check_tensor({{log_probs, targets}}, out1, out1.scalar_type(), "
            f"{PADDED});") in body
    assert ("npu_preparation::check_tensor({log_probs, targets}, out0, out0.scalar_type(), "
            "std::get<0>(meta).sizes());") in body


def test_ctc_loss_backward_takes_log_alpha_as_received(db):
    """aclnn_ctc_loss_backward.cpp:255-259 accepts any last dim >= 2S+1, and op-plugin's
    generated _ctc_loss_backward passes the forward's padded log_alpha unchanged."""
    r = prepare(db, "aclnnCtcLossBackward", "torch", op="aten::_ctc_loss_backward")
    text = r.files[ADAPTER.format("CtcLossBackward")]
    assert ("EXEC_NPU_CMD(aclnnCtcLossBackward, grad, log_probs, targets, input_lengths, "
            "target_lengths, neg_log_likelihood, log_alpha, blank, zero_infinity, out);") in text
    assert "log_alpha.narrow" not in text


def test_the_standalone_binding_pads_for_the_rendered_chip(db):
    """The binding has no torch_npu: `{regbase_soc}` is the `--soc` chip's constant."""
    a2 = prepare(db, "aclnnCtcLoss", "torch", op="aten::_ctc_loss").files["standalone/src/binding.cpp"]
    assert "return (false) ? tail : (tail + 7) / 8 * 8; }()}" in a2
    assert "c10_npu" not in a2
    b = prepare(db, "aclnnCtcLoss", "torch", op="aten::_ctc_loss", soc="ascend950")
    assert "return (true) ? tail : (tail + 7) / 8 * 8; }()}" in b.files["standalone/src/binding.cpp"]
