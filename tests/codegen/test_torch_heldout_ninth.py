"""Mechanisms found by scoring the ninth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 9 --before 82`) against op-plugin 517f2e7d
(docs/opgen.md, "Ninth sample"): a tensor-list call outside what the aclnn API takes
(torch's fast-route checks, a dtype the API lacks on the SoC) runs torch's own
CompositeExplicitAutograd kernel, long lists go to the API in calls of at most N tensors
(op-plugin's per-API limits, extracted into opdb), and a number the op returns is read
back from the API's one-element output. None keys on an API name in code; each test
names the upstream adapter."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_list_call_outside_the_api_goes_to_torchs_own_kernel(db):
    """op-plugin ForeachSignKernelNpuOpApi.cpp: `!can_use_fast_route(self)` or a dtype
    aclnnForeachSign lacks returns `at::native::foreach_tensor_sign_slow(self)` (the
    CompositeExplicitAutograd kernel native_functions.yaml names); the in-place member
    its `_` kernel. Before, every list went to aclnn."""
    r = prepare(db, "aclnnForeachSign", "torch", op="aten::_foreach_sign")
    text = r.files[ADAPTER.format("ForeachSign")]
    assert "#include <ATen/native/ForeachUtils.h>" in text
    body = _fn(text, "std::vector<at::Tensor> _foreach_sign(")
    assert "at::native::check_foreach_api_restrictions(self);" in body
    assert "if (!at::native::can_use_fast_route({self}) || !(self[0].scalar_type() == " in body
    assert "        return at::native::foreach_tensor_sign_slow(self);" in body
    assert body.index("foreach_tensor_sign_slow(") < body.index("EXEC_NPU_CMD(")
    # no acl_op fallback: a CANN without the API runs torch's kernel (upstream's DO_COMPATIBILITY)
    assert "DO_COMPATIBILITY(aclnnForeachSign, at::native::foreach_tensor_sign_slow(self));" in body
    inplace = _fn(text, "void _foreach_sign_(")
    assert "        at::native::foreach_tensor_sign_slow_(self);\n        return;" in inplace
    assert not r.todos


def test_dtype_part_of_the_route_is_the_apis_own_dtypes(db):
    """aclnnForeachSigmoid takes FLOAT32/FLOAT16/BFLOAT16 only, so integer lists go to
    torch's kernel (upstream: `has_integral_tensor(self, true)`); aclnnForeachSign also
    takes INT32/INT64 (upstream: `check_dtype_foreach(..., TO_INT)`)."""
    sig = _fn(prepare(db, "aclnnForeachSigmoid", "torch", op="aten::_foreach_sigmoid")
              .files[ADAPTER.format("ForeachSigmoid")], "std::vector<at::Tensor> _foreach_sigmoid(")
    route = sig[sig.index("if (!at::native::can_use_fast_route"):].split("\n")[0]
    assert "at::kFloat" in route and "at::kHalf" in route and "at::kBFloat16" in route
    assert "at::kInt" not in route and "at::kLong" not in route
    sign = _fn(prepare(db, "aclnnForeachSign", "torch", op="aten::_foreach_sign")
               .files[ADAPTER.format("ForeachSign")], "std::vector<at::Tensor> _foreach_sign(")
    route = sign[sign.index("if (!at::native::can_use_fast_route"):].split("\n")[0]
    assert "at::kInt" in route and "at::kLong" in route


def test_long_lists_go_in_calls_of_upstreams_size(db):
    """op-plugin ForeachSubKernelNpuOpApi.cpp `_split_and_exec_npu_cmd_sub`: at most 16
    tensors per call out of place, 24 in place; every list argument cut the same way,
    the Scalar `alpha` passed whole; the fast-route check takes `alpha` too."""
    r = prepare(db, "aclnnForeachSubList", "torch", op="aten::_foreach_sub.List")
    text = r.files[ADAPTER.format("ForeachSub")]
    fn = _fn(text, "std::vector<at::Tensor> _foreach_sub(")
    assert "at::native::can_use_fast_route({self, other}, alpha)" in fn
    assert "for (size_t opgen_i = 0; opgen_i < self.size(); opgen_i += 16) {" in fn
    assert "const size_t opgen_len = std::min<size_t>(16, self.size() - opgen_i);" in fn
    assert ("EXEC_NPU_CMD(aclnnForeachSubListV2, opgen_x1_part, opgen_x2_part, acl_alpha, "
            "opgen_out_part);") in fn
    inplace = _fn(text, "void _foreach_sub_(")
    assert "opgen_i += 24) {" in inplace
    assert "        return at::native::foreach_tensor_sub_list_kernel_slow(self, other, alpha);" in fn


def test_out_member_copies_torchs_result_into_the_out_list(db):
    """`_foreach_sign.out` is generated code in torch (no at::native kernel): outside
    the API's limits the functional kernel runs and each result is copied into `out`."""
    text = prepare(db, "aclnnForeachSign", "torch", op="aten::_foreach_sign") \
        .files[ADAPTER.format("ForeachSign")]
    out = _fn(text, "void _foreach_sign_out(")
    assert "std::vector<at::Tensor> opgen_slow = at::native::foreach_tensor_sign_slow(self);" in out
    assert "out[i].copy_(opgen_slow[i]);" in out


