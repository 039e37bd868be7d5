"""Paddle kernel bodies against upstream PaddleCustomDevice (issue 9): outputs in the
dtype InferMeta set, list members upstream skips, the variant a phi kernel calls."""
from __future__ import annotations

import re

from codegen.api import prepare
from codegen.paddle_target import build_paddle_kernel, params_from_signature
from opdb.model import FrameworkOp, Source

KERNEL = "in-tree/backends/npu/kernels/{}_kernel.cc"


def _op(name: str, signature: str, kind: str = "forward") -> FrameworkOp:
    return FrameworkOp("paddle", name, Source("test", "", "", ""), schema=signature,
                       params=params_from_signature(signature), kind=kind)


def test_outputs_take_the_dtype_infermeta_set(db):
    # PaddleCustomDevice AddKernel allocates float for float32 x + float16 y; that is the
    # dtype ElementwiseRawInferMeta promotes to, so every output is allocated with it
    r = prepare(db, "aclnnAdd", "paddle", op="add", layout="in-tree")
    text = r.files[KERNEL.format("add")]
    assert "opgen_alloc<T>(dev_ctx, out);" in text
    assert "dev_ctx.template Alloc<T>(out)" not in text
    assert "phi::DataType dtype = out->dtype();" in text  # the helper: InferMeta's, else T
    assert "EXEC_NPU_CMD(aclnnAdd, dev_ctx, x, y, acl_alpha, *out);" in text


def test_inplace_api_for_a_phi_kernel_calls_the_out_of_place_variant(db):
    # `add_` runs the `add` kernel with out sharing x: upstream AddKernel calls aclnnAdd
    # and writes `out`; aclnnInplaceAdd would write the input x and leave out unset
    r = prepare(db, "aclnnInplaceAdd", "paddle", op="add", layout="in-tree")
    text = r.files[KERNEL.format("add")]
    assert "EXEC_NPU_CMD(aclnnAdd, dev_ctx, x, y, acl_alpha, *out);" in text
    assert "aclnnInplaceAdd," not in text and not r.todos


def test_concat_skips_members_without_elements(db):
    op = _op("concat", "void ConcatKernel(const Context& dev_ctx, const std::vector<const "
                       "DenseTensor*>& x, const Scalar& axis, DenseTensor* out)")
    k = build_paddle_kernel(db.aclnn_api("aclnnCat"), op)
    tensors = next(a for a in k["args"] if a.aclnn_name == "tensors")
    assert tensors.decision == "rule" and tensors.expr == "acl_tensors"
    assert "  if (member && member->numel() > 0) acl_tensors.push_back(member);" in tensors.prelude
    assert "for (const phi::DenseTensor* member : x) {" in tensors.prelude
    # aclnnCat takes a negative dim ([-N, N-1], aclnnCat.md): passed as is
    dim = next(a for a in k["args"] if a.aclnn_name == "dim")
    assert dim.prelude == ["int64_t acl_dim = static_cast<int64_t>(axis.to<int64_t>());"]
    assert not k["unused"]


def test_lists_whose_members_all_count_are_not_filtered(db):
    # a reviewed rule scoped to the APIs that concatenate or sum their members: an
    # element-wise list API (aclnnForeachAbs) passes the list unchanged
    op = _op("foreach_abs", "void ForeachAbsKernel(const Context& dev_ctx, const "
                            "std::vector<const DenseTensor*>& x, std::vector<DenseTensor*> out)")
    k = build_paddle_kernel(db.aclnn_api("aclnnForeachAbs"), op)
    x = next(a for a in k["args"] if a.aclnn_name == "x")
    assert x.decision == "name" and x.expr == "x" and not x.prelude


