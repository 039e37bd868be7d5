"""torch adapters cover the op's schema family (`.out`, functional, in-place), size
their outputs with the op's own meta function, route a CPU 0-d `other` to the scalar
`...s` API as op-plugin does, and pick the API variant by the framework schema."""
from __future__ import annotations

from opdb.model import FrameworkOp, Source

from codegen import torch_facts
from codegen.api import prepare, render_adapter
from codegen.torch_target import schema_family
from codegen.variants import base_name, family, scalar_variant, versions

ADAPTER = "in-tree/op_plugin/ops/opapi/{}KernelNpuOpApi.cpp"


def test_schema_family_by_torchgen_naming(db):
    add = db.framework_op("torch", "aten::add.Tensor")
    fam = schema_family(db, add)
    assert {r: o.name for r, o in fam.items()} == {
        "out": "aten::add.out", "functional": "aten::add.Tensor", "inplace": "aten::add_.Tensor"}
    # from the in-place member the same family is found
    fam2 = schema_family(db, db.framework_op("torch", "aten::add_.Tensor"))
    assert {r: o.name for r, o in fam2.items()} == {r: o.name for r, o in fam.items()}


def test_api_variants(db):
    add = db.aclnn_api("aclnnAdd")
    assert {k: v.name for k, v in family(db, add).items() if k != "versions"} == {
        "base": "aclnnAdd", "scalar": "aclnnAdds", "inplace": "aclnnInplaceAdd",
        "inplace_scalar": "aclnnInplaceAdds"}
    assert scalar_variant(db, db.aclnn_api("aclnnAbs")) is None
    assert base_name("aclnnInplaceAddsV3") == "aclnnAdds"
    # newer versions only: never downgrade from the API upstream calls
    assert [a.name for a in versions(db, db.aclnn_api("aclnnAdd"))][:1] == ["aclnnAdd"]
    assert all(a.name != "aclnnAdd" for a in versions(db, db.aclnn_api("aclnnAddV3")))


def test_versioned_variant_picked_by_schema(db):
    """aten::gelu's `approximate` has no aclnnGelu parameter; aclnnGeluV2 takes it as a
    mode (op-plugin GeluOutKernelNpuOpApi.cpp: none 0, tanh 1)."""
    gelu = db.framework_op("torch", "aten::gelu")
    api = db.aclnn_api("aclnnGelu")
    r = render_adapter(api, gelu, "torch", "in-tree", variants=family(db, api))
    text = r.files[ADAPTER.format("Gelu")]
    assert 'int64_t acl_approximate = approximate == "tanh" ? 1 : 0;' in text
    assert "EXEC_NPU_CMD(aclnnGeluV2, self, acl_approximate, out);" in text
    assert "EXEC_NPU_CMD(aclnnGelu," not in text


def test_add_trio_with_meta_sizes_and_scalar_branches(db):
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor")
    text = r.files[ADAPTER.format("Add")]
    assert "at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, " \
           "const at::Scalar& alpha, at::Tensor& out)" in text
    assert "at::Tensor add(const at::Tensor& self, const at::Tensor& other, " \
           "const at::Scalar& alpha)" in text
    assert "at::Tensor& add_(at::Tensor& self, const at::Tensor& other, " \
           "const at::Scalar& alpha)" in text
    # broadcasting and type promotion: the functional op's meta function sizes `out`
    assert "auto meta = at::add(opgen_meta(self), opgen_meta(other), alpha);" in text
    # a wrapped-number `self` gives no device: the output takes `other`'s (add_dest_output)
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format(meta.sizes(), "
            "(self.dim() == 0 && !torch_npu::utils::is_npu(self) ? other : self).options()"
            ".dtype(meta.scalar_type()));") in text
    assert "npu_preparation::check_tensor({self, other}, out, out.scalar_type(), meta.sizes());" \
        in text
    # a CPU 0-d `other` goes to the scalar variants, as op-plugin's AddKernelNpuOpApi.cpp
    assert text.count("if (other.dim() == 0 && !torch_npu::utils::is_npu(other)) {") == 3
    assert "EXEC_NPU_CMD(aclnnAdds, self, other_scalar, alpha, out);" in text
    assert "EXEC_NPU_CMD(aclnnInplaceAdds, self, other_scalar, alpha);" in text
    assert "EXEC_NPU_CMD(aclnnInplaceAdd, self, other, alpha);" in text
    assert "TODO(opgen):" not in text and r.todos == []
    yaml = r.files["in-tree/op_plugin/config/op_plugin_functions.yaml.entry"]
    assert yaml.count("  - func: ") == 3 and "add_.Tensor(Tensor(a!) self" in yaml


