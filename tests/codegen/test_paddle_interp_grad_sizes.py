"""The interpolate grads' sizes and scales (docs/opgen.md "Batch J", class 3 of "Why
paddle first passes fail"): reviewed arg_rules.yaml entries for the aclnnUpsample*Backward
APIs, scoped to those APIs, from PaddleCustomDevice interpolate_kernel.cc (77090b64).
outputSize is gradOut's spatial dims (by `data_layout`), inputSize x's dims (x_grad's), and
aclnnUpsampleNearest2dBackward's scales are the forward's: -1 for `size_tensor`, the
`out_size` ratio, else `scale_tensor`, else `scale` (two values). Before, all four were
placeholders (nullptr, 0): batch J's nearest_interp_grad and batch H's
bilinear_interp_grad scored 1. The aclnn signatures are the real ones (hicann ops-cv, as
opdb has them), the phi signatures Paddle 3.3.1's."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

_ARRAY = "const aclIntArray*"
NEAREST_BWD = _api("aclnnUpsampleNearest2dBackward", _t("gradOut"),
                   Param("outputSize", _ARRAY, "input"), Param("inputSize", _ARRAY, "input"),
                   Param("scalesH", "double", "input"), Param("scalesW", "double", "input"),
                   _t("gradInput", "output"))
BILINEAR_BWD = _api("aclnnUpsampleBilinear2dBackward", _t("gradOut"),
                    Param("outputSize", _ARRAY, "input"), Param("inputSize", _ARRAY, "input"),
                    Param("alignCorners", "bool", "input"), Param("scalesH", "double", "input"),
                    Param("scalesW", "double", "input"), _t("out", "output"))
_SIG = ("(const Context& dev_ctx, const DenseTensor& x, "
        "const paddle::optional<DenseTensor>& out_size, "
        "const paddle::optional<std::vector<const DenseTensor*>>& size_tensor, "
        "const paddle::optional<DenseTensor>& scale_tensor, const DenseTensor& out_grad, "
        "const std::string& data_layout, int out_d, int out_h, int out_w, "
        "const std::vector<double>& scale, const std::string& interp_method, "
        "bool align_corners, int align_mode, DenseTensor* x_grad)")
NEAREST_GRAD = _op("nearest_interp_grad", "void NearestInterpGradKernel" + _SIG, "backward")
BILINEAR_GRAD = _op("bilinear_interp_grad", "void BilinearInterpGradKernel" + _SIG, "backward")


def test_sizes_are_the_two_gradients_dims():
    for api, op in ((NEAREST_BWD, NEAREST_GRAD), (BILINEAR_BWD, BILINEAR_GRAD)):
        a = _args(build_paddle_kernel(api, op, framework_dtypes=("float32",)))
        assert a["outputSize"].prelude[0] == (
            "std::vector<int64_t> acl_output_size = phi::vectorize(out_grad.dims());  "
            "// gradOut's spatial dims (the forward's output size)")
        assert "data_layout.back() == 'C'" in a["outputSize"].prelude[1]
        assert a["inputSize"].prelude == [
            "std::vector<int64_t> acl_input_size = phi::vectorize(x.dims());  "
            "// gradInput's dims: x's, as upstream passes input_grad's"]


def test_nearest_scales_follow_the_forwards_priority():
    k = build_paddle_kernel(NEAREST_BWD, NEAREST_GRAD, framework_dtypes=("float32",))
    h = _args(k)["scalesH"].prelude
    assert h[0].startswith("double acl_scales_h = -1.0;")
    assert h[2] == "if (!(size_tensor && size_tensor->size() > 0)) {"
    assert "acl_scales_h_host.data<int>()[0]) / static_cast<float>(x.dims()[acl_scales_h_axis])" in h[6]
    assert h[7] == "  } else if (scale_tensor) {" and h[11] == "  } else if (scale.size() > 1) {"
    w = _args(k)["scalesW"].prelude
    assert w[12] == "    acl_scales_w = scale[1];"
    # every size/scale input is read now: no placeholder and no unused TODO for them
    todos = "\n".join(_todos(k))
    for name in ("outputSize", "inputSize", "scalesH", "scalesW", "`out_size`", "`size_tensor`",
                 "`scale_tensor`", "`scale`"):
        assert name not in todos


def test_bilinear_scales_are_upstreams_ones_not_the_nearest_rule():
    # upstream's bilinear aclnn path passes 1, 1 (BilinearBwdAclnn), not the nearest
    # grad's priority (its legacy branches for align_mode 1 and NHWC are not rendered)
    a = _args(build_paddle_kernel(BILINEAR_BWD, BILINEAR_GRAD, framework_dtypes=("float32",)))
    assert a["scalesH"].prelude[0].startswith("double acl_scales_h = 1.0;")
    assert a["scalesW"].prelude[0].startswith("double acl_scales_w = 1.0;")
    assert not a["scalesH"].todo