def test_sum_passes_keep_dim_and_allocates_the_out_dtype(db):
    # PaddleCustomDevice reduce_sum_kernel.cc SumKernel: Alloc by out->dtype() (the
    # `dtype` attribute InferMeta applied), aclnnReduceSum(keepDims <- keep_dim)
    r = prepare(db, "aclnnReduceSum", "paddle", op="sum", layout="in-tree")
    text = r.files[KERNEL.format("sum")]
    assert "opgen_alloc<T>(dev_ctx, out);" in text
    call = next(line for line in text.splitlines() if "EXEC_NPU_CMD(aclnnReduceSum" in line)
    assert ", acl_keep_dims_or_0d, " in call and "keep_dim" not in " ".join(r.todos)
    # keep_dim as given; true for a 0-d x (zero_dim_views: x and out go as [1])
    assert "bool acl_keep_dims_or_0d = keep_dim || acl_zero_dim;" in text
    # sum's `dtype` attribute is UNDEFINED unless given: then out's (InferMeta's) dtype
    assert ("ConvertToNpuDtype(out_dtype == phi::DataType::UNDEFINED ? out->dtype() : out_dtype)"
            in text)


def test_an_aclnn_output_never_writes_a_read_only_framework_tensor(db):
    # softmax_grad reads the forward `out`; aclnnSoftmaxBackward writes its `out`: the same
    # name is no match (the write goes to x_grad, never into a const input). `output` is
    # an input here, as the gradient formula reads it (opdb's catalog marks it output:
    # an extraction error, see docs/opgen.md)
    op = _op("softmax_grad", "void SoftmaxGradKernel(const Context& dev_ctx, const DenseTensor& "
                             "out, const DenseTensor& out_grad, int axis, DenseTensor* x_grad)", "backward")
    from opdb.model import AclnnApi, Param
    api = AclnnApi("aclnnSoftmaxBackward", (
        Param("gradOutput", "const aclTensor*", "input"), Param("output", "const aclTensor*", "input"),
        Param("dim", "int64_t", "input"), Param("out", "aclTensor*", "output")),
        Source("test", "", "", ""))
    k = build_paddle_kernel(api, op)
    # each tensor goes through a 0-d view and a float64 -> float32 copy (paddle_callsite);
    # what matters here is which framework tensor each one starts from
    src = {a.aclnn_name: re.search(r"phi::DenseTensor acl_\w+_1d\(([^)]*)\);",
                                   "\n".join(a.prelude)) for a in k["args"]}
    assert {n: m.group(1) for n, m in src.items() if m} == {
        "gradOutput": "out_grad", "output": "out", "out": "x_grad_tensor"}
    assert [a.expr for a in k["args"]] == ["acl_grad_output_float32", "acl_output_float32",
                                           "acl_dim", "acl_out_float32"]


def test_shipped_roles_of_gradient_apis_read_the_forward_result():
    # opdb/sources/cann/role_fixes.json: the `output` of these grad APIs is read
    from opdb.query import OpDB
    db = OpDB.open(overlay=False)
    for name in ("aclnnSoftmaxBackward", "aclnnLogSoftmaxBackward", "aclnnSigmoidBackward",
                 "aclnnTanhBackward"):
        roles = {p.name: p.role for p in db.aclnn_api(name).params}
        assert roles["output"] == "input", name


def test_conv_nhwc_goes_as_nchw_views_and_asymmetric_padding_as_four_values(db):
    # aclnnConvolution takes NCL/NCHW/NCDHW only, strided views allowed (its docs); 4
    # paddings are up, down, left, right (aclnn_convolution.cpp), Paddle's order
    r = prepare(db, "aclnnConvolution", "paddle", op="conv2d", layout="in-tree")
    text = r.files[KERNEL.format("conv2d")]
    for v, src in (("acl_input_nchw", "input"), ("acl_output_nchw", "*out")):
        assert f"phi::DenseTensor {v}({src});" in text
        assert f"{v}.set_strides(phi::make_ddim({{{v}_d[1] * {v}_d[2] * {v}_d[3], 1, " in text
    assert 'if (data_format == "NHWC" && acl_input_nchw.dims().size() == 4) {' in text
    # the views (float64 additionally goes through a float32 copy: compute_as)
    assert "opgen_compute_as(dev_ctx, acl_input_nchw, " in text
    assert "opgen_compute_as(dev_ctx, filter, " in text
    assert "opgen_compute_as(dev_ctx, acl_output_nchw, " in text
    assert "EXEC_NPU_CMD(aclnnConvolution, dev_ctx, acl_input_float32, acl_weight_float32," in text
    assert ", acl_output_float32, acl_cube_math_type);" in text
    assert "opgen_cast_back(dev_ctx, acl_output_float32, &acl_output_nchw);" in text
    assert "filter_nchw" not in text  # Paddle's NHWC conv keeps the filter [M, C/g, kH, kW]
    assert ("  acl_padding.assign(acl_padding_pad.begin(), acl_padding_pad.end());"
            "  // asymmetric: top, bottom, left, right") in text


