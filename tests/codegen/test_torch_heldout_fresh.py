"""Mechanisms found by scoring the fourth held-out torch batch against op-plugin
517f2e7d (docs/opgen.md, "Fourth sample"): an unset dim list that torch reads as every
dim never reaches a required aclnn list as nullptr (probed on Meta tensors), reviewed
unset values for optional plain values pick the newer version that takes them, a
reviewed tensor rule fills an `...Optional` aclnn tensor whose docs want a value, and
aclnn APIs that write a read-only input in place (extracted from the CANN op_api
sources) get a copy of it. Each test names the upstream adapter that shows the
behaviour; none keys on an API name in code."""
from __future__ import annotations

import json
from pathlib import Path

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

ROOT = Path(__file__).resolve().parents[2]


def _body(db, api, op, stem, sig):
    r = prepare(db, api, "torch", op=op)
    return r, _fn(r.files[ADAPTER.format(stem)], sig)


def test_unset_dim_list_is_every_dim_for_a_required_aclnn_list(db):
    """op-plugin SumKernelNpuOpApi.cpp passes `dim.value_or({})` (every dim for
    aclnnReduceSum), MeanKernelNpuOpApi.cpp `get_dimlist_for_tensor(self)`,
    LinalgNormKernelNpuOpApi.cpp `opt_dim.value_or({})`. Before, the unset
    `OptionalIntArrayRef` went to ConvertType, which gives nullptr for a required `dims`."""
    assert torch_facts.unset_list_reduces_all("aten::sum.dim_IntList", "dim") is True
    assert torch_facts.unset_list_reduces_all("aten::linalg_vector_norm", "dim") is True
    # not a dim list, or not optional: no such reading
    assert torch_facts.unset_list_reduces_all("aten::upsample_nearest2d.vec", "output_size") is False
    assert torch_facts.unset_list_reduces_all("aten::amax", "dim") is False
    for api, op, stem, sig, call in (
            ("aclnnReduceSum", "aten::sum.dim_IntList", "Sum", "at::Tensor sum(",
             "EXEC_NPU_CMD(aclnnReduceSum, self, acl_dims, keepdim, acl_dtype, out);"),
            ("aclnnMean", "aten::mean.dim", "Mean", "at::Tensor mean(",
             "EXEC_NPU_CMD(aclnnMean, self, acl_dim, keepdim, acl_dtype, out);"),
            ("aclnnLinalgVectorNorm", "aten::linalg_vector_norm", "LinalgVectorNorm",
             "at::Tensor linalg_vector_norm(",
             "EXEC_NPU_CMD(aclnnLinalgVectorNorm, self, ord, acl_dims, keepdim, acl_dtype, out);")):
        _, body = _body(db, api, op, stem, sig)
        assert "if (dim.has_value()) {" in body, api
        assert "for (int64_t i = 0; i < self.dim(); ++i) {" in body, api
        assert call in body, api


def test_reviewed_unset_value_picks_the_version_that_takes_it(db):
    """op-plugin UpsampleNearest2dKernelOpApi.cpp: aclnnUpsampleNearest2dV2 with
    `scales_h.value_or(-1.0)`; before, aclnnUpsampleNearest2d was called and the scales
    were dropped (V2 tied with two 0-with-a-TODO guesses). The other upsample APIs take
    0 when unset (UpsampleBilinear2dKernelNpuOpApi.cpp `scales_h.value_or(0)`)."""
    r, body = _body(db, "aclnnUpsampleNearest2d", "aten::upsample_nearest2d", "UpsampleNearest2d",
                    "at::Tensor upsample_nearest2d(")
    assert "float acl_scales_h = static_cast<float>(scales_h.value_or(-1.0));" in body
    assert "EXEC_NPU_CMD(aclnnUpsampleNearest2dV2, self, acl_output_size, acl_scales_h, " \
           "acl_scales_w, out);" in body
    assert not r.todos
    r, body = _body(db, "aclnnUpsampleBilinear2d", "aten::upsample_bilinear2d",
                    "UpsampleBilinear2d", "at::Tensor upsample_bilinear2d(")
    assert "scales_h.value_or(0.0)" in body and "TODO" not in body


def test_reviewed_tensor_rule_fills_an_optional_aclnn_tensor(db):
    """aclnnLayerNormBackward's doc: when weightOptional is null a ones tensor of the
    normalized shape must be built; op-plugin LayerNormBackwardKernelNpuOpApi.cpp passes
    at::ones(normalized_shape, input.options()). An optional aclnn tensor with no rule
    (biasOptional) still passes the unset value."""
    _, body = _body(db, "aclnnLayerNormBackward", "aten::native_layer_norm_backward",
                    "NativeLayerNormBackward",
                    "std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(")
    assert "at::Tensor acl_weight_optional_unset = at::ones(normalized_shape, input.options());" \
           in body
    assert "EXEC_NPU_CMD(aclnnLayerNormBackward, grad_out, input, normalized_shape, mean, rstd, " \
           "acl_weight_optional, bias, output_mask, grad_input, grad_weight, grad_bias);" in body


