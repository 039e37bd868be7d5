"""The sixth held-out paddle batch of docs/opgen.md (batch F): the mechanisms its first
pass was missing, asserted on the generated semantics. Each API here is the real aclnn
signature (hicann ops-math / ops-nn headers, as opdb has them) and each phi signature the
installed Paddle's; the upstream kernels are PaddleCustomDevice backends/npu/kernels at
77090b64."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

ANY_DTYPE = ("float32", "float16", "int32", "int64", "bool")

ALL = _api("aclnnAll", _t("self", dtypes=ANY_DTYPE), Param("dim", "const aclIntArray*", "input"),
           Param("keepdim", "bool", "input"), _t("out", "output", ("bool", "uint8")))
ALL_OP = _op("all", "void AllKernel(const Context& dev_ctx, const DenseTensor& x, "
                    "const std::vector<int64_t>& dims, bool keep_dim, DenseTensor* out)")


def test_an_output_aclnn_writes_only_as_bool_is_allocated_bool():
    # ReduceInferMeta copies x's dtype into out; aclnnAll writes BOOL/UINT8 only
    # (aclnn_all.cpp CheckDtypeValid) and Paddle's CPU all allocates bool. Before, a float
    # x got a float out, which aclnn rejects
    k = build_paddle_kernel(ALL, ALL_OP, framework_dtypes=("float32", "bool"))
    assert k["allocs"][0].startswith("dev_ctx.Alloc(out, phi::DataType::BOOL);")
    assert "aclnnAll writes `out` as bool/uint8 only" in k["allocs"][0]


def test_an_output_with_other_doc_dtypes_keeps_the_infermeta_dtype():
    relu = _api("aclnnRelu", _t("self"), _t("out", "output", ("float32", "bool")))
    op = _op("relu_like", "void ReluKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "DenseTensor* out)")
    assert build_paddle_kernel(relu, op, framework_dtypes=("float32",))["allocs"] == [
        "opgen_alloc<T>(dev_ctx, out);"]


SPLIT = _api("aclnnSplitWithSize", _t("self"), Param("splitSize", "const aclIntArray*", "input"),
             Param("dim", "int64_t", "input"),
             Param("out", "aclTensorList*", "output", ("float32", "float16", "bfloat16")))
SPLIT_OP = _op("split", "void SplitKernel(const Context& dev_ctx, const DenseTensor& x, "
                        "const IntArray& sections, const Scalar& axis, "
                        "std::vector<phi::DenseTensor*> out)")


def test_every_member_of_an_output_list_is_allocated():
    # split_kernel.cc allocates each outs[j] before aclnn; before, none was allocated
    k = build_paddle_kernel(SPLIT, SPLIT_OP, framework_dtypes=("float32",))
    assert "for (auto* out_i : out) opgen_alloc<T>(dev_ctx, out_i);" in k["allocs"]


def test_split_sizes_are_the_outputs_extents_along_the_dim():
    # split_kernel.cc passes the sections with -1 resolved: the dims SplitInferMeta gave
    # the outputs along axis. Before, splitSize (required) was a nullptr placeholder
    k = build_paddle_kernel(SPLIT, SPLIT_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["splitSize"].decision == "rule"
    pre = a["splitSize"].prelude
    assert pre[0].startswith("int64_t acl_split_size_dim = phi::Scalar(axis).to<int64_t>();")
    assert "if (acl_split_size_dim < 0) acl_split_size_dim += x.dims().size();" in pre
    assert ("for (auto* acl_split_size_o : out) "
            "acl_split_size.push_back(acl_split_size_o->dims()[acl_split_size_dim]);") in pre
    assert not any("placeholder" in t for t in _todos(k))


LOGSIGMOID_BWD = _api("aclnnLogSigmoidBackward", _t("gradOutput"), _t("self"), _t("buffer"),
                      _t("gradInput", "output"))
LOGSIGMOID_GRAD_OP = _op("logsigmoid_grad", "void LogSigmoidGradKernel(const Context& dev_ctx, "
                                            "const DenseTensor& x, const DenseTensor& dout, "
                                            "DenseTensor* dx)", "backward")


def test_required_buffer_is_a_zero_tensor_like_self():
    # activation_kernel.cc LogSigmoidGradKernel zero-fills a buffer with x's meta;
    # aclnn_logsigmoid_backward.cpp CheckNotNull rejects a null one (before: nullptr)
    k = build_paddle_kernel(LOGSIGMOID_BWD, LOGSIGMOID_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["buffer"].decision == "rule"
    assert a["buffer"].prelude[1:] == ["acl_buffer.set_meta(x.meta());",
                                       "dev_ctx.Alloc(&acl_buffer, acl_buffer.dtype());",
                                       "EXEC_NPU_CMD(aclnnInplaceZero, dev_ctx, acl_buffer);"]
    assert a["self"].expr == "x" and a["gradOutput"].expr == "dout"
    assert _todos(k) == []