def test_channel_first_table_is_validated():
    import pytest
    from opdb.arg_rules import parse
    from opdb.errors import ParseError
    with pytest.raises(ParseError, match=r"channel_first\[0\] \(x\): needs exactly"):
        parse({"channel_first": [{"apis": "x", "params": [], "attr": "data_format",
                                  "evidence": "e"}]})


def test_conv_grad_views_its_gradients_too(db):
    op = _op("conv2d_grad", "void ConvGradKernel(const Context& dev_ctx, const DenseTensor& input, "
                            "const DenseTensor& filter, const DenseTensor& out_grad, "
                            "const std::vector<int>& strides, const std::vector<int>& paddings, "
                            "const std::string& padding_algorithm, const std::vector<int>& dilations, "
                            "int groups, const std::string& data_format, DenseTensor* input_grad, "
                            "DenseTensor* filter_grad)", "backward")
    k = build_paddle_kernel(db.aclnn_api("aclnnConvolutionBackward"), op)
    # phi registers conv2d_grad for double on GPU (opdb/sources/paddle/phi_kernels.jsonl),
    # which aclnnConvolutionBackward lacks on the chip: each tensor is then computed as
    # float32 (compute_as), the cast wrapping the channel-first view
    assert k["compute_as"] == ["float64"]
    args = {a.aclnn_name: a for a in k["args"]}
    for name, view, src in (("gradOutput", "acl_grad_output_nchw", "out_grad"),
                            ("input", "acl_input_nchw", "input"),
                            ("gradInput", "acl_grad_input_nchw", "input_grad_tensor")):
        assert args[name].prelude[0].startswith(f"phi::DenseTensor {view}({src});"), name
        assert any(f"opgen_compute_as(dev_ctx, {view}," in line
                   for line in args[name].prelude), name
    assert "opgen_compute_as(dev_ctx, filter," in args["weight"].prelude[0]
    assert "opgen_compute_as(dev_ctx, filter_grad_tensor," in args["gradWeight"].prelude[0]


def test_pool2d_avg_reads_global_adaptive_padding_algorithm_and_nhwc():
    # the shipped opdb (the fixture has no pooling): pool2d_kernel.cc's attribute handling
    from opdb.query import OpDB
    r = prepare(OpDB.open(overlay=False), "aclnnAvgPool2d", "paddle", op="pool2d",
                layout="in-tree")
    text = r.files[KERNEL.format("pool2d")]
    fwd = text[text.index("void Pool2dKernel("):text.index("void Pool2dGradKernel(")]
    assert "acl_kernel_size = {acl_kernel_size_in[0], acl_kernel_size_in[1]};" in fwd
    assert "acl_strides[i] = acl_strides_in[i] / kernel_size.GetData()[i];" in fwd
    assert ("custom_kernel::UpdatePaddingAndDilation(&acl_paddings_pad, &acl_paddings_dil, "
            "padding_algorithm, acl_paddings_in, acl_paddings_s, acl_paddings_k);") in fwd
    assert "if (global_pooling || adaptive) std::fill(" in fwd
    assert 'PADDLE_ENFORCE_EQ(pooling_type == "avg", true,' in fwd
    assert "opgen_compute_as(dev_ctx, acl_self_nchw, " in fwd
    assert "opgen_compute_as(dev_ctx, acl_out_nchw, " in fwd
    assert "EXEC_NPU_CMD(aclnnAvgPool2d, dev_ctx, acl_self_float32, acl_kernel_size, acl_strides, " \
           "acl_paddings, ceil_mode, acl_count_include_pad," in fwd
    assert "acl_cube_math_type, acl_out_float32);" in fwd
    # the grad kernel: only the forward `out` is left (upstream reads only its dims)
    assert [t for t in r.todos if "TODO" in t] == [
        "TODO(opgen): framework param `out` (const phi::DenseTensor&) is not passed to "
        "aclnnAvgPool2dBackward: check whether the API needs it (or handle it in the body)"]