def test_newer_version_taking_a_scalar_gets_a_guarded_branch(db):
    """aclnnAddV3 takes `self` as an aclScalar: a CPU 0-d `self` calls it when the
    kernel exists at run time and the output dtype is in its doc's list, else the
    number is copied to the device for aclnnAdd (op-plugin AddKernelNpuOpApi.cpp).
    Nothing is keyed on the name: the branch comes from the variant's signature."""
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor")
    text = r.files[ADAPTER.format("Add")]
    assert text.count('static const bool addv3_available = '
                      'check_aclnn_kernel_available("aclnnAddV3");') == 2  # add, add_out
    assert text.count("} else if (self.dim() == 0 && !torch_npu::utils::is_npu(self) && "
                      "addv3_available && (out.scalar_type() == at::kBFloat16") == 2
    assert text.count("EXEC_NPU_CMD(aclnnAddV3, self_scalar, other, alpha, out);") == 2
    assert text.count("at::Tensor self_device = npu_preparation::copy_scalar_to_device("
                      "self.item(), at::result_type(self, other), out.device());") == 2
    assert text.count("EXEC_NPU_CMD(aclnnAdd, self_device, other, alpha, out);") == 2
    # `other` is checked first, as upstream; the run-time check replaces DO_COMPATIBILITY
    assert text.index("aclnnAdds, self, other_scalar") < text.index("aclnnAddV3, self_scalar")
    assert "DO_COMPATIBILITY(aclnnAddV3" not in text
    # the in-place op has no scalar `self`: no V3 branch there
    inplace = text[text.index("at::Tensor& add_("):]
    assert "aclnnAddV3" not in inplace and "aclnnInplaceAddV3" not in inplace


def test_wrapped_number_without_a_variant_is_copied_to_the_device():
    """aclnnMul has aclnnMuls for `other` and no version taking `self` as a scalar:
    a CPU 0-d `self` is copied to the device (op-plugin MulKernelNpuOpApi.cpp
    self_tensor_to_device); the in-place op never gets the branch. (The shipped
    snapshot: the codegen subset has no Mul.)"""
    from opdb.query import OpDB
    db = OpDB.open(overlay=False)
    r = prepare(db, "aclnnMul", "torch", op="aten::mul.Tensor")
    text = r.files[ADAPTER.format("Mul")]
    assert text.count("} else if (self.dim() == 0 && !torch_npu::utils::is_npu(self)) {") == 2
    assert text.count("EXEC_NPU_CMD(aclnnMul, self_device, other, out);") == 2
    assert text.count("EXEC_NPU_CMD(aclnnMuls, self, other_scalar, out);") == 2
    assert "self_device" not in text[text.index("at::Tensor& mul_("):]
    # an op with no scalar variant gets no such branch
    idx = prepare(db, "aclnnIndexSelect", "torch", op="aten::index_select")
    assert "_device = npu_preparation::copy_scalar_to_device" not in \
        idx.files[ADAPTER.format("IndexSelect")]


