"""The classifier on the shipped opdb: one real op per category, and the details each
category must carry (cast, drift, candidate + opgen command, decomposition)."""
from __future__ import annotations

import pytest

from analyzer.classify import ClassifyContext, classify_op, opdb_op_name
from opdb.query import OpDB


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    import os

    os.environ.setdefault("OPSCAN_CACHE", str(tmp_path_factory.mktemp("cache")))
    return OpDB.open(overlay=False)


def test_traced_names_take_opdb_spelling():
    assert opdb_op_name("torch", "aten.add.Tensor") == "aten::add.Tensor"
    assert opdb_op_name("torch", "aten::matmul.default") == "aten::matmul"
    assert opdb_op_name("paddle", "conv2d_grad") == "conv2d_grad"


def test_supported_composite_the_npu_adapts(db):
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::matmul", ("float32",))
    assert v.category == "supported" and "torch_npu==2.13.0" in v.adapter


def test_dtype_gap_suggests_cast(db):
    v = classify_op(ClassifyContext.create(db, "paddle"), "bmm", ("float64",))
    assert v.category == "dtype-gap" and v.missing_dtypes == ["float64"] and v.cast_to == "float32"


def test_signature_drift_names_the_new_params(db):
    v = classify_op(ClassifyContext.create(db, "paddle"), "adam", ("float32",))
    assert v.category == "signature-drift"
    assert {d.split(" ")[1] for d in v.drift} == {"moment2_max", "amsgrad", "moment2_max_out"}
    assert "opscan blacklist" in v.action and "export" not in v.action


def test_cann_available_gives_api_signature_and_command(db):
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::_add_relu.Scalar", ("float32",))
    assert v.category == "cann-available"
    c = v.candidates[0]
    assert c.api == "aclnnAddRelu" and c.signature.startswith("aclnnStatus aclnnAddReluGetWorkspaceSize(")
    assert c.opgen_command == "opgen aclnn aclnnAddRelu --target torch --op aten::_add_relu.Scalar"


def test_older_release_points_at_the_release_that_adapts_it(db):
    ctx = ClassifyContext.create(db, "torch", "torch_npu==2.1.0.post17")
    v = classify_op(ctx, "aten::_fused_sgd_", ("float32",))
    assert v.category == "cann-available" and v.candidates[0].api == "aclnnFusedSgd"
    assert "or move to torch_npu==2.7.1.post11, which adapts it" in v.action  # the first release adapting it


def test_decomposable_says_into_what(db):
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::_weight_norm_interface", ("float32",))
    assert v.category == "decomposable"
    assert v.decomposes_into == ["aten::div.Tensor", "aten::linalg_vector_norm", "aten::mul.Tensor"]


def test_needs_ascendc_when_nothing_matches(db):
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::special_i1e", ("float32",))
    assert v.category == "needs-ascendc" and "AscendC" in v.action


def test_structured_delegate_adapted_is_supported(db):
    """_addmm_activation has no adapter but its structured delegate `.out` is adapted."""
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::_addmm_activation", ("float32",))
    assert v.category == "supported" and "aten::_addmm_activation.out" in v.action


def test_views_are_not_kernels(db):
    assert classify_op(ClassifyContext.create(db, "torch"), "aten::view", ("float32",)).category == "not-a-kernel"
    assert classify_op(ClassifyContext.create(db, "paddle"), "reshape", ("float32",)).category == "not-a-kernel"


def test_other_devices_kernels_are_not_npu_kernels(db):
    """max_pool2d_backward has only an MPS kernel: the NPU runs max_pool2d_with_indices_backward,
    so it is not a gap (it was needs-ascendc before)."""
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::max_pool2d_backward", ("float32",))
    assert v.category == "not-a-kernel" and "MPS-library kernel" in v.evidence[0]


def test_a_view_shaped_composite_that_copies_is_classified_by_what_it_becomes(db):
    """to.dtype returns `Tensor(a)` but converts through _to_copy (adapted): supported, not a
    view; reshape, whose composite only views, stays not-a-kernel."""
    ctx = ClassifyContext.create(db, "torch")
    v = classify_op(ctx, "aten::to.dtype", ("float32",))
    assert v.category == "supported" and v.decomposes_into == ["aten::_to_copy"]
    assert classify_op(ctx, "aten::reshape", ("float32",)).category == "not-a-kernel"


def test_composite_over_advanced_indices_is_run(db):
    """_unsafe_index.Tensor (adapted only up to torch_npu 2.1) becomes index.Tensor: it was
    'unverified' while its `Tensor?[]` argument could not be synthesized."""
    v = classify_op(ClassifyContext.create(db, "torch"), "aten::_unsafe_index.Tensor", ("float32",))
    assert v.category == "supported" and v.decomposes_into == ["aten::index.Tensor"]


