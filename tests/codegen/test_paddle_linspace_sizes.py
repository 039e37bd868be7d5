"""linspace (paddle): LinspaceRawInferMeta leaves `out` as [-1] in start's dtype
(paddle/phi/infermeta/ternary.cc:1219-1220); the kernel reads `number` on the host, sizes
`out` to {num}, allocates it in `dtype` (T) and converts start/stop to T first, as
Paddle's CPU LinspaceKernel and PaddleCustomDevice linspace_kernel.cc (77090b64) do. The
reviewed aclnnLinspace entries of opdb/sources/arg_rules.yaml (tenth audit, docs/opgen.md)."""
from __future__ import annotations

from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t

LINSPACE = _api("aclnnLinspace", Param("start", "const aclScalar*", "input"),
                Param("end", "const aclScalar*", "input"), Param("steps", "int64_t", "input"),
                _t("out", "output", ("float32", "float16", "int32", "float64")))
LINSPACE_OP = _op("linspace", "void LinspaceKernel(const Context& dev_ctx, "
                              "const DenseTensor& start, const DenseTensor& stop, "
                              "const DenseTensor& number, DataType dtype, DenseTensor* out)")


def test_out_is_sized_to_num_and_allocated_in_dtype():
    # before: out was allocated as InferMeta left it ([-1], start's dtype): the op failed
    k = build_paddle_kernel(LINSPACE, LINSPACE_OP, framework_dtypes=("float32", "int32"))
    assert not any("opgen_alloc<T>(dev_ctx, out)" in a for a in k["allocs"])
    pre = _args(k)["steps"].prelude
    assert pre[0].startswith("int64_t acl_steps = opgen_host_scalar(dev_ctx, number).to<int64_t>();")
    assert any(line.startswith("out->Resize(phi::make_ddim({acl_steps}));") for line in pre)
    assert any(line.startswith("dev_ctx.Alloc(out, dtype);") for line in pre)


def test_start_and_stop_are_converted_to_the_kernel_dtype_first():
    # before: read on the host in their own dtype (a float start for an int dtype kept
    # its fraction, where Paddle truncates it first)
    k = build_paddle_kernel(LINSPACE, LINSPACE_OP, framework_dtypes=("float32", "int32"))
    a = _args(k)
    assert a["start"].prelude[0].startswith(
        "phi::Scalar acl_start(opgen_host_scalar(dev_ctx, start).to<T>());")
    assert a["end"].prelude[0].startswith(
        "phi::Scalar acl_end(opgen_host_scalar(dev_ctx, stop).to<T>());")
