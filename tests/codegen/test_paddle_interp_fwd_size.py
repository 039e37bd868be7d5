"""The interpolate forwards' outputSize (docs/opgen.md "Eighth audit: the pool at head,
paddle rows 1-12"): a reviewed arg_rules.yaml entry for the forward aclnnUpsample* APIs
(not the *Backward ones, which have their own), from PaddleCustomDevice
interpolate_kernel.cc (77090b64) InterpolateKernel -> NearestFwdNpu: outputSize is the
output's spatial dims by `data_layout` ({out_h, out_w}, the dims InterpolateInferMeta
set). Before, it was a nullptr placeholder the API refuses: the eighth audit's
nearest_interp scored 1. aclnnUpsampleNearest2d and aclnnUpsampleBilinear2d have a rule of
their own that computes the size by upstream's priority (test_paddle_interp_forward_sizes.py),
so this one is tested on another forward (bicubic). The phi signature is Paddle 3.3.1's."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

BICUBIC = _api("aclnnUpsampleBicubic2d", _t("self"),
               Param("outputSize", "const aclIntArray*", "input"), _t("out", "output"))
BICUBIC_INTERP = _op(
    "bicubic_interp",
    "void BicubicInterpKernel(const Context& dev_ctx, const DenseTensor& x, "
    "const paddle::optional<DenseTensor>& out_size, "
    "const paddle::optional<std::vector<const DenseTensor*>>& size_tensor, "
    "const paddle::optional<DenseTensor>& scale_tensor, const std::string& data_layout, "
    "int out_d, int out_h, int out_w, const std::vector<double>& scale, "
    "const std::string& interp_method, bool align_corners, int align_mode, "
    "DenseTensor* output)")


def test_output_size_is_the_outputs_spatial_dims():
    k = build_paddle_kernel(BICUBIC, BICUBIC_INTERP, framework_dtypes=("float32",))
    pre = _args(k)["outputSize"].prelude
    assert pre[0].startswith(
        "std::vector<int64_t> acl_output_size = phi::vectorize(output->dims());")
    assert pre[1] == "if (!data_layout.empty() && data_layout.back() == 'C') {"
    assert "acl_output_size.begin() + 2" in "\n".join(pre[4:])
    assert not any("outputSize" in t for t in _todos(k))


def test_backward_keeps_its_own_rule():
    bwd = _api("aclnnUpsampleNearest2dBackward", _t("gradOut"),
               Param("outputSize", "const aclIntArray*", "input"),
               Param("inputSize", "const aclIntArray*", "input"),
               Param("scalesH", "double", "input"), Param("scalesW", "double", "input"),
               _t("gradInput", "output"))
    grad = _op("nearest_interp_grad",
               "void NearestInterpGradKernel(const Context& dev_ctx, const DenseTensor& x, "
               "const paddle::optional<DenseTensor>& out_size, "
               "const paddle::optional<std::vector<const DenseTensor*>>& size_tensor, "
               "const paddle::optional<DenseTensor>& scale_tensor, const DenseTensor& out_grad, "
               "const std::string& data_layout, int out_d, int out_h, int out_w, "
               "const std::vector<double>& scale, const std::string& interp_method, "
               "bool align_corners, int align_mode, DenseTensor* x_grad)", "backward")
    pre = _args(build_paddle_kernel(bwd, grad, framework_dtypes=("float32",)))["outputSize"].prelude
    assert "phi::vectorize(out_grad.dims())" in pre[0]
