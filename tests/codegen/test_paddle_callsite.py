"""paddle call-site rules driven by aclnn facts (codegen/paddle_callsite.py):
0-d tensors as [1] views for APIs that take a dimension (PaddleCustomDevice
softmax_kernel.cc), float64 computed in float32 where the API lacks it (softmax_kernel.cc
SoftmaxGradKernel, expand_kernel.cc, arg_min_max_kernel.cc)."""
from __future__ import annotations

import pytest

from codegen.paddle_target import build_paddle_kernel
from opdb.errors import ParseError
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import FLOATS
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import op as _op


ARGMAX = _api("aclnnOpgenArgMax",
              Param("self", "const aclTensor*", "input", FLOATS),
              Param("dim", "int64_t", "input"), Param("keepdim", "bool", "input"),
              Param("out", "aclTensor*", "output", ("int64",)))
ARGMAX_OP = _op("argmax", "void ArgMaxKernel(const Context& dev_ctx, const DenseTensor& x, "
                          "const Scalar& axis, bool keepdims, bool flatten, DataType dtype, "
                          "DenseTensor* out)")


def _args(k: dict) -> dict:
    return {a.aclnn_name: a for a in k["args"]}


def test_zero_dim_tensors_go_as_1d_views_for_an_api_taking_a_dim():
    k = build_paddle_kernel(ARGMAX, ARGMAX_OP, framework_dtypes=("float32",))
    a = _args(k)
    assert a["self"].expr == "acl_self_1d" and a["out"].expr == "acl_out_1d"
    # (argmax's `flatten` first views x as 1-D: arg_rules.yaml `flatten`)
    assert "phi::DenseTensor acl_self_flat(x);" in a["self"].prelude
    # (only when the output is 0-d too: one_hot's [depth] output for a 0-d x takes x as is)
    assert any(line.startswith("const bool acl_zero_dim = acl_self_flat.dims().size() == 0 "
                               "&& out->dims().size() == 0;")
               for line in a["self"].prelude)
    assert "phi::DenseTensor acl_self_1d(acl_self_flat);" in a["self"].prelude
    assert ("if (acl_zero_dim && acl_out_1d.dims().size() == 0) "
            "acl_out_1d.Resize(phi::make_ddim({1}));") in a["out"].prelude
    # the keep-dims flag keeps the [1] view's dimension for a 0-d x
    assert a["keepdim"].expr == "acl_keepdim_or_0d"
    assert "bool acl_keepdim_or_0d = keepdims || acl_zero_dim;" in a["keepdim"].prelude[0]


def test_no_views_without_a_dim_parameter():
    # the same tensors, no dimension taken: a 0-d tensor goes as it is (element-wise APIs
    # take 0-d tensors; upstream's relu/abs pass them through)
    api = _api("aclnnOpgenAbs", Param("self", "const aclTensor*", "input", FLOATS),
               Param("out", "aclTensor*", "output", FLOATS))
    op = _op("abs", "void AbsKernel(const Context& dev_ctx, const DenseTensor& x, DenseTensor* out)")
    k = build_paddle_kernel(api, op, framework_dtypes=("float32",))
    assert [a.expr for a in k["args"]] == ["x", "*out"]
    assert not any("acl_zero_dim" in line for a in k["args"] for line in a.prelude)


def test_float64_the_api_lacks_is_registered_and_computed_in_float32():
    k = build_paddle_kernel(ARGMAX, ARGMAX_OP, framework_dtypes=("float32", "float64", "int64"))
    assert k["compute_as"] == ["float64"]
    assert "double" in k["dtypes"] and "float" in k["dtypes"]
    a = _args(k)
    assert a["self"].expr == "acl_self_float32"
    assert ("phi::DenseTensor acl_self_float32 = opgen_compute_as(dev_ctx, acl_self_1d, "
            "{phi::DataType::FLOAT64}, phi::DataType::FLOAT32, /*copy=*/true);") in a["self"].prelude
    # an int64 index output is never cast
    assert a["out"].expr == "acl_out_1d" and not a["out"].after


