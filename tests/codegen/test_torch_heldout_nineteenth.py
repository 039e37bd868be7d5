"""Mechanisms found by scoring the nineteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 19 -n 12 --before 202`) against op-plugin
517f2e7d (docs/opgen.md, "Nineteenth sample"). Nothing keys on an API or op name in code;
the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_a_version_guarded_by_check_aclnn_kernel_available_is_the_main_route():
    """HardSwishBackwardKernelNpuOpApi.cpp (torch >= 2.8): `check_aclnn_kernel_available(
    "aclnnHardswishBackwardV2")` picks V2, V1 runs only without it. A checked API that is
    no version of the guarded one is no route."""
    from opdb.op_plugin_routes import family_main_routes, main_route
    api, why = main_route("aten::hardswish_backward")
    assert api == "aclnnHardswishBackwardV2"
    assert "HardSwishBackwardKernelNpuOpApi.cpp:34" in why and "check_aclnn_kernel_available" in why
    assert main_route("aten::hardswish_backward.out") is None  # no op-plugin adapter
    fam = family_main_routes(["aten::hardswish_backward", "aten::hardswish_backward.out"])
    assert fam["aten::hardswish_backward.out"][0] == "aclnnHardswishBackwardV2"
    assert main_route("aten::mul.Tensor") is None


def test_hardswish_backward_runs_v2_in_both_members(db):
    """V1 is 0 only for self < -3, V2 (and torch >= 2.8) for self <= -3 (ops-nn
    aclnnHardswishBackward.md, aclnnHardswishBackwardV2.md); before, both members called
    V1, the API asked for."""
    r = prepare(db, "aclnnHardswishBackward", "torch", op="aten::hardswish_backward")
    text = r.files[ADAPTER.format("HardswishBackward")]
    for head in ("at::Tensor hardswish_backward(", "at::Tensor& hardswish_backward_out("):
        body = _fn(text, head)
        assert "EXEC_NPU_CMD(aclnnHardswishBackwardV2, grad_output, self, " in body, head
        assert "EXEC_NPU_CMD(aclnnHardswishBackward, " not in body, head


def test_add_keeps_aclnn_add(db):
    """AddKernelNpuOpApi.cpp also checks aclnnAddV3's kernel, whose `self` is an
    aclScalar: the fact does not make it add.Tensor's API (no tie with aclnnAdd)."""
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor")
    body = _fn(r.files[ADAPTER.format("Add")], "at::Tensor add(")
    assert "EXEC_NPU_CMD(aclnnAdd, self, other, " in body


def test_a_factory_ops_composite_kernel_is_probed_with_device_meta():
    """`aten::range` has a CompositeExplicitAutograd kernel and no Meta one; probed with
    no `device` it made a CPU tensor, so the factory rule did not fire."""
    from codegen import torch_facts
    assert torch_facts.meta_kernel("aten::range") is True


def test_a_sibling_overloads_default_is_read_from_torch():
    from codegen.torch_facts import sibling_default
    assert sibling_default("aten::range", "step") == ("1", "aten::range.step")
    assert sibling_default("aten::range.step", "step") is None  # the op has it
    assert sibling_default("aten::arange", "step") is None  # arange.start_step adds `start` too


def test_range_allocates_its_output_and_passes_step_1(db):
    """RangeKernelNpuOpApi.cpp: range(start, end, ...) calls range(start, end, 1, ...),
    sized by its options. Before, `out` was never allocated and `step` was nullptr."""
    r = prepare(db, "aclnnRange", "torch", op="aten::range")
    body = _fn(r.files[ADAPTER.format("Range")], "at::Tensor range(")
    assert "auto meta = at::range(start, end, dtype, layout, at::Device(at::kMeta), pin_memory);" in body
    assert "at::Tensor out = npu_preparation::apply_tensor_without_format(meta.sizes()" in body
    assert "at::Scalar acl_step = 1;" in body
    assert "EXEC_NPU_CMD(aclnnRange, start, end, acl_step, out);" in body
    assert "TODO(opgen)" not in body


def test_an_out_member_with_no_meta_function_is_sized_as_its_functional(db):
    """BatchNormElemtKernelNpuOpApi.cpp: `check_tensor({input, ...}, out, input)` resizes
    `out` to `input`'s sizes, as the functional allocates it. Before, ours neither checked
    nor resized `out`, so `out=` with an empty tensor reached aclnn with the wrong shape.
    Only an empty `out` is resized (the size is a guess); an op torch does not know
    (`opgen::`, no functional) is left as it was."""
    r = prepare(db, "aclnnBatchNormElemt", "torch", op="aten::batch_norm_elemt")
    text = r.files[ADAPTER.format("BatchNormElemt")]
    body = _fn(text, "at::Tensor& batch_norm_elemt_out(")
    assert "if (out.numel() == 0) {" in body and "out.resize_(input.sizes());" in body
    assert "apply_tensor_without_format(input)" in _fn(text, "at::Tensor batch_norm_elemt(")


def test_linalg_qr_passes_its_mode_string_as_the_apis_code(db):
    """A reviewed per-API entry (arg_rules.yaml, evidence LinalgQrKernelNpuOpApi.cpp
    get_mode and aclnnLinalgQr.md): reduced 0, complete 1, r 2. Before, 0 for every mode."""
    r = prepare(db, "aclnnLinalgQr", "torch", op="aten::linalg_qr")
    body = _fn(r.files[ADAPTER.format("LinalgQr")], "std::tuple<at::Tensor, at::Tensor> linalg_qr(")
    assert '{"reduced", 0}, {"complete", 1}, {"r", 2}' in body
    assert "EXEC_NPU_CMD(aclnnLinalgQr, A, acl_mode, Q, R);" in body
    assert "int64_t acl_mode = 0;" not in body
