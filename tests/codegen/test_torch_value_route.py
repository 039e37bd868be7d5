"""op-plugin's value-limit CPU routes (docs/opgen.md, "Value limits that route to the
CPU"): an adapter that tests `if (!checkXUseFast(...)) { return x_slow(...); }` before its
aclnn call has the test inlined into one C++ condition over the op's argument names
(constants resolved) by the extractor, and opgen renders the same CPU route (inputs to the
CPU, torch's kernel via at::, the result copied back) before the aclnn call. The tests name
the upstream adapters; nothing keys on a name in code."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from opdb.sources.torch import extract_value_routes as evr
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

HEADER = "constexpr double LIMIT = 50.0; // comment\nconstexpr int H_INDEX = 2;\n"
UTIL = """
double ratio(int64_t a, int64_t b, double scale)
{
    if (scale > 0.0) {
        return 1.0 / scale;
    } else {
        return b != 0 ? static_cast<double>(a) / b : 0;
    }
}
"""
SRC = """#include "op_plugin/utils/Limits.h"
bool inRange(float r) {
  return !(r > LIMIT);
}

bool useFast(const at::Tensor& self, double s, at::Tensor& result) {
  double real = op_plugin::utils::ratio(self.size(H_INDEX), result.size(H_INDEX), s);
  if (!inRange(real)) {
    return false;
  }
  return true;
}

at::Tensor op_slow(const at::Tensor& self, c10::optional<double> scale) {
  auto scalar_type = self.scalar_type();
  at::Tensor result = npu_preparation::apply_tensor_without_format(self);
  at::Tensor self_slow = self.cpu().to(at::ScalarType::Float);
  at::Tensor result_slow = at::my_op(self_slow, scale);
  result.copy_(result_slow.to(scalar_type));
  return result;
}

at::Tensor my_op(const at::Tensor& self, c10::optional<double> scale) {
  double scale_attr = scale.value_or(0);
  at::Tensor result = npu_preparation::apply_tensor_without_format(self);
  if (!useFast(self, scale_attr, result)) {
    return op_slow(self, scale);
  }
  EXEC_NPU_CMD(aclnnMyOp, self, scale_attr, result);
  return result;
}