def test_scalar_schema_picks_the_scalar_api(db):
    src = Source("test", "2.13.0")
    op = FrameworkOp("torch", "aten::add.Scalar", src,
                     schema="aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
    api = db.aclnn_api("aclnnAdd")
    r = render_adapter(api, op, "torch", "in-tree", variants=family(db, api))
    text = r.files[ADAPTER.format("Add")]
    assert "EXEC_NPU_CMD(aclnnAdds, self, other, alpha, out);" in text
    assert "EXEC_NPU_CMD(aclnnAdd," not in text


def test_cat_takes_itensorlistref_and_sizes_from_meta(db):
    assert torch_facts.structured_group("aten::cat") is True
    assert torch_facts.structured_group("aten::index_select") is False
    r = prepare(db, "aclnnCat", "torch", op="aten::cat")
    text = r.files[ADAPTER.format("Cat")]
    assert "at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim)" in text
    assert "auto meta = at::cat(opgen_meta(tensors), dim);" in text
    assert "at::TensorList acl_tensors(acl_tensors_vec);" in text


def test_legacy_empty_tensors_dropped_and_dim_wrapped(db):
    """aten::cat ignores legacy empty 1-d tensors (probed on Meta tensors, so
    aten::stack, which rejects them, is left alone); op-plugin CatKernelNpuOpApi.cpp
    drops them before aclnnCat and wraps `dim` against the first kept tensor."""
    assert torch_facts.skips_legacy_empty("aten::cat") is True
    assert torch_facts.skips_legacy_empty("aten::stack") is False
    assert torch_facts.skips_legacy_empty("aten::index_select") is False
    r = prepare(db, "aclnnCat", "torch", op="aten::cat")
    text = r.files[ADAPTER.format("Cat")]
    assert text.count("if (t.dim() == 1 && t.size(0) == 0) {") == 2  # cat, cat_out
    assert text.count("dim = c10::maybe_wrap_dim(dim, acl_tensors_vec.front().dim());") == 2
    assert text.count("if (acl_tensors_vec.empty()) {\n        return out;") == 2
    assert text.count("EXEC_NPU_CMD(aclnnCat, acl_tensors, dim, out);") == 2
    stack = db.framework_op("torch", "aten::stack")
    if stack is not None and db.aclnn_api("aclnnStack") is not None:
        st = prepare(db, "aclnnStack", "torch", op="aten::stack").files[ADAPTER.format("Stack")]
        assert "maybe_wrap_dim" not in st and "legacy empty" not in st


def test_without_a_meta_function_the_todo_says_so(db):
    src = Source("test", "2.13.0")
    op = FrameworkOp("torch", "npu::npu_opgen_no_meta", src,
                     schema="npu::npu_opgen_no_meta(Tensor self) -> Tensor")
    assert torch_facts.meta_kernel(op.name) is None
    api = db.aclnn_api("aclnnAbs")
    r = render_adapter(api, op, "torch", "in-tree", variants=family(db, api))
    assert any("no meta function is known" in t for t in r.todos)


def test_npu_op_sized_by_torch_npus_meta_registration(db):
    """npu:: ops have no at:: function and no meta in torch; torch_npu registers Python
    Meta kernels (opdb/sources/torch_npu/2.13.0/meta_registrations.json, from the
    wheel's _meta_registrations.py): the adapter calls the op by name through the
    dispatcher on Meta tensors, and the meta function's return names name the outputs,
    so the aclnn outputs map by name (attentionOut <- attention_score by alias)."""
    reg = torch_facts.npu_meta_registration("npu::npu_fusion_attention")
    assert reg is not None and reg.returns == ("attention_score", "softmax_max", "softmax_sum",
                                               "softmax_out", "seed", "offset", "numels")
    assert torch_facts.meta_kernel("npu::npu_fusion_attention") is True
    r = prepare(db, "aclnnFlashAttentionScore", "torch", op="npu::npu_fusion_attention")
    text = r.files[ADAPTER.format("NpuFusionAttention")]
    assert "#include <ATen/core/dispatch/Dispatcher.h>" in text
    assert ('auto meta = c10::Dispatcher::singleton().findSchemaOrThrow('
            '"npu::npu_fusion_attention", "").typed<std::tuple<at::Tensor, at::Tensor, '
            'at::Tensor, at::Tensor, int64_t, int64_t, int64_t>(const at::Tensor&, ') in text
    assert ("at::Tensor softmax_max = npu_preparation::apply_tensor_without_format("
            "std::get<1>(meta).sizes(), query.options().dtype(std::get<1>(meta).scalar_type()));"
            ) in text
    # inputs returned under their own name pass through; numels has no source (the codegen
    # fixture subset has no aclnnDropoutGenMaskV2, so no dropout mask is generated: the
    # shipped opdb's render is in test_torch_drop_mask.py)
    assert "int64_t seed_ = seed;" in text and "int64_t offset_ = offset;" in text
    assert any("`numels`" in t for t in r.todos)
    assert ("EXEC_NPU_CMD(aclnnFlashAttentionScore, query, key, value, pse, dropout_mask, "
            "padding_mask, atten_mask, prefix, scale, keep_prob, pre_tockens, next_tockens, "
            "head_num, acl_input_layout, inner_precise, sparse_mode, softmax_max, softmax_sum, "
            "softmax_out, attention_score);") in text
    assert not any("matched by" in t for t in r.todos)
    # `sink` is not an aclnnFlashAttentionScore param; the newer V3 takes it by name:
    # upstream's branch, failing clearly on a CANN without V3 (pse_type 1 by rule)
    assert "    if (sink.has_value()) {" in text
    assert ('TORCH_CHECK(check_aclnn_kernel_available("aclnnFlashAttentionScoreV3"), '
            '"`sink` needs aclnnFlashAttentionScoreV3') in text
    assert ("EXEC_NPU_CMD(aclnnFlashAttentionScoreV3, query, key, value, pse, dropout_mask, "
            "padding_mask, atten_mask, sink, prefix, acl_q_start_idx_optional, "
            "acl_kv_start_idx_optional, scale, keep_prob, pre_tockens, next_tockens, head_num, "
            "acl_input_layout, inner_precise, sparse_mode, acl_pse_type, softmax_max, "
            "softmax_sum, softmax_out, attention_score);") in text
    assert "int64_t acl_pse_type = 1;" in text
    assert not any("`sink`" in t or "q_start_idx" in t or "pseType" in t for t in r.todos)
    assert "DO_COMPATIBILITY(aclnnFlashAttentionScoreV3" not in text


def test_int_lists_are_widened_as_upstream(db):
    """op-plugin's convolution repeats a 1-element stride/padding/dilation/output_padding
    per spatial dim (weight.dim() - 2), reviewed in arg_rules.yaml `expansions`."""
    r = prepare(db, "aclnnConvolution", "torch", op="aten::convolution", layout="in-tree")
    text = r.files["in-tree/op_plugin/ops/opapi/ConvolutionKernelNpuOpApi.cpp"]
    for name in ("stride", "padding", "dilation", "output_padding"):
        assert f"c10::SmallVector<int64_t, 8> acl_{name}_vec({name}.begin(), {name}.end());" in text
        assert (f"    acl_{name}_vec.assign(static_cast<size_t>(weight.dim() - 2), "
                f"acl_{name}_vec[0]);") in text


def test_fixed_size_list_and_empty_stride():
    """A torch `int[2]` of one element fills both (ATen's meaning); an empty pooling
    stride is kernel_size (op-plugin AvgPool2dKernelNpuOpApi.cpp)."""
    from opdb.model import Param
    from codegen.argmap import FwParam, MappedParam
    from codegen.torch_target import TorchDialect

    fw = FwParam("stride", "int_array", "at::IntArrayRef", length=2)
    p = MappedParam(Param("strides", "const aclIntArray*"), "int_array", False, fw, "alias")
    lines = TorchDialect({"self", "kernel_size", "stride"}).convert(p, "self").prelude
    assert lines == [
        "c10::SmallVector<int64_t, 8> acl_strides_vec(stride.begin(), stride.end());",
        "if (acl_strides_vec.empty()) {  // empty: kernel_size (op-plugin "
        "op_plugin/ops/opapi/AvgPool2dKernelNpuOpApi.cpp)",
        "    acl_strides_vec.assign(kernel_size.begin(), kernel_size.end());", "}",
        "if (acl_strides_vec.size() == 1) {  // one value for every element",
        "    acl_strides_vec.assign(static_cast<size_t>(2), acl_strides_vec[0]);", "}",
        "at::IntArrayRef acl_strides(acl_strides_vec);"]
    # without kernel_size among the values, and no fixed size: passed as it is
    plain = FwParam("pad", "int_array", "at::IntArrayRef")
    p = MappedParam(Param("pad", "const aclIntArray*"), "int_array", False, plain, "name")
    assert TorchDialect({"self", "pad"}).convert(p, "self").expr == "pad"


def test_unnamed_returns_are_named_by_their_backward(db):
    """derivatives.yaml passes native_layer_norm's result1/result2 to
    native_layer_norm_backward as `mean`/`rstd`: the functional's fresh outputs and the
    `.out` variant's out1/out2 match aclnn's meanOut/rstdOut by name, with no TODO."""
    assert torch_facts.return_names("aten::native_layer_norm") == {1: "mean", 2: "rstd"}
    assert torch_facts.return_names("aten::max_pool2d_with_indices") == {1: "indices"}
    assert torch_facts.return_names("aten::add.Tensor") == {}
    r = prepare(db, "aclnnLayerNorm", "torch", op="aten::native_layer_norm", layout="in-tree")
    text = r.files["in-tree/op_plugin/ops/opapi/NativeLayerNormKernelNpuOpApi.cpp"]
    assert "EXEC_NPU_CMD(aclnnLayerNorm, input, normalized_shape, weight, bias, eps, " \
           "out0, mean, rstd);" in text
    assert r.todos == []
    from codegen.kinds import parse_torch_schema
    from codegen.torch_target import fw_params
    out = parse_torch_schema(
        "aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
        "Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
        "(Tensor(a!), Tensor(b!), Tensor(c!))")
    assert [(f.name, f.meaning) for f in fw_params(out) if f.is_output] == \
        [("out0", ""), ("out1", "mean"), ("out2", "rstd")]