def test_adamw_kernel_rules_cover_what_the_api_does_not_do():
    from opdb.query import OpDB
    r = prepare(OpDB.open(overlay=False), "aclnnApplyAdamW", "paddle", op="adamw",
                layout="in-tree")
    text = r.files[KERNEL.format("adamw")]
    # skip_update: every state keeps its value, before anything is computed
    assert text.index("if (acl_skip_update_host.data<bool>()[0]) {") \
        < text.index("EXEC_NPU_CMD(aclnnApplyAdamW,")
    assert ("if (moment1_out && moment1_out->data() != moment1.data()) phi::Copy(dev_ctx, "
            "moment1, dev_ctx.GetPlace(), false, moment1_out);") in text
    # beta pows: registered for any backend -> device copies for the API; advanced after it
    assert "phi::Copy(dev_ctx, beta1_pow, dev_ctx.GetPlace(), false, &acl_beta1_pow_dev);" in text
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, acl_beta2_pow_out_in, acl_beta2_pow_out_factor, *beta2_pow_out);" in text
    assert text.index("EXEC_NPU_CMD(aclnnApplyAdamW,") < text.index("acl_beta1_pow_out_in;")
    # lr_ratio, with_decay; master weights refused rather than ignored
    assert "EXEC_NPU_CMD(aclnnMuls, dev_ctx, learning_rate, acl_lr_ratio, acl_lr);" in text
    assert "static_cast<T>(with_decay ? coeff : 0.0f)" in text
    # master weights (arg_rules.yaml master_weights): the update runs on master_param_outs
    # and param_out is its cast (PaddleCustomDevice adam_kernel.cc multi_precision)
    assert "PADDLE_ENFORCE_EQ(multi_precision" not in text
    assert "phi::DenseTensor acl_var_ref_master = *param_out;" in text
    assert "    phi::Copy(dev_ctx, *master_param, dev_ctx.GetPlace(), false, master_param_outs);" in text
    assert "  acl_var_ref_master = *master_param_outs;" in text
    assert "opgen_compute_as(dev_ctx, acl_var_ref_master, " in text
    assert "opgen_cast_back(dev_ctx, acl_var_ref_float32, param_out);" in text
    left = sorted(t.split("`")[1] for t in r.todos if "framework param" in t)
    assert left == ["lazy_mode", "min_row_size_to_use_multithread"]
    # amsgrad: aclnnApplyAdamW keeps the max in vRef, Paddle in moment2_max_out: refused
    assert "PADDLE_ENFORCE_EQ(amsgrad, false, phi::errors::Unimplemented(" in text


def test_kernel_rules_are_validated():
    import pytest
    from opdb.arg_rules import parse
    from opdb.errors import ParseError
    with pytest.raises(ParseError, match=r"kernel_rules\[0\] \(x_out\): needs `param`, `where`"):
        parse({"kernel_rules": [{"param": "x_out", "where": "during", "paddle": ["{var}"],
                                 "evidence": "e"}]})


def test_an_optional_input_registered_for_any_backend_is_passed_as_it_is(db):
    # flash_attn's fixed_seed_offset is ALL_BACKEND on the other backends but optional:
    # paddle::optional is converted by ConvertType itself (no device copy of a maybe-absent
    # tensor; the standalone build failed on one)
    r = prepare(db, "aclnnFlashAttentionScore", "paddle", op="flash_attn", layout="in-tree")
    text = r.files[KERNEL.format("flash_attn")]
    assert "acl_fixed_seed_offset_dev" not in text


