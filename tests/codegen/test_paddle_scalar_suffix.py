"""A Paddle Scalar named `<word>_scalar` answers to `<word>` (argmap.fw_name_keys), and
aclnnOneHot's `numClasses` is Paddle's `depth` (arg_rules.yaml alias, from
PaddleCustomDevice one_hot_kernel.cc OneHotRawKernel, 77090b64: `depth =
depth_scalar.to<int>()` passed as numClasses). Before, one_hot_raw's numClasses was a
placeholder 0, for which the API returns at once (ops-math aclnn_one_hot.cpp:201): the
eighth audit's one_hot_raw scored 2 (docs/opgen.md "Eighth audit: the pool at head, paddle
rows 1-12")."""
from __future__ import annotations

from codegen.argmap import FwParam, fw_name_keys
from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t
from tests.codegen.paddle_kernel_parts import todos as _todos

_IDX = ("int32", "int64")
ONE_HOT = _api("aclnnOneHot", _t("self", dtypes=_IDX), Param("numClasses", "int", "input"),
               _t("onValue"), _t("offValue"), Param("axis", "int64_t", "input"),
               _t("out", "output"))
ONE_HOT_RAW = _op("one_hot_raw",
                  "void OneHotRawKernel(const Context& dev_ctx, const DenseTensor& x, "
                  "const phi::Scalar& depth_scalar, phi::DataType dtype, "
                  "bool allow_out_of_range, DenseTensor* out)")


def test_one_hot_raw_passes_depth_as_num_classes():
    k = build_paddle_kernel(ONE_HOT, ONE_HOT_RAW, framework_dtypes=("int32", "int64"))
    a = _args(k)["numClasses"]
    assert "depth_scalar.to<" in "\n".join(a.prelude) + a.expr
    assert not any("numClasses" in t or "depth_scalar" in t for t in _todos(k))


def test_only_a_scalar_drops_the_suffix():
    assert "depth" in fw_name_keys(FwParam("depth_scalar", "scalar", "const phi::Scalar&"))
    assert "depth" not in fw_name_keys(FwParam("depth_scalar", "int", "int"))
    assert fw_name_keys(FwParam("scalar", "scalar", "const phi::Scalar&")) == {"scalar"}
