"""Mechanisms found by scoring the seventh held-out torch sample against op-plugin
517f2e7d (docs/opgen.md, "Seventh sample"): an unset `int? dim` as every dim for an aclnn
dim list (aminmax), names equal once underscores are dropped (`numsamples`), a random
API's seed and offset drawn from the op's generator (uniform_, multinomial, bernoulli_),
torch's reduce string as aclnn's int (scatter_reduce), the generated functional / .out of
an in-place op left to torch (_fused_sgd_), and a fused optimizer's `found_inf` skipping
the step. Each test names the upstream adapter; none keys on an API name in code."""
from __future__ import annotations

import pytest

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_unset_int_dim_is_every_dim_for_an_aclnn_dim_list(db):
    """op-plugin AminmaxKernelNpuOpApi.cpp: an unset `dim` passes get_dimlist_for_tensor
    (self) to aclnnAminmax. Before, `{dim.value_or(0)}` reduced dim 0 only while the
    meta function sized a 0-d output."""
    assert torch_facts.unset_dim_reduces_all("aten::aminmax") is True
    r = prepare(db, "aclnnAminmax", "torch", op="aten::aminmax")
    body = _fn(r.files[ADAPTER.format("Aminmax")], "std::tuple<at::Tensor, at::Tensor> aminmax(")
    assert "value_or(0)" not in body
    assert "if (dim.has_value()) {\n        acl_dim_vec.push_back(*dim);" in body
    assert "acl_dim_vec.push_back(i);  // unset: every dim" in body
    assert "EXEC_NPU_CMD(aclnnAminmax, self, acl_dim, keepdim, min, max);" in body
    assert not r.todos


def test_names_equal_without_underscores_match_by_name(db):
    """aclnnMultinomial's `numsamples` is torch's `num_samples`
    (MultinomialKernelNpuOpApi.cpp passes num_samples). Before: 0 with a TODO."""
    from codegen.argmap import FwParam, map_args
    api = db.aclnn_api("aclnnMultinomial")
    amap = map_args(api, [FwParam("self", "tensor", "const at::Tensor&"),
                          FwParam("num_samples", "int", "int64_t"),
                          FwParam("replacement", "bool", "bool"),
                          FwParam("out", "tensor", "at::Tensor&", is_output=True)])
    m = next(p for p in amap.params if p.aclnn.name == "numsamples")
    assert (m.fw.name, m.decision, m.todo) == ("num_samples", "name", "")


def test_random_api_seed_and_offset_come_from_the_generator(db):
    """op-plugin UniformKernelNpuOpApi.cpp, MultinomialKernelNpuOpApi.cpp,
    BernoulliKernelNpuOpApi.cpp: seed and offset are one philox_engine_inputs draw of
    the NPU generator. Before: both 0 with TODOs, so every call drew the same numbers.
    Each takes the parameter's own C type (uint64_t for aclnnInplaceUniform, int64_t for
    aclnnMultinomial)."""
    r = prepare(db, "aclnnInplaceUniform", "torch", op="aten::uniform_")
    text = r.files[ADAPTER.format("Uniform")]
    body = _fn(text, "at::Tensor& uniform_(")
    assert "opgen_philox = opgen_philox_inputs(generator, self);" in body
    assert "uint64_t acl_seed = static_cast<uint64_t>(opgen_philox.first);" in body
    assert "uint64_t acl_offset = static_cast<uint64_t>(opgen_philox.second);" in body
    assert body.count("opgen_philox_inputs(") == 1  # one draw for both
    assert "EXEC_NPU_CMD(aclnnInplaceUniform, self, from, to, acl_seed, acl_offset);" in body
    assert not r.todos
    # the helper: the NPU generator and op-plugin's counter offset, with their headers
    assert '#include "op_plugin/utils/RandomUtil.h"' in text
    assert "at::get_generator_or_default<at_npu::NPUGeneratorImpl>(" in text
    assert "op_plugin::utils::calc_final_counter_offset(counted)" in text
    # the binding (no torch_npu) stands in with the given or default CPU generator
    assert "at::detail::getDefaultCPUGenerator()" in r.files["standalone/src/binding.cpp"]

    m = prepare(db, "aclnnMultinomial", "torch", op="aten::multinomial")
    body = _fn(m.files[ADAPTER.format("Multinomial")], "at::Tensor multinomial(")
    assert "int64_t acl_seed = static_cast<int64_t>(opgen_philox.first);" in body
    assert "EXEC_NPU_CMD(aclnnMultinomial, self, num_samples, replacement, acl_seed, " \
           "acl_offset, out);" in body
    assert not m.todos

    # an API without a generator never gets the helper
    gelu = prepare(db, "aclnnGelu", "torch", op="aten::gelu").files
    assert not any("opgen_philox" in v for k, v in gelu.items() if k.endswith(".cpp"))