def test_call_with_a_per_element_host_tensor_is_split_with_it(db):
    """aclnnForeachAddcmulScalarList also takes a `scalars` tensor with one value per
    list element; upstream slices it with `scalars.slice(0, ...)` for each call. Since
    `ws/h9t7` (torch_facts.host_per_element_tensors) opgen knows it is per element and
    cuts its device copy with the lists; before, that call was not split. The slow
    route is there as before."""
    r = prepare(db, "aclnnForeachAddcmulScalarList", "torch", op="aten::_foreach_addcmul.Tensor")
    fn = _fn(r.files[ADAPTER.format("ForeachAddcmul")], "void _foreach_addcmul_(")
    assert "at::native::foreach_tensor_addcmul_tensor_slow_(self, tensor1, tensor2, scalars);" in fn
    assert "auto opgen_scalars_part = scalars_device.slice(0, opgen_i, opgen_i + opgen_len);" in fn


def test_list_api_without_upstream_limits_gets_no_route(db):
    """aclnnFusedSgd has no row in op_plugin_call_limits.jsonl (FusedSgdKernelOpApi.cpp
    neither splits nor routes): no slow route and one call, as before."""
    assert tensors_per_call("aclnnFusedSgd") is None
    r = prepare(db, "aclnnFusedSgd", "torch", op="aten::_fused_sgd_")
    text = r.files[ADAPTER.format("FusedSgd")]
    assert "can_use_fast_route" not in text and "opgen_i" not in text
    assert "ForeachUtils.h" not in text


def test_limits_come_from_upstream_with_provenance():
    """The shipped rows: per API, in place and out of place, where upstream says so."""
    lim = tensors_per_call("aclnnForeachSubListV2")
    assert (lim.inplace, lim.out_of_place, lim.fast_route) == (24, 16, True)
    assert lim.where == "Ascend/op-plugin op_plugin/ops/opapi/ForeachSubKernelNpuOpApi.cpp:66"
    assert tensors_per_call("aclnnForeachSign").per_call(True) == 48
    assert tensors_per_call("aclnnAdd") is None