at::Tensor other(const at::Tensor& self, c10::optional<double> scale) {
  at::Tensor result = npu_preparation::apply_tensor_without_format(self);
  if (!useFast(self, unknown_local, result)) {
    return op_slow(self, scale);
  }
  EXEC_NPU_CMD(aclnnOther, self, result);
  return result;
}
"""


def test_the_route_is_read_from_the_adapters_own_test(monkeypatch):
    """The helper, its nested helper, the utils function and the header's constants are
    inlined over the op's names; the caller's local number becomes its initialiser, its
    output `{out}`; an argument that is none of these gives no row."""
    monkeypatch.setattr(evr, "UTILS", evr._funcs(UTIL))
    rows = evr.rows_of_file(SRC, "X.cpp", "c0ffee", {"op_plugin/utils/Limits.h": HEADER})
    assert [r["function"] for r in rows] == ["my_op"]  # `other`'s `unknown_local`
    r = rows[0]
    assert r["api"] == "aclnnMyOp" and r["source"]["line"] == 26
    assert r["cpu_call"] == "at::my_op(self.cpu().to(at::ScalarType::Float), scale)"
    assert r["result_dtype"] == "self.scalar_type()"
    assert "LIMIT" not in r["cond"] and "H_INDEX" not in r["cond"] and "ratio" not in r["cond"]
    assert "> 50.0" in r["cond"] and "{out}.size(2)" in r["cond"] and "self.size(2)" in r["cond"]
    assert "scale.value_or(0)" in r["cond"] and "static_cast<float>(" in r["cond"]
    # the condition holds where the helper returns false
    assert r["cond"].startswith("!(")


def test_opdb_knows_the_three_routes():
    from opdb.op_plugin_routes import value_routes
    for op, api, marks in (
            ("aten::_upsample_bilinear2d_aa", "aclnnUpsampleBilinear2dAA", ("> 50.0",)),
            ("aten::_upsample_bicubic2d_aa.out", "aclnnUpsampleBicubic2dAA", ("> 50.0",)),
            ("aten::_upsample_bicubic2d_aa_backward.grad_input", "aclnnUpsampleBicubic2dAAGrad",
             ("< 0.03", "grad_output.size(2)) <= 8192"))):
        (r,) = value_routes(op)
        assert r.api == api and all(m in r.cond for m in marks), op
        assert "op_plugin::utils::" not in r.cond  # compute_scale inlined: no OpUtils link
    assert value_routes("aten::add.Tensor") == []


@pytest.mark.parametrize("api,op,sig,call,back", [
    ("aclnnUpsampleBilinear2dAA", "aten::_upsample_bilinear2d_aa",
     "at::Tensor _upsample_bilinear2d_aa(",
     "at::_upsample_bilinear2d_aa(self.cpu().to(at::ScalarType::Float), output_size, "
     "align_corners, scales_h, scales_w)", "out.copy_(opgen_cpu_result.to(self.scalar_type()));"),
    ("aclnnUpsampleBicubic2dAAGrad", "aten::_upsample_bicubic2d_aa_backward.grad_input",
     "at::Tensor& _upsample_bicubic2d_aa_backward_out(",
     "at::_upsample_bicubic2d_aa_backward(grad_output.cpu().to(at::ScalarType::Float), "
     "output_size, input_size, align_corners, scales_h, scales_w)",
     "grad_input.copy_(opgen_cpu_result.to(grad_output.scalar_type()));"),
])
def test_the_adapter_takes_the_cpu_route_before_the_api(db, api, op, sig, call, back):
    r = prepare(db, api, "torch", op=op, layout="in-tree")
    (text,) = [v for k, v in r.files.items() if k.startswith(ADAPTER.format("")[:-len("KernelNpuOpApi.cpp")])
               and k.endswith("KernelNpuOpApi.cpp")]
    body = _fn(text, sig)
    gate = body.index("// values " + api + " does not take: torch's CPU kernel")
    # after the output is allocated or checked: the condition reads its sizes
    assert "apply_tensor_without_format(" in body[:gate] or "check_tensor(" in body[:gate]
    assert gate < body.index(f"at::Tensor opgen_cpu_result = {call};") < body.index(back) \
        < body.index(f"EXEC_NPU_CMD({api}, ")


def test_no_route_for_a_name_the_adapter_lacks():
    from codegen.torch_value_route import route_lines
    from opdb.op_plugin_routes import ValueRoute
    r = ValueRoute("aclnnX", "self.size(2) > limit_of({out})", "at::x(self.cpu())", "", "e")
    assert route_lines([r], "aclnnX", "functional", {"self"}, "out") == []  # `limit_of`
    ok = ValueRoute("aclnnX", "self.size(2) > 50.0 || {out}.size(2) > 1", "at::x(self.cpu())", "", "e")
    assert route_lines([ok], "aclnnX", "functional", {"self"}, "out")[1] == \
        "if (self.size(2) > 50.0 || out.size(2) > 1) {"
    assert route_lines([ok], "aclnnY", "functional", {"self"}, "out") == []  # another API
    assert route_lines([ok], "aclnnX", "inplace", {"self"}, "self") == []


def test_the_extractor_refuses_a_wrong_repo_in_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    out = root / "opdb/sources/torch/op_plugin_value_routes.jsonl"
    before = out.read_bytes()
    r = subprocess.run([sys.executable, str(root / "opdb/sources/torch/extract_value_routes.py"),
                        "--repo", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "extract_value_routes:" in r.stderr
    assert out.read_bytes() == before


POS_SRC = """
inline bool _op_fallback_condition(const at::Tensor& self, const c10::optional<int64_t> dim) {
  static const bool is_aclnn_kernel_available = check_aclnn_kernel_available("aclnnMyOp");
  if (!is_aclnn_kernel_available) {
    TORCH_NPU_WARN_ONCE("CAUTION: not supported; fallback to the CPU.");
    return true;
  }
  bool last = (!dim.has_value()) || (dim.value() == self.dim() - 1);
  if ((self.dim() != 4) || (!last)) {
    TORCH_NPU_WARN_ONCE("CAUTION: ", "needs 4-d; fallback to the CPU.");
    return true;
  }
  return false;
}