def test_bernoulli_probability_alias(db):
    """op-plugin BernoulliKernelNpuOpApi.cpp: at::Scalar(p) is aclnnInplaceBernoulli's
    `prob` (reviewed alias). Before: nullptr for the required scalar, with a TODO."""
    r = prepare(db, "aclnnInplaceBernoulli", "torch", op="aten::bernoulli_.float")
    body = _fn(r.files[ADAPTER.format("Bernoulli")], "at::Tensor& bernoulli_(")
    assert "at::Scalar acl_prob(p);" in body
    assert "EXEC_NPU_CMD(aclnnInplaceBernoulli, self, acl_prob, acl_seed, acl_offset);" in body
    assert not r.todos


def test_reduce_string_becomes_aclnn_int(db):
    """op-plugin ScatterReduceKernelNpuOpApi.cpp (REDUCE_TYPE_MAP) and
    ScatterKernelNpuOpApi.cpp (reduction 0 without a reduce string). Before: the string
    unused and 0 (none) passed, so every reduction ran as a plain scatter."""
    r = prepare(db, "aclnnScatterReduce", "torch", op="aten::scatter_reduce.two")
    text = r.files[ADAPTER.format("ScatterReduce")]
    body = _fn(text, "at::Tensor scatter_reduce(")
    for pair in ('{"sum", 1}', '{"prod", 2}', '{"amax", 3}', '{"amin", 4}', '{"mean", 5}'):
        assert pair in body
    assert "TORCH_CHECK(acl_reduce >= 0," in body
    assert "EXEC_NPU_CMD(aclnnScatterReduce, out, dim, index, src, acl_reduce, " \
           "include_self, out);" in body
    assert "acl_reduce" in _fn(text, "at::Tensor& scatter_reduce_(")
    assert not r.todos
    v = prepare(db, "aclnnScatterValue", "torch", op="aten::scatter.value")
    body = _fn(v.files[ADAPTER.format("Scatter")], "at::Tensor& scatter_(")
    assert "int64_t acl_reduce = 0;" in body
    assert not v.todos


def test_generated_members_of_an_inplace_op_are_left_to_torch(db):
    """torch autogenerates `_fused_sgd` and `_fused_sgd.out` (tag `generated`,
    CompositeExplicitAutograd kernels running `_fused_sgd_` on copies); op-plugin
    FusedSgdKernelOpApi.cpp registers `_fused_sgd_` alone. Before: both were generated
    with their list outputs never computed (8 TODOs). A functional torch does not
    generate (`index_fill.int_Scalar`) keeps its family, generated `.out` included."""
    assert torch_facts.generated_from_inplace("aten::_fused_sgd") is True
    assert torch_facts.generated_from_inplace("aten::_fused_sgd.out") is True
    assert torch_facts.generated_from_inplace("aten::add.out") is False
    assert torch_facts.generated_from_inplace("aten::index_fill.int_Scalar") is False
    r = prepare(db, "aclnnFusedSgd", "torch", op="aten::_fused_sgd_")
    text = r.files[ADAPTER.format("FusedSgd")]
    assert "void _fused_sgd_(" in text
    assert "_fused_sgd(" not in text and "_fused_sgd_out(" not in text
    fill = prepare(db, "aclnnIndexFill", "torch", op="aten::index_fill.int_Scalar")
    text = fill.files[ADAPTER.format("IndexFill")]
    assert "at::Tensor index_fill(" in text and "at::Tensor& index_fill_(" in text
    assert "index_fill_out(" in text


