"""The dropout mask a fused-attention adapter generates itself (docs/opgen.md,
"FlashAttentionScore's dropout mask (branch ws/h9fa)"). op-plugin 517f2e7d
FlashAttentionKernelNpuOpApi.cpp npu_fusion_attention generates the bit mask with
aclnnDropoutGenMaskV2 when keep_prob < 1 and no dropout_mask is given, from a seed/offset
it draws from the default NPU generator (reserving 10) and returns with `numels`;
npu_fusion_attention_grad regenerates it from those. Before, ours passed the (absent) mask
as nullptr, returned the input seed/offset and 0 for `numels` (a TODO), and the grad passed
`sink` as the mask by position. The mask's length is a reviewed per-API entry
(arg_rules.yaml `drop_masks`), rendered by `codegen.torch_drop_mask` for any API and op
with the parameters it names."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from codegen.torch_drop_mask import plan
from opdb.arg_rules import load as load_rules
from opdb.arg_rules import parse
from opdb.errors import OpscanError
from tests.codegen.torch_adapter_parts import ADAPTER, aclnn_api, fw_param, shipped_db_fixture
from tests.codegen.torch_adapter_parts import function_body as _fn

db = shipped_db_fixture()

GEN = "EXEC_NPU_CMD(aclnnDropoutGenMaskV2, opgen_mask_shape, opgen_mask_prob, "


def test_forward_generates_the_mask_and_returns_the_draw(db):
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    text = r.files[ADAPTER.format("NpuFusionAttention")]
    body = _fn(text, "std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t, "
                     "int64_t, int64_t> npu_fusion_attention(")
    assert "TODO(opgen): compute the returned int `numels`" not in body
    assert ('if (numels_layout == "BSH") { numels = query.size(0) * head_num * query.size(1) '
            '* key.size(1); }') in body
    assert ("at::Tensor acl_drop_mask = dropout_mask.has_value() ? *dropout_mask : "
            "at::Tensor();") in body
    assert "if (!acl_drop_mask.defined() && std::abs(keep_prob - 1.0) >= 1e-9) {" in body
    assert ("auto opgen_mask_pair = opgen_philox_inputs(c10::nullopt, "
            "static_cast<uint64_t>(10));") in body
    assert "seed_ = static_cast<int64_t>(opgen_mask_pair.first);" in body
    assert ("npu_preparation::apply_tensor_without_format({(numels + 128 - 1) / 128 * 128 / 8}"
            ", query.options().dtype(at::kByte));") in body
    assert GEN + "seed_, offset_, opgen_mask_dtype, acl_drop_mask);" in body
    # every branch (FlashAttentionScore, its V3 for sink, the VarLen sibling) gets the mask
    for api in ("aclnnFlashAttentionScore", "aclnnFlashAttentionScoreV3",
                "aclnnFlashAttentionVarLenScore"):
        assert f"EXEC_NPU_CMD({api}, query, key, value, pse, acl_drop_mask, " in body
    assert "decltype(ConvertType(dropout_mask))" not in body
    # the mask is generated before the calls, the draw's overload is in the file
    assert body.index(GEN) < body.index("EXEC_NPU_CMD(aclnnFlashAttentionScore,")
    assert "gen->philox_engine_inputs(reserved)" in text
    assert body.rstrip().endswith(
        "return std::make_tuple(attention_score, softmax_max, softmax_sum, softmax_out, "
        "seed_, offset_, numels);")
    # the standalone binding runs the API with the mask as given
    assert "acl_drop_mask" not in r.files["standalone/src/binding.cpp"]


def test_backward_regenerates_the_forwards_mask(db):
    r = prepare(db, "aclnnFlashAttentionScoreGrad", "torch", op="npu::npu_fusion_attention_grad")
    body = _fn(r.files[ADAPTER.format("NpuFusionAttentionGrad")], " npu_fusion_attention_grad(")
    assert "opgen_philox_inputs(" not in body  # no new draw
    assert GEN + "seed, offset, opgen_mask_dtype, acl_drop_mask);" in body
    assert "EXEC_NPU_CMD(aclnnFlashAttentionScoreGrad, query, key, value, dy, pse, " \
           "acl_drop_mask, " in body
    # was: `sink` fed dropMaskOptional by position
    assert "<- framework `sink` (const c10::optional<at::Tensor>&): matched by position" \
        not in body


def _parts():
    entry = load_rules().drop_mask_for("aclnnFlashAttentionScore")
    gen = aclnn_api("aclnnDropoutGenMaskV2", ("shape", "const aclIntArray*", "input"),
                    ("prob", "double", "input"), ("seed", "int64_t", "input"),
                    ("offset", "int64_t", "input"), ("probDataType", "aclDataType", "input"),
                    ("out", "aclTensor*", "output"))
    fwp = [fw_param(n, "tensor") for n in ("query", "key")] + [
        fw_param("head_num", "int"), fw_param("input_layout", "str"),
        fw_param("actual_seq_qlen", "int_list"), fw_param("actual_seq_kvlen", "int_list"),
        fw_param("keep_prob", "float"), fw_param("dropout_mask", "tensor", optional=True),
        fw_param("seed", "int"), fw_param("offset", "int")] + [
        fw_param(n, "int", origin="return", is_output=True) for n in ("seed_", "offset_", "numels")]
    return entry, gen, fwp


def test_plan_needs_the_values_the_entry_names():
    entry, gen, fwp = _parts()
    p = plan(entry, gen, {"dropMaskOptional"}, fwp, "query")
    assert p is not None and p.draws and p.given == "dropout_mask"
    # no keep probability, no mask parameter, or a value the shape rule reads: nothing
    assert plan(entry, gen, {"dropMaskOptional"},
                [f for f in fwp if f.name != "keep_prob"], "query") is None
    assert plan(entry, gen, {"paddingMaskOptional"}, fwp, "query") is None
    assert plan(entry, gen, {"dropMaskOptional"},
                [f for f in fwp if f.name != "head_num"], "query") is None
    # a mask API of another signature is not called
    other = aclnn_api("aclnnDropoutGenMask", ("shape", "const aclIntArray*", "input"),
                      ("prob", "double", "input"), ("out", "aclTensor*", "output"))
    assert plan(entry, other, {"dropMaskOptional"}, fwp, "query") is None
    # an API that takes the seed and offset draws its own dropout (aclnnFlashAttentionScoreV4,
    # which upstream calls on Ascend950 with no generated mask)
    assert plan(entry, gen, {"dropMaskOptional"}, fwp, "query",
                {"dropMaskOptional", "seed", "offset"}) is None


def test_a_drop_mask_entry_missing_a_key_is_refused():
    with pytest.raises(OpscanError, match=r"drop_masks\[0\] \(\^aclnnX\$\): needs exactly"):
        parse({"aliases": [], "rules": [], "drop_masks": [{"apis": "^aclnnX$"}]})


def test_sink_with_sequence_lengths_calls_varlen_v5(db):
    """FlashAttentionKernelNpuOpApi.cpp (:1512-1531): `sink` with actual_seq_qlen/kvlen calls
    aclnnFlashAttentionVarLenScoreV5 with undefined rope tensors and softmaxOutLayout
    "same_as_input" for softmax_layout "TND" (reviewed rules query_rope, key_rope,
    softmax_out_layout). Before, no rule gave those values, so V5 was no candidate and
    ours called VarLenScore, dropping `sink`."""
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    body = _fn(r.files[ADAPTER.format("NpuFusionAttention")], "int64_t> npu_fusion_attention(")
    cond = "if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value() && sink.has_value()) {"
    i = body.index(cond)
    j = body.index("} else if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value()) {")
    v5 = body[i:j]
    assert "at::Tensor acl_query_rope;" in v5 and "at::Tensor acl_key_rope;" in v5
    assert ('std::string acl_softmax_out_layout_str = std::string(softmax_layout) == "TND" ? '
            '"same_as_input" : std::string(softmax_layout);') in v5
    assert ("EXEC_NPU_CMD(aclnnFlashAttentionVarLenScoreV5, query, acl_query_rope, key, "
            "acl_key_rope, value, pse, acl_drop_mask, padding_mask, atten_mask, sink, prefix, "
            "actual_seq_qlen, actual_seq_kvlen, acl_q_start_idx_optional, "
            "acl_kv_start_idx_optional, scale, keep_prob, pre_tockens, next_tockens, head_num, "
            "acl_input_layout, inner_precise, sparse_mode, acl_pse_type, acl_softmax_out_layout, "
            "softmax_max, softmax_sum, softmax_out, attention_score);") in v5


def test_softmax_layout_with_sequence_lengths_calls_varlen_v4(db):
    """FlashAttentionKernelNpuOpApi.cpp (:1539-1557): with the lengths and no `sink`,
    `softmax_layout` "TND" calls aclnnFlashAttentionVarLenScoreV4 (softmaxOutLayout
    "same_as_input"), an empty one VarLenScore. V4 takes the same optional inputs as
    VarLenScore; what selects it is the empty-default string its reviewed rule reads
    (`_optional_input_branches` `empty_strings`). Before, V4 was never called and
    `softmax_layout` was left unused (a TODO)."""
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    body = _fn(r.files[ADAPTER.format("NpuFusionAttention")], "int64_t> npu_fusion_attention(")
    conds = [line.strip() for line in body.splitlines()
             if line.startswith(("    if (actual", "    } else"))]
    assert conds == [
        "if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value() && sink.has_value()) {",
        "} else if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value() && "
        "!softmax_layout.empty()) {",
        "} else if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value()) {",
        "} else if (sink.has_value()) {",
        "} else {"]
    i = body.index("!softmax_layout.empty()) {")
    v4 = body[i:body.index("} else if", i)]
    assert "EXEC_NPU_CMD(aclnnFlashAttentionVarLenScoreV4, " in v4
    assert "acl_softmax_out_layout, softmax_max" in v4
    assert "framework param `softmax_layout`" not in body


def test_values_the_mask_accounts_for_leave_no_todo(db):
    """`seed`/`offset` start the returned pair, and `gen_mask_parallel`/`sync` only place
    the mask on another stream upstream (`scheduling` in the entry): no "not passed" TODO
    for them, and the comment says the mask is generated on the current stream."""
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    assert r.todos == []
    text = r.files[ADAPTER.format("NpuFusionAttention")]
    assert ("`gen_mask_parallel`, `sync` only place it on another stream upstream (same "
            "results): generated on the current stream here") in text
