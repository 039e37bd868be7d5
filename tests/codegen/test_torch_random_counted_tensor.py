"""A random API's seed and offset when the op has no `self` (docs/opgen.md, "Why torch
first passes fail, by mechanism"): torch's normal overloads take `mean` and/or `std`,
randperm only `n`. op-plugin 517f2e7d NormalKernelNpuOpApi.cpp draws their seed and
offset from the generator with the counter offset of the tensor the call writes
(`calc_final_counter_offset(out)` / `(result)`), as it counts `self` for normal_. Before,
the generator rule needed a `self`, so these got seed = offset = 0 with TODOs: every call
drew the same numbers. No test keys on an API name in code."""
from __future__ import annotations

import pytest

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


@pytest.mark.parametrize("api, op, out_sig, fn_sig, args", [
    ("aclnnNormalTensorFloat", "aten::normal.Tensor_float",
     "at::Tensor& normal_out(const at::Tensor& mean, double std,",
     "at::Tensor normal(const at::Tensor& mean, double std,", "mean, acl_std"),
    ("aclnnNormalFloatTensor", "aten::normal.float_Tensor",
     "at::Tensor& normal_out(double mean, const at::Tensor& std,",
     "at::Tensor normal(double mean, const at::Tensor& std,", "acl_mean, std"),
    ("aclnnNormalTensorTensor", "aten::normal.Tensor_Tensor",
     "at::Tensor& normal_out(const at::Tensor& mean, const at::Tensor& std,",
     "at::Tensor normal(const at::Tensor& mean, const at::Tensor& std,", "mean, std"),
])
def test_seed_counts_the_written_tensor_when_there_is_no_self(db, api, op, out_sig, fn_sig,
                                                               args):
    r = prepare(db, api, "torch", op=op)
    text = r.files[ADAPTER.format("Normal")]
    for sig in (out_sig, fn_sig):
        body = _fn(text, sig)
        assert "opgen_philox = opgen_philox_inputs(generator, out);" in body
        assert body.count("opgen_philox_inputs(") == 1  # one draw for seed and offset
        assert "int64_t acl_seed = static_cast<int64_t>(opgen_philox.first);" in body
        assert "int64_t acl_offset = static_cast<int64_t>(opgen_philox.second);" in body
        assert f"EXEC_NPU_CMD({api}, {args}, acl_seed, acl_offset, out);" in body
        # the output exists before the draw counts it
        assert body.index("opgen_philox_inputs(") > body.index("meta.sizes()")
    assert "placeholder" not in text
    assert not [t for t in r.todos if "seed" in t or "offset" in t or "generator" in t]


def test_an_op_with_self_still_counts_self(db):
    """uniform_ and multinomial keep `self` (UniformKernelNpuOpApi.cpp counts `self`,
    MultinomialKernelNpuOpApi.cpp reads `self.numel()` in aclnn-only mode)."""
    body = _fn(prepare(db, "aclnnMultinomial", "torch", op="aten::multinomial")
               .files[ADAPTER.format("Multinomial")], "at::Tensor multinomial(")
    assert "opgen_philox_inputs(generator, self);" in body


def test_factory_op_output_from_its_meta_function(db):
    """A factory op (no tensor input; torch's dtype/layout/device/pin_memory) allocates its
    output from the op's own meta function run on device Meta, with the caller's options,
    as NormalKernelNpuOpApi.cpp normal(mean, std, size, ...) and
    RandpermKernelNpuOpApi.cpp randperm(n, ...) do. Before: `at::Tensor out;` with an
    "allocate output" TODO, so aclnn got an undefined tensor (and the seed rule counted
    it)."""
    r = prepare(db, "aclnnNormalFloatFloat", "torch", op="aten::normal.float_float")
    body = _fn(r.files[ADAPTER.format("Normal")], "at::Tensor normal(double mean, double std,")
    assert ("auto meta = at::normal(mean, std, size, c10::nullopt, dtype, layout, "
            "at::Device(at::kMeta), pin_memory);") in body
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format(meta.sizes(), "
            "c10::TensorOptions().dtype(meta.scalar_type()).device(device).layout(layout)"
            ".pinned_memory(pin_memory));") in body
    assert body.index("apply_tensor_without_format(") < body.index("opgen_philox_inputs(")
    assert "opgen_philox_inputs(generator, out);" in body
    assert not r.todos  # size and the options are read by the allocation
    binding = r.files["standalone/src/binding.cpp"]
    assert "at::Tensor out = at::empty(meta.sizes(), at::TensorOptions().dtype(meta.scalar_type()));" \
        in binding

    p = prepare(db, "aclnnRandperm", "torch", op="aten::randperm")
    body = _fn(p.files[ADAPTER.format("Randperm")], "at::Tensor randperm(")
    assert "auto meta = at::randperm(n, dtype, layout, at::Device(at::kMeta), pin_memory);" in body
    assert "TODO(opgen): allocate output" not in body


def test_op_without_a_generator_draws_from_the_default_one(db):
    """randperm(n, dtype, ...) has no `Generator?`; RandpermKernelNpuOpApi.cpp calls the
    generator overload with c10::nullopt, i.e. the default NPU generator. Before: seed =
    offset = 0 with TODOs. The draw reserves upstream's constant 10
    (`philox_engine_inputs(10)`, opdb.call_limits `philox_reservation`, third audit)."""
    r = prepare(db, "aclnnRandperm", "torch", op="aten::randperm")
    body = _fn(r.files[ADAPTER.format("Randperm")], "at::Tensor randperm(")
    assert "opgen_philox = opgen_philox_inputs(c10::nullopt, static_cast<uint64_t>(10));" in body
    assert "EXEC_NPU_CMD(aclnnRandperm, n, acl_seed, acl_offset, out);" in body
    assert not r.todos


def test_offset_rule_only_with_a_seed_parameter(db):
    """The offset rule reads the seed rule's draw (`opgen_philox`). A capture-style API
    (aclnnDropoutGenMaskV2Tensor: `seedTensor, offsetTensor, offset`) has no `seed`, and
    its `offset` is the offset within the graph: the rule must not apply there (it would
    read an undeclared draw)."""
    r = prepare(db, "aclnnDropoutGenMaskV2Tensor", "torch", op="aten::native_dropout")
    text = "".join(v for k, v in r.files.items() if k.endswith(".cpp"))
    assert "opgen_philox" not in text