def test_found_inf_skips_the_step(db):
    """op-plugin FusedSgdKernelOpApi.cpp: found_inf of 1 returns before aclnnFusedSgd
    (arg_rules.yaml `torch_skips`). Before: found_inf unused with a TODO. The momentum
    list (`momentumBufferListOptionalRef`) now matches by name."""
    from codegen.argmap import norm_param
    assert norm_param("momentumBufferListOptionalRef") == "momentum_buffer_list"
    r = prepare(db, "aclnnFusedSgd", "torch", op="aten::_fused_sgd_")
    body = _fn(r.files[ADAPTER.format("FusedSgd")], "void _fused_sgd_(")
    skip = ("if (found_inf.has_value() && found_inf->defined() && "
            "found_inf->item().toFloat() == 1) {\n        return;")
    assert skip in body
    assert body.index(skip) < body.index("EXEC_NPU_CMD(aclnnFusedSgd")
    assert not r.todos


def test_torch_skips_entries_are_validated():
    from opdb.arg_rules import load, parse
    from opdb.errors import ParseError
    assert load().torch_skip_for("found_inf") is not None
    with pytest.raises(ParseError, match="torch_skips"):
        parse({"torch_skips": [{"param": "found_inf", "cond": "x == 1", "evidence": "e"}]})
    with pytest.raises(ParseError, match="torch_skips"):
        parse({"torch_skips": [{"param": "found_inf", "cond": "{param} == 1"}]})


def test_capture_route_of_a_random_api_found_by_signature(db):
    """op-plugin UniformKernelNpuOpApi.cpp / MultinomialKernelNpuOpApi.cpp: while the
    stream is being captured into an NPU graph, the generator's state goes as device
    tensors to aclnnInplaceUniformTensor / aclnnMultinomialTensor (philox_npu_state), so
    each replay draws new numbers. The sibling is found by signature: `seed, offset`
    become `seedTensor, offsetTensor, offset`. aclnnInplaceBernoulliTensor takes `prob`
    as a tensor and keeps int seed/offset: no capture route (upstream has none either)."""
    from codegen.variants import capture_variant
    assert capture_variant(db, db.aclnn_api("aclnnInplaceUniform")).name == \
        "aclnnInplaceUniformTensor"
    assert capture_variant(db, db.aclnn_api("aclnnMultinomial")).name == "aclnnMultinomialTensor"
    assert capture_variant(db, db.aclnn_api("aclnnInplaceBernoulli")) is None
    assert capture_variant(db, db.aclnn_api("aclnnGelu")) is None
    r = prepare(db, "aclnnInplaceUniform", "torch", op="aten::uniform_")
    text = r.files[ADAPTER.format("Uniform")]
    body = _fn(text, "at::Tensor& uniform_(")
    cond = "if (c10_npu::currentStreamCaptureStatusMayInitCtx() != c10_npu::CaptureStatus::None) {"
    assert cond in body
    assert "at_npu::PhiloxNpuState opgen_state = opgen_philox_state(generator, self);" in body
    assert "EXEC_NPU_CMD(aclnnInplaceUniformTensor, self, from, to, *opgen_state.seed_.ptr, " \
           "*opgen_state.offset_.ptr, acl_offset_intragraph);" in body
    # the uncaptured call is the else branch; only the base API falls back to acl_op
    assert body.index(cond) < body.index("} else {") < body.index(
        "EXEC_NPU_CMD(aclnnInplaceUniform, self")
    assert "DO_COMPATIBILITY(aclnnInplaceUniformTensor" not in text
    assert '#include "torch_npu/csrc/core/npu/NPUGraphsUtils.h"' in text
    # the binding runs the uncaptured call only
    assert "opgen_philox_state" not in r.files["standalone/src/binding.cpp"]
    bern = prepare(db, "aclnnInplaceBernoulli", "torch", op="aten::bernoulli_.float")
    assert "opgen_philox_state" not in bern.files[ADAPTER.format("Bernoulli")]