def test_float64_output_is_computed_into_float32_and_cast_back():
    api = _api("aclnnOpgenSoftmaxBackward",
               Param("gradOutput", "const aclTensor*", "input", FLOATS),
               Param("output", "const aclTensor*", "input", FLOATS),
               Param("dim", "int64_t", "input"), Param("out", "aclTensor*", "output", FLOATS))
    op = _op("softmax_grad", "void SoftmaxGradKernel(const Context& dev_ctx, const DenseTensor& "
                             "out, const DenseTensor& out_grad, int axis, DenseTensor* x_grad)",
             "backward")
    k = build_paddle_kernel(api, op, framework_dtypes=("float32", "float16", "float64"))
    a = _args(k)
    assert "/*copy=*/false);" in a["out"].prelude[-1]  # only its shape is needed
    assert a["out"].after == ["opgen_cast_back(dev_ctx, acl_out_float32, &acl_out_1d);"]
    assert k["after"][0] == "opgen_cast_back(dev_ctx, acl_out_float32, &acl_out_1d);"
    assert k["dtypes"] == ["float", "phi::dtype::float16", "double"]


def test_no_float32_copy_when_the_api_has_float64():
    api = _api("aclnnOpgenSoftmax", Param("self", "const aclTensor*", "input",
                                          FLOATS + ("float64",)),
               Param("dim", "int64_t", "input"),
               Param("out", "aclTensor*", "output", FLOATS + ("float64",)))
    op = _op("softmax", "void SoftmaxKernel(const Context& dev_ctx, const DenseTensor& x, "
                        "int axis, DenseTensor* out)")
    k = build_paddle_kernel(api, op, framework_dtypes=("float32", "float64"))
    assert k["compute_as"] == [] and "double" in k["dtypes"]
    assert [a.expr for a in k["args"]] == ["acl_self_1d", "acl_dim", "acl_out_1d"]


def test_rendered_file_carries_the_helpers_only_when_used(db):
    from codegen.api import prepare
    r = prepare(db, "aclnnAdd", "paddle", op="add", layout="in-tree")
    text = r.files["in-tree/backends/npu/kernels/add_kernel.cc"]
    uses = "opgen_compute_as(dev_ctx" in text
    assert ("#define OPGEN_COMPUTE_AS_DEFINED" in text) == uses