def test_extractor_reads_ternary_and_named_limits_per_function():
    """Constant names resolve through ForeachConstants.h; each function's own APIs get
    its limit; a one-tensor loop (a norm) and a file without can_use_fast_route are
    told apart."""
    src = """namespace op_api {
void _split_a(const at::TensorList x, at::TensorList r, bool is_inplace) {
  size_t max_tensor_count = is_inplace ? SINGLE : DOUBLE;
  if (x.size() <= max_tensor_count) { EXEC_NPU_CMD(aclnnA, x, r); return; }
}
void _split_b(const at::TensorList x, at::TensorList r) {
  size_t max_tensor_count = 1;  // "{" in a comment
  EXEC_NPU_CMD(aclnnB, x, r);
}
std::vector<at::Tensor> f(at::TensorList x) {
  if (!at::native::can_use_fast_route(x)) { return slow(x); }
  EXEC_NPU_CMD(aclnnC, x);
}
}  // namespace op_api
"""
    rows = rows_of_file(src, "op_plugin/ops/opapi/X.cpp", {"SINGLE": 48, "DOUBLE": 24})
    assert [(r["api"], r["inplace"], r["out_of_place"], r["fast_route"], r["source"]["line"])
            for r in rows] == [("aclnnA", 48, 24, True, 3)]
    assert rows_of_file(src.replace("can_use_fast_route", "other"), "p", {"SINGLE": 48,
                        "DOUBLE": 24})[0]["fast_route"] is False


def test_explicit_kernel_names_from_native_functions():
    assert torch_facts.explicit_kernel("aten::_foreach_sign_") == "foreach_tensor_sign_slow_"
    assert torch_facts.explicit_kernel("aten::_foreach_sub.List") == \
        "foreach_tensor_sub_list_kernel_slow"
    assert torch_facts.explicit_kernel("aten::_foreach_sign.out") is None  # autogen
    assert torch_facts.explicit_kernel("aten::add.Tensor") is None  # structured, no CEA


def test_number_result_is_read_back_from_the_apis_one_element_output(db):
    """op-plugin EqualKernelNpuOpApi.cpp: `equal(...) -> bool` allocates a {1} bool
    tensor for aclnnEqual's `out` and returns `result.item().to<bool>()`. Before, the
    adapter returned a constant `false` (TODO) and passed nullptr as `out`."""
    r = prepare(db, "aclnnEqual", "torch", op="aten::equal")
    body = _fn(r.files[ADAPTER.format("Equal")], "bool equal(")
    assert ("at::Tensor opgen_result = npu_preparation::apply_tensor_without_format({1}, "
            "self.options().dtype(at::kBool));") in body
    assert "EXEC_NPU_CMD(aclnnEqual, self_device, other_device, opgen_result);" in body
    assert body.rstrip().endswith("return opgen_result.item().to<bool>();")
    assert "nullptr" not in body and "bool out = false;" not in body
    assert not r.todos
    binding = r.files["standalone/src/binding.cpp"]
    assert "at::Tensor opgen_result = at::empty({1}, self.options().dtype(at::kBool));" in binding


def test_route_dtypes_follow_the_chosen_soc(db, monkeypatch):
    """The dtype clause is the API's dtypes on `--soc` (opdb.soc_dtypes). No foreach
    API has a per-product cut in the shipped extract today, so a cut is injected: on
    ascend910 without bfloat16, bfloat16 lists take torch's kernel there and not on the
    default chip."""
    import opdb.soc_dtypes as sd
    real = sd.soc_dtypes

    def cut(api, soc, dtypes, param=None):
        if api == "aclnnForeachSigmoid" and soc == "ascend910":
            return [d for d in dtypes if d != "bfloat16"], ["doc:1"]
        return real(api, soc, dtypes, param)
    monkeypatch.setattr(sd, "soc_dtypes", cut)

    def route(soc):
        text = prepare(db, "aclnnForeachSigmoid", "torch", op="aten::_foreach_sigmoid",
                       soc=soc).files[ADAPTER.format("ForeachSigmoid")]
        fn = _fn(text, "std::vector<at::Tensor> _foreach_sigmoid(")
        return fn[fn.index("if (!at::native::can_use_fast_route"):].split("\n")[0]
    assert "at::kBFloat16" in route(None)
    on_910 = route("ascend910")
    assert "at::kBFloat16" not in on_910 and "at::kFloat" in on_910
    assert "dtypes on ascend910," in on_910
