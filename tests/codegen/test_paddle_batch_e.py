"""The fifth held-out paddle batch of docs/opgen.md (batch E): the mechanisms its first
pass was missing, asserted on the generated semantics. Each API here is the real aclnn
signature (hicann ops-math / ops-nn headers, as opdb has them) and each phi signature the
installed Paddle's; the upstream kernels are PaddleCustomDevice backends/npu/kernels at
77090b64."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import FLOATS
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos


ARGMAX = _api("aclnnArgMax", _t("self"), Param("dim", "int64_t", "input"),
              Param("keepdim", "bool", "input"), _t("out", "output", ("int32", "int64")))
ARGMAX_OP = _op("argmax", "void ArgMaxKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const Scalar& axis, bool keepdims, bool flatten, DataType dtype, "
                          "DenseTensor* out)")


def test_flatten_views_a_keepdims_output_as_1d():
    # ArgMinMaxInferMeta makes out [1, ..., 1] for flatten + keepdims, while aclnnArgMax on
    # the [numel] view gives [1] (aclnn_argmax.cpp CheckShapeAndScalarSame); upstream
    # arg_min_max_kernel.cc resizes out when flatten. Before, out went with x's rank
    a = _args(build_paddle_kernel(ARGMAX, ARGMAX_OP, framework_dtypes=("float32",)))
    out = a["out"]
    assert "phi::DenseTensor acl_out_flat(*out);" in out.prelude
    assert any(line.startswith("if (flatten && acl_out_flat.dims().size() > 1) "
                               "acl_out_flat.Resize(phi::make_ddim({acl_out_flat.numel()}));")
               for line in out.prelude)
    # the 0-d view still applies after it, and x is flattened first as before
    assert out.expr == "acl_out_1d" and "phi::DenseTensor acl_out_1d(acl_out_flat);" in out.prelude
    assert "phi::DenseTensor acl_self_flat(x);" in a["self"].prelude


def test_no_flatten_attribute_no_output_view():
    op = _op("argmax_noflat", "void ArgMaxKernel(const Context& dev_ctx, const DenseTensor& x, "
                              "const Scalar& axis, bool keepdims, DataType dtype, DenseTensor* out)")
    a = _args(build_paddle_kernel(ARGMAX, op, framework_dtypes=("float32",)))
    assert not any("_flat" in line for line in a["out"].prelude)


BCE_BWD = _api("aclnnBinaryCrossEntropyBackward", _t("gradOutput"), _t("self"), _t("target"),
               _t("weightOptional"), Param("reduction", "int64_t", "input"),
               _t("out", "output"))
BCE_GRAD_OP = _op("bce_loss_grad", "void BCELossGradKernel(const Context& dev_ctx, "
                                   "const DenseTensor& input, const DenseTensor& label, "
                                   "const DenseTensor& out_grad, DenseTensor* input_grad)",
                  "backward")


def test_loss_without_a_reduction_attribute_passes_none():
    # bce_loss_kernel.cc: int64_t reduction = 0 (none); before, a placeholder 0 with a TODO
    k = build_paddle_kernel(BCE_BWD, BCE_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["reduction"].decision == "rule"
    assert a["reduction"].prelude[0].startswith("int64_t acl_reduction = 0;  // none")
    assert a["weightOptional"].decision == "default"  # nullptr, as upstream
    assert not any("reduction" in t for t in _todos(k))


MSE = _api("aclnnMseLoss", _t("self"), _t("target"), Param("reduction", "int64_t", "input"),
           _t("out", "output"))
MSE_OP = _op("mse_loss_like", "void MseLossKernel(const Context& dev_ctx, const DenseTensor& "
                              "input, const DenseTensor& label, const std::string& reduction, "
                              "DenseTensor* out)")


def test_a_reduction_attribute_still_wins():
    a = _args(build_paddle_kernel(MSE, MSE_OP, framework_dtypes=("float32",)))
    assert "reduction == \"none\" ? 0" in a["reduction"].prelude[0]


ONE_HOT = _api("aclnnOneHot", _t("self", dtypes=("int32", "int64")),
               Param("numClasses", "int", "input"), _t("onValue"), _t("offValue"),
               Param("axis", "int64_t", "input"), _t("out", "output", ("float32",)))
ONE_HOT_OP = _op("one_hot", "void OneHotKernel(const Context& dev_ctx, const DenseTensor& x, "
                            "const Scalar& num_classes, DenseTensor* out)")


def test_one_hot_values_in_out_dtype_and_class_axis_last():
    # one_hot_kernel.cc: on/off value tensors [1] filled with 1/0, axis = -1; before, both
    # (required) were nullptr and axis a placeholder 0
    k = build_paddle_kernel(ONE_HOT, ONE_HOT_OP, framework_dtypes=("int32", "int64"))
    a = _args(k)
    on, off = a["onValue"], a["offValue"]
    assert on.decision == off.decision == "rule"
    assert ("acl_on_value.set_meta(phi::DenseTensorMeta(out->dtype(), phi::make_ddim({1})));"
            in on.prelude)
    assert "phi::Scalar acl_on_value_value = 1;" in on.prelude
    assert "phi::Scalar acl_off_value_value = 0;" in off.prelude
    assert any("aclnnInplaceFillScalar" in line for line in off.prelude)
    assert a["axis"].prelude[0].startswith("int64_t acl_axis = -1;")
    assert not _todos(k)


# the generic host-number route, under another name: aclnnLinspace itself now takes its
# reviewed arg_rules.yaml entries (start/stop converted to T, out sized to {num}; see
# tests/codegen/test_paddle_linspace_sizes.py)
LINSPACE = _api("aclnnLinspaceLike", Param("start", "const aclScalar*", "input"),
                Param("end", "const aclScalar*", "input"), Param("steps", "int64_t", "input"),
                _t("out", "output"))
LINSPACE_OP = _op("linspace", "void LinspaceKernel(const Context& dev_ctx, const DenseTensor& "
                              "start, const DenseTensor& stop, const DenseTensor& number, "
                              "DataType dtype, DenseTensor* out)")


def test_numbers_given_as_1_element_tensors_are_read_on_the_host():
    # linspace_kernel.cc reads start/stop/number with TensorToVector and passes
    # phi::Scalar / int64 to aclnnLinspace; before, all three were placeholders
    k = build_paddle_kernel(LINSPACE, LINSPACE_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["start"].expr == "acl_start_host"
    assert a["start"].prelude[0].startswith(
        "phi::Scalar acl_start_host = opgen_host_scalar(dev_ctx, start);")
    assert a["end"].decision == "alias" and "opgen_host_scalar(dev_ctx, stop)" in a["end"].prelude[0]
    assert a["steps"].expr == "acl_steps"
    assert "int64_t acl_steps = acl_steps_host.to<int64_t>();" in a["steps"].prelude
    assert k["host_scalar"]
    assert not any("placeholder" in t for t in _todos(k))


def test_host_scalar_helper_is_rendered_only_when_used():
    from codegen.api import render_adapter

    def kernel_file(api, op) -> str:
        files = render_adapter(api, op, "paddle", layout="in-tree")
        return next(v for k, v in files.files.items() if k.endswith(".cc"))

    assert "phi::Scalar opgen_host_scalar(const Context& dev_ctx" in kernel_file(LINSPACE, LINSPACE_OP)
    assert "opgen_host_scalar" not in kernel_file(ONE_HOT, ONE_HOT_OP)


def test_an_output_is_never_read_as_a_host_number():
    # only inputs are read on the host; an aclnn number never takes a phi output
    op = _op("linspace_out", "void LinspaceKernel(const Context& dev_ctx, const DenseTensor& "
                             "start, DenseTensor* stop, DenseTensor* out)")
    a = _args(build_paddle_kernel(LINSPACE, op, framework_dtypes=("float32",)))
    assert "opgen_host_scalar" not in "".join(a["end"].prelude)


INDEX_PUT = _api("aclnnIndexPutImpl", Param("selfRef", "aclTensor*", "inout", FLOATS),
                 Param("indices", "const aclTensorList*", "input", ("int32", "int64", "bool")),
                 _t("values"), Param("accumulate", "const bool", "input"),
                 Param("unsafe", "const bool", "input"))
INDEX_PUT_OP = _op("index_put", "void IndexPutKernel(const Context& dev_ctx, const DenseTensor& "
                                "x, const std::vector<const DenseTensor*>& indices, const "
                                "DenseTensor& value, bool accumulate, DenseTensor* out)")


def test_inplace_api_writes_the_phi_output_not_the_input():
    # index_put_kernel.cc: aclnnIndexPutImpl, then `out` holds the result (TensorCopy);
    # before, aclnn updated the caller's `x` and `out` was never written
    k = build_paddle_kernel(INDEX_PUT, INDEX_PUT_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["selfRef"].decision == "inplace" and a["selfRef"].expr == "*out"
    assert "phi::Copy(dev_ctx, x, dev_ctx.GetPlace(), false, out);" in "".join(a["selfRef"].prelude)
    assert "out" not in {u["name"] for u in k["unused"]}
    assert a["unsafe"].prelude[0].startswith("bool acl_unsafe = true;")


def test_zero_dim_views_only_when_the_outputs_are_0d_too():
    # one_hot of a 0-d x is [depth]; aclnnOneHot checks out = self dims + numClasses
    # (aclnn_one_hot.cpp CheckShapeValid), so x goes as it is (upstream passes it as is);
    # before, x went as a [1] view and aclnn expected [1, depth]
    a = _args(build_paddle_kernel(ONE_HOT, ONE_HOT_OP, framework_dtypes=("int32", "int64")))
    assert any(line.startswith("const bool acl_zero_dim = x.dims().size() == 0 && "
                               "out->dims().size() == 0;") for line in a["self"].prelude)
    # a grad kernel's nullable output is read through its `<name>_tensor` local
    bwd = _api("aclnnSoftmaxBackward", _t("gradOutput"), _t("output"),
               Param("dim", "int64_t", "input"), _t("out", "output"))
    op = _op("softmax_grad", "void SoftmaxGradKernel(const Context& dev_ctx, const DenseTensor& "
                             "out, const DenseTensor& out_grad, int axis, DenseTensor* x_grad)",
             "backward")
    lines = [line for arg in build_paddle_kernel(bwd, op, framework_dtypes=("float32",))["args"]
             for line in arg.prelude if line.startswith("const bool acl_zero_dim")]
    assert lines and "x_grad_tensor.dims().size() == 0" in lines[0]