@pytest.mark.parametrize("key,value,msg", [
    ("zero_dim_views", {"params": [], "keepdim": [], "evidence": "x"},
     "zero_dim_views: needs exactly `params` (non-empty), `keepdim` and `evidence`"),
    ("compute_as", {"dtypes": ["float64"], "compute": "float32"},
     "compute_as: needs exactly `dtypes` (non-empty), `compute` and `evidence`"),
    ("master_weights", {"flag": "multi_precision", "param": "param", "evidence": "x"},
     "master_weights: needs exactly `flag`, `param`, `master` and `evidence`"),
])
def test_bad_entries_are_one_line_errors(key, value, msg):
    from opdb.arg_rules import parse
    with pytest.raises(ParseError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        parse({key: value})


def test_doc_dtype_ties_are_extracted_from_the_parameter_table():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "opdb/sources/cann/extract_dtype_ties.py"
    spec = importlib.util.spec_from_file_location("extract_dtype_ties", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc = ("<table>\n<thead><tr><th>参数名</th><th>输入/输出</th><th>数据类型</th></tr></thead>\n"
           "<tr><td>varRef（aclTensor*）</td><td>输入/输出</td><td>FLOAT16、FLOAT32</td></tr>\n"
           "<tr><td>mRef（aclTensor*）</td><td>输入/输出</td><td>与“varRef”参数一致。</td></tr>\n"
           "<tr><td class=\"x\">grad（aclTensor*）</td><td>输入</td><td>与varRef保持一致</td></tr>\n"
           "<tr><td>step（aclTensor*）</td><td>与“varRef”参数一致。</td><td>INT64</td></tr>\n"
           "</table>\n")
    # step's tie is in the 输入/输出 column, not 数据类型: no tie
    assert mod.ties(doc) == [{"line": 4, "param": "mRef", "same_as": "varRef"},
                             {"line": 5, "param": "grad", "same_as": "varRef"}]


def test_half_precision_kernel_with_float32_states_computes_the_tied_group_in_float32():
    # aclnnApplyAdamW takes varRef/mRef/vRef/grad/... in one dtype (its docs); adamw's
    # registrations make the moments float32 for a float16 kernel, so float16 tensors of
    # that group go in float32 (PaddleCustomDevice adam_kernel.cc: param_fp32, cast back)
    from codegen.api import prepare
    from opdb.query import OpDB
    db = OpDB.open(overlay=False)
    text = prepare(db, "aclnnApplyAdamW", "paddle", op="adamw", layout="in-tree").files[
        "in-tree/backends/npu/kernels/adamw_kernel.cc"]
    half = "{phi::DataType::FLOAT64, phi::DataType::FLOAT16}, phi::DataType::FLOAT32"
    assert f"opgen_compute_as(dev_ctx, acl_var_ref_master, {half}, /*copy=*/true);" in text
    assert f"opgen_compute_as(dev_ctx, grad, {half}, /*copy=*/true);" in text
    assert "opgen_cast_back(dev_ctx, acl_var_ref_float32, param_out);" in text
    # layer_norm's float32 mean/variance for a float16 x are no tie: aclnnLayerNorm takes
    # float16 input with float32 mean/rstd, so float16 stays float16
    text = prepare(db, "aclnnLayerNorm", "paddle", op="layer_norm", layout="in-tree").files[
        "in-tree/backends/npu/kernels/layer_norm_kernel.cc"]
    assert "FLOAT16}, phi::DataType::FLOAT32" not in text


SGD = _api("aclnnOpgenSgd", Param("varRef", "aclTensor*", "inout", FLOATS),
           Param("grad", "const aclTensor*", "input", FLOATS),
           Param("lr", "double", "input"))


def test_master_weights_need_the_flag_and_both_master_tensors():
    full = _op("sgd", "void SgdKernel(const Context& dev_ctx, const DenseTensor& param, "
                      "const DenseTensor& grad, double lr, const paddle::optional<DenseTensor>& "
                      "master_param, bool multi_precision, DenseTensor* param_out, "
                      "DenseTensor* master_param_out)")
    k = build_paddle_kernel(SGD, full, framework_dtypes=("float32",))
    var = _args(k)["varRef"]
    assert var.expr == "acl_var_ref_master"
    assert "if (multi_precision) {  // the update runs on the float32 master weights; " \
           "param_out is their cast" in var.prelude
    assert "  acl_var_ref_master = *master_param_out;" in var.prelude
    assert not {u["name"] for u in k["unused"]} & {"multi_precision", "master_param",
                                                   "master_param_out"}
    # without a master output there is nothing to update: the flag stays a TODO
    bare = _op("sgd", "void SgdKernel(const Context& dev_ctx, const DenseTensor& param, "
                      "const DenseTensor& grad, double lr, bool multi_precision, "
                      "DenseTensor* param_out)")
    k = build_paddle_kernel(SGD, bare, framework_dtypes=("float32",))
    assert _args(k)["varRef"].expr == "*param_out"
    assert "multi_precision" in {u["name"] for u in k["unused"]}


def test_flatten_attribute_views_the_first_input_as_1d():
    api = _api("aclnnOpgenCumsum", Param("self", "const aclTensor*", "input", FLOATS),
               Param("dim", "int64_t", "input"), Param("exclusive", "bool", "input"),
               Param("reverse", "bool", "input"), Param("out", "aclTensor*", "output", FLOATS))
    op = _op("cumsum", "void CumsumKernel(const Context& dev_ctx, const DenseTensor& x, const "
                       "Scalar& axis, bool flatten, bool exclusive, bool reverse, DenseTensor* out)")
    k = build_paddle_kernel(api, op, framework_dtypes=("float32",))
    self_arg = _args(k)["self"]
    assert "phi::DenseTensor acl_self_flat(x);" in self_arg.prelude
    assert ("if (flatten) acl_self_flat.Resize(phi::make_ddim({acl_self_flat.numel()}));  "
            "// flatten: the input as 1-D") in self_arg.prelude
    assert "flatten" not in {u["name"] for u in k["unused"]}
    # an API that takes `flatten` itself gets it by name instead
    api2 = _api("aclnnOpgenCumsumFlat", *api.params[:2], Param("flatten", "bool", "input"),
                *api.params[2:])
    k2 = build_paddle_kernel(api2, op, framework_dtypes=("float32",))
    assert _args(k2)["flatten"].expr == "flatten"
    assert not any("_flat(" in line for a in k2["args"] for line in a.prelude)