def test_structured_op_without_adapter_is_decomposable_through_its_decomposition(db):
    """lcm: neither lcm nor lcm.out is adapted and no API exists, but its torch._decomp entry
    runs as adapted ops (prims::div through aten::div): decomposable (was needs-ascendc,
    reading only the wrapper's empty + lcm.out). hypot's entry is prims.hypot, which calls
    aten::hypot again: still needs-ascendc."""
    ctx = ClassifyContext.create(db, "torch")
    v = classify_op(ctx, "aten::lcm", ("int32",))
    assert v.category == "decomposable" and "prims::div" in v.decomposes_into
    assert classify_op(ctx, "aten::hypot", ("float32",)).category == "needs-ascendc"
    # a structured op counts as running through its adapted `.out` only, not its decomposition
    assert classify_op(ctx, "aten::gcd", ("int32",)).category == "supported"


def test_an_out_wrapper_takes_its_functionals_verdict(db):
    """A CompositeExplicitAutograd `.out` wrapper calls its functional and copies: it was
    'supported' whenever the functional was adapted, whatever the dtype, and 'unverified'
    when the functional was not; now it carries the functional's verdict."""
    ctx = ClassifyContext.create(db, "torch")
    gap = classify_op(ctx, "aten::_adaptive_avg_pool2d.out", ("float64",))
    assert gap.category == "dtype-gap" and gap.cast_to == "float32"
    assert classify_op(ctx, "aten::_adaptive_avg_pool2d.out", ("float32",)).category == "supported"
    out = classify_op(ctx, "aten::all.dims_out", ("float32",))
    assert out.category == "cann-available" and out.candidates[0].api == "aclnnAll"


def test_a_paddle_kernel_only_gpu_registers_is_known_and_a_gap(db):
    """fused_dropout_add is registered by phi for GPU only, so the CPU wheel's registry does
    not list it: it was an unknown name (exit 2); it is an op the NPU lacks."""
    from analyzer.classify import check_op_name
    from opdb.errors import UnknownName

    ctx = ClassifyContext.create(db, "paddle")
    check_op_name(ctx, "fused_dropout_add")
    assert classify_op(ctx, "fused_dropout_add", ("float16",)).category == "needs-ascendc"
    with pytest.raises(UnknownName):
        check_op_name(ctx, "relu_raw")  # registered nowhere: still an error


def test_composites_and_structured_ops_inherit_the_dtype_gap_of_what_computes_them(db):
    """selu float64 runs elu float64 and gelu float64 runs gelu.out float64; aclnnElu and
    aclnnGelu(V2) do not document float64: both were 'supported' because the part is adapted."""
    ctx = ClassifyContext.create(db, "torch")
    selu = classify_op(ctx, "aten::selu", ("float64",))
    assert selu.category == "dtype-gap" and "aten::elu" in selu.action and selu.cast_to == "float32"
    assert classify_op(ctx, "aten::gelu", ("float64",)).category == "dtype-gap"
    assert classify_op(ctx, "aten::selu", ("float32",)).category == "supported"
    assert classify_op(ctx, "aten::gelu", ("float32",)).category == "supported"


def test_paddle_inplace_api_names_and_legacy_raw_kernels(db):
    """relu_ is the in-place API of relu (ops.yaml `inplace : (x -> out)`): it runs the relu
    kernel (was an unknown name); matmul declares no in-place API, so matmul_ stays unknown.
    floor_divide_raw (no npu kernel) is computed by the API of its non-raw op (npu
    floor_divide calls aclnnFloorDivide): cann-available (was needs-ascendc)."""
    from analyzer.classify import check_op_name
    from opdb.errors import UnknownName

    ctx = ClassifyContext.create(db, "paddle")
    check_op_name(ctx, "relu_")
    v = classify_op(ctx, "relu_", ("float32",))
    assert v.op == "relu" and v.category == "supported"
    with pytest.raises(UnknownName):
        check_op_name(ctx, "matmul_")
    raw = classify_op(ctx, "floor_divide_raw", ("float32",))
    assert raw.category == "cann-available" and raw.candidates[0].api == "aclnnFloorDivide"


def test_soc_without_support_is_not_cann_available(db):
    # aclnnAddRelu's docs do not list the Atlas inference series (310P)
    ctx = ClassifyContext.create(db, "torch", soc="ascend310p")
    v = classify_op(ctx, "aten::_add_relu.Scalar", ("float32",))
    assert v.category == "needs-ascendc"
    assert v.candidates[0].api == "aclnnAddRelu" and v.candidates[0].supported_on_soc is False
    assert "aclnnAddRelu exists but its docs do not list ascend310p" in v.evidence


def test_paddle_fluid_and_yaml_names_resolve_to_the_phi_kernel(db):
    """op_compat names are used consistently: `adam_` and `matmul_v2` are `adam` and `matmul`."""
    ctx = ClassifyContext.create(db, "paddle")
    v = classify_op(ctx, "adam_", ("float32",))
    assert v.op == "adam" and "adam_" in v.aliases
    assert "opscan blacklist" in v.action  # the export line itself comes from analyzer.blacklist only
    assert classify_op(ctx, "matmul_v2", ("float32",)).op == "matmul"
