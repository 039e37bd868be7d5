"""Mechanisms found by scoring the sixteenth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 16 -n 12 --before 166`) against op-plugin
517f2e7d (docs/opgen.md, "Sixteenth sample"): class 10, a list limit op-plugin keeps in
a `constexpr size_t` of the adapter file and applies as a slice stride (no
`max_tensor_count`), on an API that also takes plain tensors shared by every call.
Nothing keys on an API or op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import tensors_per_call
from opdb.sources.torch.extract_call_limits import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

# the shape of AmpForeachNonFiniteCheckAndUnscaleKernelNpuOpApi.cpp's helper
SRC = """namespace op_api {
constexpr size_t MAX_TENSOR_COUNT = 250;
void _split_and_exec_npu_cmd_(at::TensorList& grads, at::Tensor& flag, const at::Tensor& s) {
  size_t loop_time = grads.size() / MAX_TENSOR_COUNT;
  for (size_t i = 0; i < loop_time; i++) {
    at::TensorList part(
        grads.data() + i * MAX_TENSOR_COUNT, MAX_TENSOR_COUNT);
    EXEC_NPU_CMD(aclnnB, part, flag, s);
  }
  size_t remaining_count = grads.size() % MAX_TENSOR_COUNT;
  at::TensorList rest(grads.data() + loop_time * MAX_TENSOR_COUNT, remaining_count);
  EXEC_NPU_CMD(aclnnB, rest, flag, s);
}
}  // namespace op_api
"""


def test_a_constant_slice_stride_is_extracted():
    """No `max_tensor_count`: the list is cut at `data() + i * N, N` with N a
    `constexpr size_t` of the file. Before, the file gave no row (only
    `max_tensor_count` assignments and `constexpr int` were read)."""
    rows = rows_of_file(SRC, "op_plugin/ops/opapi/X.cpp", {})
    assert [(r["api"], r["inplace"], r["out_of_place"], r["fast_route"], r["source"]["line"])
            for r in rows] == [("aclnnB", 250, 250, False, 7)]
    # a stride that is not the slice's length (the remainder) is no limit
    assert rows_of_file(SRC.replace("i * MAX_TENSOR_COUNT, MAX_TENSOR_COUNT",
                                    "i * MAX_TENSOR_COUNT, n"), "p", {}) == []


def test_non_finite_check_has_upstreams_limit_in_opdb():
    lim = tensors_per_call("aclnnForeachNonFiniteCheckAndUnscale")
    assert lim is not None and (lim.inplace, lim.out_of_place, lim.fast_route) == (250, 250, False)
    assert lim.where.endswith(
        "op_plugin/ops/opapi/AmpForeachNonFiniteCheckAndUnscaleKernelNpuOpApi.cpp:109")


def test_non_finite_check_splits_the_list_and_passes_shared_tensors_whole(db):
    """AmpForeachNonFiniteCheckAndUnscaleKernelNpuOpApi.cpp: at most 250 gradients a
    call (the API takes at most 256), `found_inf` and `inv_scale` the same in every call.
    Before, the whole list went to one call, so more than 256 gradients of a dtype
    failed. No list route: upstream does not guard this API with `can_use_fast_route`."""
    r = prepare(db, "aclnnForeachNonFiniteCheckAndUnscale", "torch",
                op="aten::_amp_foreach_non_finite_check_and_unscale_")
    body = _fn(r.files[ADAPTER.format("AmpForeachNonFiniteCheckAndUnscale")],
               "void _amp_foreach_non_finite_check_and_unscale_(")
    assert "opgen_i += 250" in body
    assert "auto opgen_scaledGrads_part = self.slice(opgen_i, opgen_len);" in body
    assert ("EXEC_NPU_CMD(aclnnForeachNonFiniteCheckAndUnscale, opgen_scaledGrads_part, "
            "found_inf, inv_scale);") in body
    assert "can_use_fast_route" not in body


def test_the_chips_an_api_lacks_as_a_soc_version_condition():
    """torch_npu's c10_npu::SocVersion keeps each chip family in a range of the enum
    (NpuVariables.h): 910 from 100, 310P from 200, 910B from 220, 310B from 240,
    910_93 from 250, 950 at 260."""
    from codegen.torch_target import _soc_unsupported_cond
    v = "c10_npu::GetSocVersion()"
    assert _soc_unsupported_cond(("Ascend 950PR/Ascend 950DT",)) \
        == f"{v} < c10_npu::SocVersion::Ascend950"
    assert _soc_unsupported_cond(("Atlas 推理系列产品",)) == (
        f"!(({v} >= c10_npu::SocVersion::Ascend310P1 && {v} < c10_npu::SocVersion::Ascend910B1))")
    assert _soc_unsupported_cond((
        "Ascend 950PR/Ascend 950DT", "Atlas A3 训练系列产品/Atlas A3 推理系列产品",
        "Atlas A2 训练系列产品/Atlas A2 推理系列产品")) == (
        f"!(({v} >= c10_npu::SocVersion::Ascend910B1 && {v} < c10_npu::SocVersion::Ascend310B1)"
        f" || ({v} >= c10_npu::SocVersion::Ascend910_9391))")
    assert _soc_unsupported_cond(()) is None  # names no chip: nothing to check


def test_bucketize_runs_on_the_cpu_on_chips_its_api_lacks(db):
    """aclnnBucketize is Ascend 950 only (ops-nn index/bucketize_v2/docs/aclnnBucketize.md);
    BucketizeKernelNpuOpApi.cpp calls it only when `GetSocVersion() >= Ascend950`. Before,
    the adapter called it on every chip, so every call failed on A2/A3."""
    r = prepare(db, "aclnnBucketize", "torch", op="aten::bucketize.Tensor")
    text = r.files[ADAPTER.format("Bucketize")]
    fn = _fn(text, "at::Tensor bucketize(")
    route = fn.index("if (c10_npu::GetSocVersion() < c10_npu::SocVersion::Ascend950) {")
    assert route < fn.index("EXEC_NPU_CMD(aclnnBucketize")
    assert ("return at::bucketize(self.cpu(), boundaries.cpu(), out_int32, right)"
            ".to(self.device());") in fn
    out = _fn(text, "at::Tensor& bucketize_out(")
    assert "if (c10_npu::GetSocVersion() < c10_npu::SocVersion::Ascend950) {" in out
    assert "out.copy_(opgen_cpu_result);" in out
    # rendered for the chip the API has, or for an API the target chip has: no route
    r = prepare(db, "aclnnBucketize", "torch", op="aten::bucketize.Tensor", soc="ascend950")
    assert "GetSocVersion" not in r.files[ADAPTER.format("Bucketize")]
    r = prepare(db, "aclnnTanh", "torch", op="aten::tanh")
    assert "GetSocVersion" not in r.files[ADAPTER.format("Tanh")]


def test_the_chip_route_prefers_acl_op_and_never_moves_random_ops(db):
    """Where an acl_op function is known the chips the API lacks take it (compiled out of
    the standalone build, which declares no acl_op::), as op-plugin's pre-Ascend910B
    switches to acl_op do; an op that draws random numbers (`nondeterministic_seeded`)
    or that torch has no CPU kernel for gets no CPU route."""
    from codegen import torch_facts
    assert torch_facts.seeded("aten::native_dropout") is True
    assert torch_facts.seeded("aten::bucketize.Tensor") is False
    r = prepare(db, "aclnnAddV3", "torch", op="aten::add.Tensor")
    fn = _fn(r.files[ADAPTER.format("Add")], "at::Tensor add(")
    assert ("#ifndef OPGEN_STANDALONE\n    if (c10_npu::GetSocVersion() < "
            "c10_npu::SocVersion::Ascend950) {") in fn
    assert "        return acl_op::add(self, other, alpha);\n    }\n#endif" in fn
    for api, op, stem in (("aclnnDropoutV3", "aten::native_dropout", "Dropout"),
                          ("aclnnMaskedScale", "aten::_masked_scale", "MaskedScale")):
        r = prepare(db, api, "torch", op=op)
        text = next(v for k, v in r.files.items() if k.startswith("in-tree") and k.endswith(".cpp"))
        assert "GetSocVersion" not in text, api


def test_the_docs_alone_do_not_move_an_api_off_a_chip(db):
    """ops-nn e5c3fa93's docs list aclnnNormalTensorFloat and aclnnApplyAdamW for Ascend
    950 only, yet op-plugin's NormalKernelNpuOpApi.cpp and ApplyAdamWKernelNpuOpApi.cpp
    call them on every chip; the route needs op-plugin's own run-time check of the
    kernel too (BucketizeKernelNpuOpApi.cpp, AddKernelNpuOpApi.cpp's aclnnAddV3)."""
    from opdb.kernel_checks import checked_at_run_time
    assert "aten::bucketize.Tensor" in checked_at_run_time("aclnnBucketize")
    assert checked_at_run_time("aclnnNormalTensorFloat") == ()
    r = prepare(db, "aclnnNormalTensorFloat", "torch", op="aten::normal.Tensor_float")
    assert not any("GetSocVersion" in v for v in r.files.values())
    r = prepare(db, "aclnnApplyAdamW", "torch", op="npu::npu_apply_adam_w.out")
    assert not any("GetSocVersion" in v for v in r.files.values())
