"""The fifth held-out paddle batch of docs/opgen.md (batch E): the mechanisms its first
pass was missing, asserted on the generated semantics. Each API here is the real aclnn
signature (hicann ops-math / ops-nn headers, as opdb has them) and each phi signature the
installed Paddle's; the upstream kernels are PaddleCustomDevice backends/npu/kernels at
77090b64."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel, params_from_signature
from opdb.model import AclnnApi, FrameworkOp, Param, Source

SRC = Source("test", "", "", "")
FLOATS = ("float32", "float16", "bfloat16")


def _op(name: str, signature: str, kind: str = "forward") -> FrameworkOp:
    return FrameworkOp("paddle", name, SRC, schema=signature,
                       params=params_from_signature(signature), kind=kind)


def _api(name: str, *params: Param) -> AclnnApi:
    return AclnnApi(name, params, SRC)


def _t(name: str, role: str = "input", dtypes=FLOATS) -> Param:
    return Param(name, "aclTensor*" if role == "output" else "const aclTensor*", role, dtypes)


def _args(k: dict) -> dict:
    return {a.aclnn_name: a for a in k["args"]}


def _todos(k: dict) -> list[str]:
    return [p.todo for p in k["argmap"].params if p.todo] + [u["todo"] for u in k["unused"]]


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
