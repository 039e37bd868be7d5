"""Class 10 of docs/opgen.md ("tensors matched by position to the wrong parameter"): an
aclnn gradient input (`gradOut`, `yGrad`) takes the grad kernel's incoming gradient, which
Paddle's backward YAML names `<forward output>_grad` whatever the kernel calls it, and
never a forward value by position; an incoming gradient goes to no other parameter of an
API that names its gradient. The APIs are the real aclnn signatures (hicann ops-nn), the
phi signatures Paddle 3.3.1's; upstream is PaddleCustomDevice backends/npu/kernels at
77090b64 (swiglu_kernel.cc passes `dout` as aclnnSwiGluGrad's yGrad; warpctc_kernel.cc
passes a gradient of ones as aclnnCtcLossBackward's gradOut)."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel, fw_params, incoming_gradients
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

SWIGLU_GRAD = _api("aclnnSwiGluGrad", _t("yGrad"), _t("x"), Param("dim", "int64_t", "input"),
                   _t("out", "output"))
SWIGLU_GRAD_OP = _op("swiglu_grad",
                     "void SwiGLUGradKernel(const Context& dev_ctx, const DenseTensor& x, "
                     "const paddle::optional<DenseTensor>& y, const DenseTensor& dz, "
                     "DenseTensor* dx, DenseTensor* dy)", "backward")

CTC_BWD = _api("aclnnCtcLossBackward", _t("gradOut"), _t("logProbs"), _t("targets"),
               Param("inputLengths", "const aclIntArray*", "input"),
               Param("targetLengths", "const aclIntArray*", "input"), _t("negLogLikelihood"),
               _t("logAlpha"), Param("blank", "int64_t", "input"),
               Param("zeroInfinity", "bool", "input"), _t("out", "output"))
WARPCTC_GRAD_OP = _op("warpctc_grad",
                      "void WarpctcGradKernel(const Context& dev_ctx, const DenseTensor& logits, "
                      "const paddle::optional<DenseTensor>& logits_length, "
                      "const DenseTensor& warpctcgrad, const DenseTensor& loss_grad, int blank, "
                      "bool norm_by_times, DenseTensor* logits_grad)", "backward")
WARPCTC_OP = _op("warpctc",
                 "void WarpctcKernel(const Context& dev_ctx, const DenseTensor& logits, "
                 "const DenseTensor& label, const paddle::optional<DenseTensor>& logits_length, "
                 "const paddle::optional<DenseTensor>& labels_length, int blank, "
                 "bool norm_by_times, DenseTensor* loss, DenseTensor* warpctcgrad)")


def test_incoming_gradients_come_from_the_backward_yaml():
    # the YAML's `out_grad` is the kernel's third tensor input, whatever its name
    assert incoming_gradients("swiglu_grad", ("x", "y", "dz")) == {"dz": "out"}
    assert incoming_gradients("warpctc_grad", ("logits", "logits_length", "warpctcgrad",
                                               "loss_grad")) == {"loss_grad": "loss"}
    assert incoming_gradients("warpctc", ("logits", "label", "logits_length",
                                          "labels_length")) == {}  # a forward kernel
    assert incoming_gradients("swiglu_grad", ("x", "dz")) == {}  # counts disagree: no guess
    grads = {f.name: f.grad_of for f in fw_params(SWIGLU_GRAD_OP)}
    assert grads == {"x": "", "y": "", "dz": "out", "dx": "", "dy": ""}


def test_swiglu_grad_passes_the_incoming_gradient_as_yGrad():
    # before: yGrad <- y by position (the forward's second input), dz unused
    k = build_paddle_kernel(SWIGLU_GRAD, SWIGLU_GRAD_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["yGrad"].decision == "gradient"
    assert "phi::DenseTensor acl_y_grad_1d(dz);" in a["yGrad"].prelude
    assert not any("`yGrad`" in t for t in _todos(k))
    assert not any("`dz`" in t for t in _todos(k))


def test_warpctc_grad_gradient_and_no_gradient_elsewhere():
    # before: gradOut <- logits, logProbs <- logits_length, targets <- warpctcgrad,
    # negLogLikelihood <- loss_grad, all by position
    k = build_paddle_kernel(CTC_BWD, WARPCTC_GRAD_OP, framework_dtypes=("float32",))
    m = {p.aclnn.name: p for p in k["argmap"].params}
    assert m["gradOut"].fw.name == "loss_grad" and m["gradOut"].decision == "gradient"
    assert m["logProbs"].fw.name == "logits"
    assert all(p.fw is None or p.fw.name != "loss_grad" for n, p in m.items() if n != "gradOut")


def test_a_forward_kernel_gives_a_gradient_input_no_forward_value():
    # warpctc calls aclnnCtcLossBackward in its forward with a gradient of ones; before,
    # gradOut <- logits by position. Now a placeholder with its TODO (no incoming gradient)
    k = build_paddle_kernel(CTC_BWD, WARPCTC_OP, framework_dtypes=("float32",))
    m = {p.aclnn.name: p for p in k["argmap"].params}
    assert m["gradOut"].fw is None and m["gradOut"].decision == "unmapped"
    assert m["logProbs"].fw.name == "logits"


SWIGLU = _api("aclnnSwiGlu", _t("x"), Param("dim", "int64_t", "input"), _t("out", "output"))
SWIGLU_OP = _op("swiglu", "void SwiGLUKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const paddle::optional<DenseTensor>& y, DenseTensor* z)")


def test_swiglu_dim_is_the_last_dim():
    # a reviewed rule per API (arg_rules.yaml, swiglu_kernel.cc: axis = -1); before, a
    # placeholder 0 (class 2)
    for a, o in ((SWIGLU, SWIGLU_OP), (SWIGLU_GRAD, SWIGLU_GRAD_OP)):
        k = build_paddle_kernel(a, o, framework_dtypes=("float32",))
        d = _args(k)["dim"]
        assert d.decision == "rule" and d.prelude[0].startswith("int64_t acl_dim = -1;")