def test_out_arguments_answer_to_the_returns_they_alias(db):
    """`max.dim_max(..., Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values,
    Tensor(b!) indices)`: `max_values` is the indices (aclnnMaxDim `indices`, op-plugin
    MaxKernelNpuOpApi.cpp max_out(self, dim, keepdim, max, max_values)); once it matched
    by name, the one output left on each side is no guess. Before: three "matched by
    role" TODOs (docs/opgen.md, sixth sample)."""
    from codegen.argmap import map_args
    from codegen.torch_target import fw_params, parse_torch_schema
    op = db.framework_op("torch", "aten::max.dim_max")
    amap = map_args(db.aclnn_api("aclnnMaxDim"), fw_params(parse_torch_schema(op.schema)),
                    "torch")
    got = {p.aclnn.name: (p.fw.name, p.decision, p.todo) for p in amap.params
           if p.aclnn.role == "output"}
    assert got == {"indices": ("max_values", "name", ""), "out": ("max", "role", "")}
    r = prepare(db, "aclnnMaxDim", "torch", op="aten::max.dim")
    assert not r.todos
    text = r.files[ADAPTER.format("Max")]
    assert "EXEC_NPU_CMD(aclnnMaxDim, self, dim, keepdim, max, max_values);" in text
    assert "EXEC_NPU_CMD(aclnnMaxDim, self, dim, keepdim, values, indices);" in text


def test_fractional_scalar_for_an_aclnn_int_runs_on_the_cpu(db):
    """aclnnStd takes `correction` as int64; torch's is a Scalar (0.5 is valid). op-plugin
    StdKernelNpuOpApi.cpp / VarKernelNpuOpApi.cpp compute a value that is not a whole
    int64 on the CPU (`correction_fits_aclnn_int64`). Before, 0.5 was truncated to 0
    (docs/opgen.md, fifth sample's Std row)."""
    import torch
    x = torch.arange(6.0)
    assert not torch.equal(torch.std(x, correction=0.5), torch.std(x, correction=0))
    r = prepare(db, "aclnnStd", "torch", op="aten::std.correction")
    text = r.files[ADAPTER.format("Std")]
    cond = ("if (correction.has_value() && !(correction->isIntegral(true) || "
            "(correction->isFloatingPoint() && std::trunc(correction->toDouble()) == "
            "correction->toDouble() && std::abs(correction->toDouble()) < 9.2e18))) {")
    fn = _fn(text, "at::Tensor std(")
    assert cond in fn
    assert "    return at::std(self.cpu(), dim, correction, keepdim).to(self.options());" in fn
    assert fn.index(cond) < fn.index("EXEC_NPU_CMD(aclnnStd")
    out = _fn(text, "at::Tensor& std_out(")
    assert "at::Tensor opgen_cpu_result = at::std(self.cpu(), dim, correction, keepdim);" in out
    assert "out.copy_(opgen_cpu_result);" in out
    # no Scalar goes to an aclnn int: no CPU route
    gelu = prepare(db, "aclnnGelu", "torch", op="aten::gelu").files
    assert not any(".cpu()" in v for k, v in gelu.items() if k.startswith("in-tree/")
                   and k.endswith(".cpp"))