def test_scalar_attribute_answers_to_its_name_without_the_scalar_suffix():
    # phi's topk takes `const Scalar& k_scalar`; aclnnTopk's `k` is that value
    # (PaddleCustomDevice top_k_kernel.cc: int k = k_scalar.to<int>())
    from opdb.model import AclnnApi, Param
    op = _op("topk", "void TopkKernel(const Context& dev_ctx, const DenseTensor& x, const Scalar& "
                     "k_scalar, int axis, bool largest, bool sorted, DenseTensor* out, "
                     "DenseTensor* indices)")
    api = AclnnApi("aclnnOpgenTopk", (
        Param("self", "const aclTensor*", "input"), Param("k", "int64_t", "input"),
        Param("dim", "int64_t", "input"), Param("largest", "bool", "input"),
        Param("sorted", "bool", "input"), Param("valuesOut", "aclTensor*", "output"),
        Param("indicesOut", "aclTensor*", "output")), Source("test", "", "", ""))
    k = build_paddle_kernel(api, op, framework_dtypes=("float32",))
    arg = next(a for a in k["args"] if a.aclnn_name == "k")
    assert arg.decision == "name"
    assert arg.prelude == ["int64_t acl_k = static_cast<int64_t>(k_scalar.to<int64_t>());"]
    assert not k["unused"]
    # a plain attribute named `..._scalar` (not a Scalar) does not
    op2 = _op("topk", "void TopkKernel(const Context& dev_ctx, const DenseTensor& x, int "
                      "k_scalar, int axis, bool largest, bool sorted, DenseTensor* out, "
                      "DenseTensor* indices)")
    k2 = build_paddle_kernel(api, op2, framework_dtypes=("float32",))
    assert next(a for a in k2["args"] if a.aclnn_name == "k").decision == "unmapped"


def test_relu_grad_threshold_pow_exponent_and_clip_bounds_come_from_reviewed_entries():
    # activation_kernel.cc ReluGradKernel: phi::Scalar threshold = 0.0; PowKernel passes its
    # factor as aclnnPowTensorScalar's exponent
    from opdb.query import OpDB
    db = OpDB.open(overlay=False)
    r = prepare(db, "aclnnThresholdBackward", "paddle", op="relu_grad", layout="in-tree")
    text = r.files[KERNEL.format("relu_grad")]
    assert "phi::Scalar acl_threshold = 0.0;" in text
    r = prepare(db, "aclnnPowTensorScalar", "paddle", op="pow", layout="in-tree")
    text = r.files[KERNEL.format("pow")]
    assert "EXEC_NPU_CMD(aclnnPowTensorScalar, dev_ctx, x, factor, *out);" in text
    assert not r.todos
    # clip_kernel.cc ClipKernel: aclnnClamp(x, min, max, *out)
    r = prepare(db, "aclnnClamp", "paddle", op="clip", layout="in-tree")
    assert "EXEC_NPU_CMD(aclnnClamp, dev_ctx, x, min, max, *out);" in r.files[KERNEL.format("clip")]
    assert not r.todos



def test_an_api_whose_tensors_lack_the_kernels_dtype_registers_the_kernels_own():
    # aclnnDropoutGenMask's only tensor is its uint8 mask, none of dropout's dtypes: the
    # registration was left with no dtype at all (a parse error in PaddleCustomDevice);
    # it now lists the kernel's own dtypes and says why
    from codegen.paddle_target import paddle_dtypes
    from opdb.model import Param
    from tests.codegen.paddle_kernel_parts import api, tensor

    gen_mask = api("aclnnDropoutGenMask", Param("shape", "const aclIntArray*", "input", ("int64",)),
                   Param("prob", "double"), tensor("out", "output", ("uint8",)))
    dtypes, why = paddle_dtypes(gen_mask, ("float32", "float16", "bfloat16", "float64"))
    assert dtypes and set(dtypes) == {"float32", "float16", "bfloat16", "float64"}
    assert why == ["`out` (uint8: none of the phi kernel's dtypes; its dtypes on the other "
                   "backends are registered)"]
    # an API whose tensors do carry them keeps the intersection, and no note
    add = api("aclnnAdd", tensor("self"), tensor("other"), tensor("out", "output"))
    assert paddle_dtypes(add, ("float32", "float64")) == (["float32"], [])
