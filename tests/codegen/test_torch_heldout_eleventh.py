"""Mechanisms found by scoring the eleventh held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 11 --before 106`) against op-plugin 517f2e7d
(docs/opgen.md, "Eleventh sample"): the inflection pairing of names (`train` /
`training`) also pairs lists of numbers (`split_sizes` / `splitSize`). None keys on an
API name in code; the render tests name the upstream adapter."""
from __future__ import annotations

from codegen.argmap import map_args
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture
from tests.codegen.torch_adapter_parts import aclnn_api as _api, fw_param as _fw, mapped_names as _got

db = shipped_db_fixture()


def test_int_lists_pair_up_to_an_inflection():
    """torch `split_sizes` (int[]) is aclnn `splitSize` (aclIntArray*). Before, only
    plain numbers, bools and strings paired, so `splitSize` was a nullptr placeholder."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
             ("splitSize", "const aclIntArray*", "input"), ("dim", "int64_t", "input"),
             ("out", "aclTensorList*", "output"))
    fws = [_fw("self", "tensor"), _fw("split_sizes", "int_array"), _fw("dim", "int"),
           _fw("out", "tensor_list", is_output=True)]
    m = map_args(a, fws, "torch")
    assert _got(m)["splitSize"] == ("split_sizes", "inflection")
    assert not m.todos


def test_int_list_inflection_keeps_kind_and_partner_limits():
    """An int list never pairs with a plain int of an inflected name, nor with a
    float list; two inflected partners pair nothing."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
             ("splitSize", "const aclIntArray*", "input"), ("out", "aclTensor*", "output"))
    base = [_fw("self", "tensor"), _fw("out", "tensor", is_output=True)]
    assert _got(map_args(a, base + [_fw("split_sizes", "int")], "torch"))["splitSize"][0] is None
    assert _got(map_args(a, base + [_fw("split_sizes", "float_array")], "torch"))["splitSize"][0] \
        is None
    two = base + [_fw("split_sizes", "int_array"), _fw("split_sized", "int_array")]
    assert _got(map_args(a, two, "torch"))["splitSize"][0] is None


def test_split_with_sizes_copy_passes_split_sizes(db):
    """op-plugin SplitWithSizesCopyNpuOpApi.cpp: `EXEC_NPU_CMD(aclnnSplitWithSize, self,
    split_sizes, dim, out)`; opgen passed nullptr as the required `splitSize`."""
    r = prepare(db, "aclnnSplitWithSize", "torch", op="aten::split_with_sizes_copy.out")
    body = _fn(r.files[ADAPTER.format("SplitWithSizesCopy")],
               "void split_with_sizes_copy_out(")
    assert "EXEC_NPU_CMD(aclnnSplitWithSize, self, split_sizes, dim, out);" in body
    assert "acl_split_size" not in body
    assert not r.todos


def test_tensor_lists_feed_a_per_tensor_api_one_element_per_call():
    """An op over tensor lists on an API that takes one tensor of each: the lists whose
    names (or aliases) are the tensors' map with decision `element`, no TODO. Before,
    the lists stayed unpassed and the op's optional tensors took the API's tensors by
    position."""
    a = _api("aclnnFoo", ("varRef", "aclTensor*", "inout"), ("grad", "const aclTensor*", "input"),
             ("maxGradNormOptionalRef", "aclTensor*", "inout"), ("lr", "float", "input"))
    fws = [_fw("self", "tensor_list", mutable=True), _fw("grads", "tensor_list"),
           _fw("max_exp_avg_sqs", "tensor_list"), _fw("lr", "float"),
           _fw("grad_scale", "tensor", optional=True)]
    got = _got(map_args(a, fws, "torch"))
    assert got["varRef"] == ("self", "element")
    assert got["grad"] == ("grads", "element")
    assert got["maxGradNormOptionalRef"] == ("max_exp_avg_sqs", "element")
    # paddle is unchanged
    assert _got(map_args(a, fws, "paddle"))["grad"][1] != "element"


def test_no_per_element_calls_when_the_api_takes_lists_or_the_op_a_plain_tensor():
    """An API with a tensor list is called with the lists (the foreach APIs); an op
    with a required plain tensor next to its lists is not a per-element op."""
    listy = _api("aclnnFoo", ("x", "const aclTensorList*", "input"),
                 ("grad", "const aclTensor*", "input"), ("out", "aclTensorList*", "output"))
    fws = [_fw("x", "tensor_list"), _fw("grads", "tensor_list"),
           _fw("out", "tensor_list", is_output=True)]
    assert _got(map_args(listy, fws, "torch"))["grad"][1] != "element"
    single = _api("aclnnFoo", ("grad", "const aclTensor*", "input"), ("out", "aclTensor*", "output"))
    fws = [_fw("grads", "tensor_list"), _fw("scale", "tensor"), _fw("out", "tensor", is_output=True)]
    assert _got(map_args(single, fws, "torch"))["grad"][1] != "element"


def test_fused_adamw_calls_apply_adam_w_v2_per_parameter(db):
    """op-plugin FusedAdamWKernelNpuOpApi.cpp: the list sizes checked, then per
    parameter i aclnnApplyAdamWV2(self[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i]
    or nullopt when that list is empty, grads[i], state_steps[i].sub(1), ...). opgen
    passed `grad_scale`/`found_inf` as varRef/mRef and nullptr for vRef, grad and step."""
    r = prepare(db, "aclnnApplyAdamWV2", "torch", op="aten::_fused_adamw_")
    body = _fn(r.files[ADAPTER.format("FusedAdamw")], "void _fused_adamw_(")
    assert "for (size_t opgen_i = 0; opgen_i < self.size(); ++opgen_i) {" in body
    assert ("EXEC_NPU_CMD(aclnnApplyAdamWV2, self[opgen_i], exp_avgs[opgen_i], "
            "exp_avg_sqs[opgen_i], acl_max_grad_norm_optional_ref, grads[opgen_i], acl_step, "
            "acl_lr, acl_beta1, acl_beta2, acl_weight_decay, acl_eps, amsgrad, maximize);") in body
    assert "at::Tensor acl_step = state_steps[opgen_i].sub(1);" in body
    assert ("max_exp_avg_sqs.empty() ? c10::optional<at::Tensor>() : "
            "c10::optional<at::Tensor>(max_exp_avg_sqs[opgen_i]);") in body
    assert 'TORCH_CHECK(grads.size() == self.size(), ' in body
    assert 'TORCH_CHECK(max_exp_avg_sqs.empty() || max_exp_avg_sqs.size() == self.size(), ' in body
    assert body.index("TORCH_CHECK(state_steps.size()") < body.index("for (size_t opgen_i")
    # the loop is in the standalone binding too (its arguments read opgen_i)
    binding = next(v for k, v in r.files.items() if k.endswith("binding.cpp"))
    assert "for (size_t opgen_i = 0; opgen_i < self.size(); ++opgen_i) {" in binding
    assert [t for t in r.todos if "grad_scale" not in t] == []