def test_input_updates_extracted_from_the_cann_sources():
    """The extract names the in-place l0op call it read (repo, commit, path, line)."""
    rows = [json.loads(line) for line in
            (ROOT / "opdb/sources/cann/aclnn_input_updates.jsonl").read_text().splitlines()]
    by_api = {r["api"]: r for r in rows}
    assert by_api["aclnnIndexAdd"]["param"] == "self"
    assert by_api["aclnnIndexAdd"]["source"]["path"].endswith("aclnn_index_add.cpp")
    assert by_api["aclnnScatterAdd"]["param"] == "self"
    assert not any(a.startswith("aclnnInplace") for a in by_api)
    assert "aclnnIndexFill" not in by_api  # writes self only for its Inplace twin


def test_extractor_on_small_sources():
    """The extractor's two steps on hand-written op_api text: an l0op that launches its
    first input as output is in-place; a contiguous view (directly or through a helper)
    passed to it writes the API's input, unless a test for the in-place case comes first."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "extract_input_updates", ROOT / "opdb/sources/cann/extract_input_updates.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    l0 = """
const aclTensor* Bump(const aclTensor* self, const aclTensor* idx, aclOpExecutor* executor)
{
    auto res = const_cast<aclTensor*>(self);
    ADD_TO_LAUNCHER_LIST_AICORE(Bump, OP_INPUT(self, idx), OP_OUTPUT(res));
    return res;
}
const aclTensor* Fresh(const aclTensor* self, aclOpExecutor* executor)
{
    auto res = executor->AllocTensor(self->GetViewShape(), self->GetDataType());
    ADD_TO_LAUNCHER_LIST_AICORE(Fresh, OP_INPUT(self), OP_OUTPUT(res));
    return res;
}
"""
    assert mod.inplace_l0ops(l0) == {"Bump"}
    api = """