at::Tensor my_op(const at::Tensor& self_, const at::Tensor& mask_, const c10::optional<int64_t> dim_) {
  if (_op_fallback_condition(self_, dim_)) {
    at::Tensor self_cpu = self_.cpu();
    at::Tensor mask_cpu = mask_.cpu();
    at::Tensor result = at::my_op(self_cpu, mask_cpu, dim_);
    return result.to(self_.device());
  }
  at::Tensor result = npu_preparation::apply_tensor_without_format(self_.sizes(), self_.options());
  EXEC_NPU_CMD(aclnnMyOp, self_, mask_, result);
  return result;
}

at::Tensor two_calls(const at::Tensor& self, const c10::optional<int64_t> dim) {
  if (_op_fallback_condition(self, dim)) {
    at::Tensor self_cpu = self.cpu();
    at::Tensor a = at::my_op(self_cpu, dim);
    at::Tensor b = at::other(a);
    return b.to(self.device());
  }
  EXEC_NPU_CMD(aclnnMyOp, self, self);
  return self;
}
"""


def test_a_cpu_route_written_in_the_adapter_is_read_too():
    """The second form (MaskedSoftMaxKernelNpuOpApi.cpp): `if (HELPER(...)) { <CPU route> }`
    with a helper returning true for the CPU; the API-availability test drops out, the
    warnings are skipped, the caller's parameter names are recorded; a body of another
    form (two at:: calls) gives no row."""
    rows = evr.rows_of_file(POS_SRC, "X.cpp", "c0ffee", {})
    assert [r["function"] for r in rows] == ["my_op"]
    r = rows[0]
    assert r["cond"] == "(self_.dim() != 4) || (!((!dim_.has_value()) || " \
                        "(dim_.value() == self_.dim() - 1)))"
    assert r["cpu_call"] == "at::my_op(self_.cpu(), mask_.cpu(), dim_)"
    assert r["result_dtype"] == "" and r["params"] == ["self_", "mask_", "dim_"]
    assert r["source"]["line"] == 17
    # the availability switch inside a longer test drops out of the folded condition
    # (LogitBackwardKernelOpApi.cpp: `!is_aclnn_kernel_available || !is_support_soc`)
    assert evr._drop_constants("!((true)) || !(soc_ok)") == "!(soc_ok)"
    assert evr._drop_constants("a || (true)") == "true"
    assert evr._drop_constants("a ? b : c || !(true)") == "a ? b : c || !(true)"


def test_masked_softmax_takes_upstreams_cpu_route_in_both_members(db):
    """op-plugin MaskedSoftMaxKernelNpuOpApi.cpp:72 runs at::_masked_softmax on the CPU
    unless `self` is 4-D, `dim` the last and `mask_type` 2; before this ours sent every call
    to aclnnScaledMaskedSoftmax (the seventh audit's row 23). The route's names are the
    op's (`self`, not upstream's `self_`), and the `.out` member, which upstream lacks,
    takes the functional's route."""
    r = prepare(db, "aclnnScaledMaskedSoftmax", "torch", op="aten::_masked_softmax",
                layout="in-tree")
    (text,) = [v for k, v in r.files.items() if k.endswith("KernelNpuOpApi.cpp")]
    cond = ("if ((self.dim() != 4) || (!((!dim.has_value()) || (dim.value() == -1) || "
            "(dim.value() == self.dim() - 1))) || (!mask_type.has_value()) || "
            "(mask_type != 2)) {")
    call = "at::Tensor opgen_cpu_result = at::_masked_softmax(self.cpu(), mask.cpu(), dim, mask_type);"
    for sig in ("at::Tensor _masked_softmax(", "at::Tensor& _masked_softmax_out("):
        body = _fn(text, sig)
        assert cond in body and call in body, sig
        assert body.index(cond) < body.index(call) < body.index("EXEC_NPU_CMD(")
        # `dim` and `mask_type` are handled by the route: no "not passed" TODO for them
        assert "framework param `dim`" not in body and "framework param `mask_type`" not in body
    from codegen.torch_value_route import route_lines
    from opdb.op_plugin_routes import ValueRoute
    renamed = ValueRoute("aclnnX", "x_.dim() != 4", "at::x(x_.cpu())", "", "e", ("x_",))
    assert route_lines([renamed], "aclnnX", "functional", {"self"}, "out", ("self",))[1] == \
        "if (self.dim() != 4) {"
    assert route_lines([renamed], "aclnnX", "functional", {"self"}, "out") == []  # no order
