"""Mechanisms found by scoring the twentieth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 20 -n 12 --before 214`) against op-plugin
517f2e7d (docs/opgen.md, "Twentieth sample"). Nothing keys on an API or op name in code
except the reviewed per-API table entries the tests name; the tests name the upstream
adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_a_scalar_goes_to_the_one_unfed_tensor_of_an_api_without_aclscalar(db):
    """op-plugin __Rshift__KernelNpuOpApi.cpp: `__rshift__(self, Scalar other)` passes
    `copy_scalar_to_device(other, self.scalar_type(), self.device())` as aclnnRightShift's
    `shiftBits`. Before, `other` was dropped and `shiftBits` got nullptr (every call
    failed the API's null check). The pairing is by kind, so it keeps a review TODO."""
    r = prepare(db, "aclnnRightShift", "torch", op="aten::__rshift__.Scalar")
    body = _fn(r.files[ADAPTER.format("Rshift")], "at::Tensor __rshift__(")
    assert ("at::Tensor acl_shift_bits = npu_preparation::copy_scalar_to_device(other, "
            "self.scalar_type(), self.device());") in body
    assert "EXEC_NPU_CMD(aclnnRightShift, self, acl_shift_bits, out);" in body
    assert "nullptr" not in body
    assert "matched as the only Scalar on each side" in body
    # the Tensor overload still feeds `shiftBits` with `other` itself
    r = prepare(db, "aclnnRightShift", "torch", op="aten::__rshift__.Tensor")
    body = _fn(r.files[ADAPTER.format("Rshift")], "at::Tensor __rshift__(")
    assert "copy_scalar_to_device(other," not in body and "nullptr" not in body


def test_a_python_inplace_operator_is_the_inplace_member_of_its_family(db):
    """op-plugin __iRshift__KernelNpuOpApi.cpp: `__irshift__(Tensor(a!) self, Scalar)`
    runs aclnnRightShift with out = self. Before, `__irshift__` (its base ends in `__`)
    was taken for a functional op: aclnn `out` got nullptr and no family was found."""
    from codegen.torch_target import schema_of, schema_role
    r = prepare(db, "aclnnRightShift", "torch", op="aten::__irshift__.Scalar")
    text = r.files[ADAPTER.format("Irshift")]
    body = _fn(text, "at::Tensor& __irshift__(")
    assert "at::Tensor& out = self;" in body
    assert "EXEC_NPU_CMD(aclnnRightShift, self, acl_shift_bits, out);" in body
    assert "nullptr" not in body and "return self;" in body
    assert "at::Tensor __rshift__(const at::Tensor& self, const at::Scalar& other)" in text
    # `__rshift__` itself stays functional
    assert schema_role(schema_of(db.framework_op("torch", "aten::__rshift__.Scalar"))) \
        == "functional"


def test_masked_softmax_scales_by_one_reviewed_entry(db):
    """A reviewed per-API entry (arg_rules.yaml, evidence MaskedSoftMaxKernelNpuOpApi.cpp:
    `double scale = 1.0; bool fixed_triu_mask = false`). Before, `scale` was the
    placeholder 0.0: every score multiplied by 0, a uniform softmax."""
    r = prepare(db, "aclnnScaledMaskedSoftmax", "torch", op="aten::_masked_softmax")
    body = _fn(r.files[ADAPTER.format("MaskedSoftmax")], "at::Tensor _masked_softmax(")
    assert "double acl_scale = 1.0;" in body
    assert "bool acl_fixed_triu_mask = false;" in body
    assert "placeholder" not in body


def test_a_word_with_an_axis_letter_is_the_word_and_picks_the_main_route(db):
    """op-plugin UpsampleNearest1dKernelNpuOpApi.cpp: the main route is
    aclnnUpsampleNearest1dV2(self, output_size, (float) scales.value_or(-1.0), out), V1
    (no scales) only its DO_COMPATIBILITY fallback. Before, V2's `scaleL` matched nothing,
    so V1 fitted better and `interpolate(scale_factor=s)` lost its scale. An unset scale
    is 0.0: ops-cv aclnn_upsample_nearest_1d_v2.cpp and the tiling read any scale <= 0
    as unset (`scaleL > 0`, ComputeScaleValue `scale > ZERO_FLOAT`), as -1."""
    from codegen.argmap import FwParam, _axis_pairs
    r = prepare(db, "aclnnUpsampleNearest1d", "torch", op="aten::upsample_nearest1d")
    body = _fn(r.files[ADAPTER.format("UpsampleNearest1d")], "at::Tensor upsample_nearest1d(")
    assert "float acl_scale_l = static_cast<float>(scales.value_or(0.0));" in body
    assert "EXEC_NPU_CMD(aclnnUpsampleNearest1dV2, self, output_size, acl_scale_l, out);" in body
    # two axis params of one word (a 2-d op) pair with nothing by this rule
    api = db.aclnn_api("aclnnUpsampleBilinear2dBackwardV2")
    f = FwParam("scales", "float", "c10::optional<double>", optional=True)
    assert _axis_pairs(api, [None] * len(api.params), [f]) == []