static const aclTensor* View(const aclTensor* x, aclOpExecutor* executor)
{
    auto xContiguous = l0op::Contiguous(x, executor);
    return xContiguous;
}
static aclnnStatus Run(const aclTensor* self, const aclTensor* idx, aclTensor* out, aclOpExecutor* executor)
{
    auto selfView = View(self, executor);
    auto res = l0op::Bump(selfView, idx, executor);
    return ACLNN_SUCCESS;
}
aclnnStatus aclnnBumpGetWorkspaceSize(const aclTensor* self, const aclTensor* idx, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return Run(self, idx, out, nullptr);
}
static aclnnStatus Guarded(const aclTensor* self, const aclTensor* idx, aclTensor* out, aclOpExecutor* executor)
{
    if (self->GetData() != out->GetData()) {
        return ACLNN_SUCCESS;
    }
    auto selfContiguous = l0op::Contiguous(self, executor);
    l0op::Bump(selfContiguous, idx, executor);
    return ACLNN_SUCCESS;
}
aclnnStatus aclnnSafeGetWorkspaceSize(const aclTensor* self, const aclTensor* idx, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return Guarded(self, idx, out, nullptr);
}
"""
    hit = mod.updates(api, "aclnnBump", {"self", "idx"}, {"Bump"})
    assert [(h["param"], h["l0op"]) for h in hit] == [("self", "Bump")]
    assert api.splitlines()[hit[0]["line"] - 1].strip().startswith("auto res = l0op::Bump(")
    assert mod.updates(api, "aclnnSafe", {"self", "idx"}, {"Bump"}) == []


def test_an_api_that_writes_its_input_gets_a_copy(db):
    """op-plugin IndexAddKernelNpuOpApi.cpp copies self into the result and passes the
    result as self and out (aclnnIndexAdd runs InplaceIndexAdd on self's contiguous
    view); ScatterAddKernelNpuOpApi.cpp works on a clone. Before, the caller's `self`
    went to aclnn and was overwritten; the in-place member then runs on the API with
    out = self."""
    for api, op, stem, fn, call, inplace in (
            ("aclnnIndexAdd", "aten::index_add", "IndexAdd", "at::Tensor index_add(",
             "EXEC_NPU_CMD(aclnnIndexAdd, out, dim, index, source, alpha, out);",
             "EXEC_NPU_CMD(aclnnIndexAdd, self, dim, index, source, alpha, out);"),
            ("aclnnScatterAdd", "aten::scatter_add", "ScatterAdd", "at::Tensor scatter_add(",
             "EXEC_NPU_CMD(aclnnScatterAdd, out, dim, index, src, out);",
             "EXEC_NPU_CMD(aclnnScatterAdd, self, dim, index, src, out);")):
        r = prepare(db, api, "torch", op=op)
        text = r.files[ADAPTER.format(stem)]
        body = _fn(text, fn)
        assert "if (!out.is_same(self)) {" in body and "out.copy_(self);" in body, api
        assert body.index("out.copy_(self);") < body.index(call), api
        inp = _fn(text, f"at::Tensor& {op.split('::')[1]}_(")
        assert "at::Tensor& out = self;" in inp and inplace in inp, api
    # an API the extract does not list passes its input unchanged
    _, body = _body(db, "aclnnIndexSelect", "aten::index_select", "IndexSelect",
                    "at::Tensor index_select(")
    assert "copy_(" not in body


def test_sibling_api_family_chosen_by_given_optional_inputs(db):
    """op-plugin FlashAttentionKernelNpuOpApi.cpp npu_fusion_attention calls
    aclnnFlashAttentionVarLenScore when actual_seq_qlen/kvlen are set. The sibling is
    found by signature (same op directory, every parameter of aclnnFlashAttentionScore
    and more), not by name; the layout goes upper-cased (reviewed rule, same file)."""
    from codegen.variants import siblings
    sibs = [a.name for a in siblings(db, db.aclnn_api("aclnnFlashAttentionScore"))]
    assert sibs[0] == "aclnnFlashAttentionVarLenScore"
    assert not any(s.startswith("aclnnFlashAttentionScoreV") for s in sibs)  # versions
    assert siblings(db, db.aclnn_api("aclnnAdd")) == []
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    body = _fn(r.files[ADAPTER.format("NpuFusionAttention")], "int64_t> npu_fusion_attention(")
    i = body.index("if (actual_seq_qlen.has_value() && actual_seq_kvlen.has_value()) {")
    j = body.index("} else if (sink.has_value()) {")
    assert i < j
    assert "EXEC_NPU_CMD(aclnnFlashAttentionVarLenScore, query, key, value, pse, acl_drop_mask, " \
           "padding_mask, atten_mask, prefix, actual_seq_qlen, actual_seq_kvlen, scale, " in body[i:j]
    assert 'check_aclnn_kernel_available("aclnnFlashAttentionVarLenScore")' in body[i:j]
    assert "std::toupper(" in body
    assert not any("actual_seq" in t for t in r.todos)


def test_reviewed_unset_value_of_an_optional_scalar(db):
    """op-plugin StdKernelNpuOpApi.cpp / VarKernelNpuOpApi.cpp: an unset `correction` is 1
    (ATen's meaning: Bessel's correction). Before, 0 with a TODO: population std."""
    for api, op, stem, sig in (("aclnnStd", "aten::std.correction", "Std", "at::Tensor std("),
                               ("aclnnVarCorrection", "aten::var.correction", "Var",
                                "at::Tensor var(")):
        r, body = _body(db, api, op, stem, sig)
        assert "(correction.has_value() ? correction->toLong() : 1)" in body, api
        assert not [t for t in r.todos if "correction" in t], api


def test_inplace_pointwise_copies_a_cpu_scalar_operand(db):
    """In place, `self` is one operand: a CPU 0-d `other` of a pointwise op is copied to
    the device too (op-plugin Atan2KernelNpuOpApi.cpp atan2_ copies a CPU scalar
    `other`), in its own dtype; an Inplace...s variant takes it as a number instead."""
    r = prepare(db, "aclnnAddcmul", "torch", op="aten::addcmul")
    body = _fn(r.files[ADAPTER.format("Addcmul")], "at::Tensor& addcmul_(")
    assert "at::Tensor tensor1_device = tensor1.dim() == 0 && !torch_npu::utils::is_npu(tensor1)" \
           in body
    assert "EXEC_NPU_CMD(aclnnInplaceAddcmul, self, tensor1_device, tensor2_device, value);" in body
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor")
    body = _fn(r.files[ADAPTER.format("Add")], "at::Tensor& add_(")
    assert "other_device" not in body and "aclnnInplaceAdds" in body


def test_inout_without_ref_fed_by_a_read_only_tensor_is_an_input(db):
    """aclnnInplaceAtan2's header declares `aclTensor* other` (no const), so the catalog
    gives it role inout; fed by atan2_'s read-only `other` it is an input, and a CPU
    scalar `other` is copied to the device as op-plugin Atan2KernelNpuOpApi.cpp does."""
    assert [p.role for p in db.aclnn_api("aclnnInplaceAtan2").params] == ["inout", "inout"]
    r = prepare(db, "aclnnAtan2", "torch", op="aten::atan2")
    body = _fn(r.files[ADAPTER.format("Atan2")], "at::Tensor& atan2_(")
    assert "EXEC_NPU_CMD(aclnnInplaceAtan2, self, other_device);" in body
