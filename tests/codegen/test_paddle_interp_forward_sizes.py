"""The interpolate forwards' output size (docs/opgen.md "Eighth audit: the pool at head,
paddle rows 13-24"): a reviewed arg_rules.yaml entry for aclnnUpsampleNearest2d and
aclnnUpsampleBilinear2d computes the output's H and W by upstream's priority
(PaddleCustomDevice interpolate_kernel.cc InterpolateKernel, 77090b64: size_tensor >
out_size > scale_tensor > scale > out_h/out_w), re-metas the output and allocates it
(the rule's `sizes`), because InterpolateInferMeta leaves -1 dims for a `scale_tensor`
and the attributes' dims for `size_tensor`. Before, `outputSize` was a nullptr
placeholder (aclnn rejects it) and the output was allocated from InferMeta's dims
before anything: the eighth audit's bilinear_interp scored 1. The aclnn signatures are
the real ones (hicann ops-cv, as opdb has them), the phi signature Paddle 3.3.1's."""
from __future__ import annotations

import pytest

from codegen.paddle_target import build_paddle_kernel
from opdb.arg_rules import parse
from opdb.errors import ParseError
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

_ARRAY = "const aclIntArray*"
NEAREST = _api("aclnnUpsampleNearest2d", _t("self"), Param("outputSize", _ARRAY, "input"),
               _t("out", "output"))
BILINEAR = _api("aclnnUpsampleBilinear2d", _t("self"), Param("outputSize", _ARRAY, "input"),
                Param("alignCorners", "const bool", "input"),
                Param("scalesH", "const double", "input"),
                Param("scalesW", "const double", "input"), _t("out", "output"))
_SIG = ("(const Context& dev_ctx, const DenseTensor& x, "
        "const paddle::optional<DenseTensor>& out_size, "
        "const paddle::optional<std::vector<const DenseTensor*>>& size_tensor, "
        "const paddle::optional<DenseTensor>& scale_tensor, "
        "const std::string& data_layout, int out_d, int out_h, int out_w, "
        "const std::vector<double>& scale, const std::string& interp_method, "
        "bool align_corners, int align_mode, DenseTensor* output)")
NEAREST_OP = _op("nearest_interp", "void NearestInterpKernel" + _SIG)
BILINEAR_OP = _op("bilinear_interp", "void BilinearInterpKernel" + _SIG)


@pytest.mark.parametrize("api,op", [(NEAREST, NEAREST_OP), (BILINEAR, BILINEAR_OP)])
def test_output_size_by_upstreams_priority_and_the_output_sized_by_it(api, op):
    k = build_paddle_kernel(api, op, framework_dtypes=("float32",))
    pre = _args(k)["outputSize"].prelude
    assert pre[0].startswith("int64_t acl_output_size_h = out_h, acl_output_size_w = out_w;")
    assert pre[3] == "if (size_tensor && size_tensor->size() > 0) {"
    assert "  if (scale_tensor) {" in pre and "  } else if (scale.size() > 1) {" in pre
    # out_size comes last: it overrides the scales
    assert pre.index("  if (out_size) {") > pre.index("  } else if (scale.size() > 1) {")
    assert "std::vector<int64_t> acl_output_size = {acl_output_size_h, acl_output_size_w};" in pre
    assert pre[-2:] == ["output->Resize(acl_output_size_dims);",
                        "opgen_alloc<T>(dev_ctx, output);"]
    # the output is not allocated before its dims are known
    assert "opgen_alloc<T>(dev_ctx, output);" not in k["allocs"]
    todos = "\n".join(_todos(k))
    for name in ("outputSize", "`out_size`", "`size_tensor`", "`scale_tensor`", "`scale`",
                 "`out_h`", "`out_w`", "`data_layout`"):
        assert name not in todos


def test_bilinear_forward_scales_are_upstreams_ones():
    a = _args(build_paddle_kernel(BILINEAR, BILINEAR_OP, framework_dtypes=("float32",)))
    assert a["scalesH"].prelude[0].startswith("double acl_scales_h = 1.0;")
    assert a["scalesW"].prelude[0].startswith("double acl_scales_w = 1.0;")


def test_sizes_must_be_a_need():
    bad = {"rules": [{"aclnn": "output_size", "kind": "int_array", "needs": ["x"],
                      "sizes": "output", "paddle": ["std::vector<int64_t> {var};"],
                      "evidence": "e"}]}
    with pytest.raises(ParseError, match="`sizes` names `output`, which is not one of its `needs`"):
        parse(bad)
