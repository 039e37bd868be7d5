"""Batch norm's statistics conventions (docs/opgen.md "Paddle classes 9, 10, 12, 13",
reviewed arg_rules.yaml entries keyed by aclnnBatchNorm / aclnnBatchNormBackward, not
held out): Paddle weighs the running statistics by `momentum` and keeps
saved_variance = 1/sqrt(var + eps) (the wheel's sync_batch_norm_utils.h); aclnn weighs the
batch by `momentum` and its saveInvstd holds the batch variance on Atlas A2/A3
(aclnnBatchNorm.md). Upstream batch_norm_kernel.cc (77090b64) passes 1 - momentum, derives
`training` from is_test / trainable_statistics / use_global_stats, recomputes the running
variance from the biased batch variance and converts the saved one after the call; its
grad picks the global or the saved statistics and passes 1 / saved_variance^2; both views a
channel-last x as channel-first. Before: `training` a placeholder false, momentum as is,
the grad's saveMean <- `bias` and saveInvstd <- `saved_mean` by position (scored 1 each)."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def _cc(api: str, op: str) -> tuple[str, tuple[str, ...]]:
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=op, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), tuple(r.todos)


def test_forward_momentum_training_and_saved_variance_follow_paddle():
    cc, todos = _cc("aclnnBatchNorm", "batch_norm")
    assert "double acl_momentum = 1.0 - static_cast<double>(momentum);" in cc
    assert "bool acl_training = !(is_test && !trainable_statistics) && !use_global_stats;" in cc
    # the running variance before the call, then Paddle's update and the inverse std after
    assert "phi::Copy(dev_ctx, variance, dev_ctx.GetPlace(), false, &acl_save_invstd_prev);" in cc
    call = cc.index("EXEC_NPU_CMD(aclnnBatchNorm,")
    after = cc[call:]
    assert after.index("aclnnMuls, dev_ctx, acl_save_invstd_prev, acl_save_invstd_m, "
                       "*variance_out") < after.index("aclnnInplaceAdd, dev_ctx, *variance_out, "
                                                      "*saved_variance") \
        < after.index("aclnnInplaceRsqrt, dev_ctx, *saved_variance")
    assert "acl_input_nchw(x)" in cc and "acl_output_nchw(*y)" in cc  # NHWC as NCHW views
    assert not [t for t in todos if "placeholder" in t or "`data_layout`" in t
                or "`is_test`" in t or "`use_global_stats`" in t]


def test_inference_kernel_passes_scratch_statistics_and_no_training():
    cc, todos = _cc("aclnnBatchNorm", "batch_norm_infer")
    assert "bool acl_training = false;" in cc
    assert "acl_save_mean.set_meta(mean_out->meta());" in cc
    assert "acl_save_invstd.set_meta(variance_out->meta());" in cc
    assert "double acl_momentum = 1.0 - static_cast<double>(momentum);" in cc
    assert not [t for t in todos if "placeholder" in t]


def test_grad_picks_global_or_saved_statistics():
    cc, todos = _cc("aclnnBatchNormBackward", "batch_norm_grad")
    assert ("phi::DenseTensor acl_save_mean = (is_test || use_global_stats) && mean ? "
            "*mean.get_ptr() : saved_mean;") in cc
    assert ("EXEC_NPU_CMD(aclnnPowTensorScalar, dev_ctx, saved_variance, acl_save_invstd_pow, "
            "acl_save_invstd);") in cc
    assert "bool acl_training = !is_test && !use_global_stats;" in cc
    assert "acl_grad_out_nchw(y_grad)" in cc and "acl_grad_input_nchw(x_grad_tensor)" in cc
    assert not [t for t in todos if "by position" in t or "placeholder" in t]


def test_registration_finds_renamed_running_statistics():
    # mlu/gcu/sdaa set `running_mean` / `running_var` (inputs 1, 2) to float32 for float16;
    # Paddle 3.3.1 calls them `mean` / `variance` (upstream npu sets InputAt(1), (2))
    cc, todos = _cc("aclnnBatchNorm", "batch_norm")
    assert "kernel->InputAt(1).SetDataType(phi::DataType::FLOAT32);" in cc
    assert "kernel->InputAt(2).SetDataType(phi::DataType::FLOAT32);" in cc
    assert not [t for t in todos if "no such input" in t]


def test_grad_scratch_of_an_absent_optional_input_stays_empty():
    # batch_norm_grad without affine weights: `scale`/`bias` absent, their gradients
    # nullptr. The scratch must not be allocated with no meta (phi refuses an UNDEFINED
    # dtype); left empty, ConvertType passes nullptr, which aclnn takes with the mask off
    # (docs/opgen.md "Eighth audit: the pool at head, paddle rows 1-12")
    cc, _ = _cc("aclnnBatchNormBackward", "batch_norm_grad")
    for n, src in (("scale_grad", "scale"), ("bias_grad", "bias")):
        assert (f"  }} else if ({src}) {{  // absent `{src}`: empty, passed as nullptr\n"
                f"    {n}_tensor.set_meta({src}.get_ptr()->meta());\n"
                f"    dev_ctx.Alloc(&{n}_tensor, {n}_tensor.dtype());\n  }}") in cc
    # an input that is always there keeps its scratch allocated with its meta
    assert "    x_grad_tensor.set_meta(x.meta());\n    dev_ctx.Alloc(&x_grad_tensor" in cc
