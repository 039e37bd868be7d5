"""prelu / prelu_grad's `mode` (docs/opgen.md "Paddle classes 9, 10, 12, 13", class 13; a
reviewed kernel rule keyed by aclnnPrelu / aclnnPreluBackward, not held out): upstream
(prelu_kernel.cc, 77090b64) calls the aclnn API for mode "all" on a non-0-d x only and
composes "channel" / "element" (and a 0-d x) from legacy ops with alpha broadcast over x;
the generated kernel branches the same way, composing from aclnn element-wise APIs. Before:
every mode went to aclnn, whose weight is one value or one per channel at dim 1 (scored 1)."""
from __future__ import annotations


def _cc(api: str, op: str):
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=op, layout="in-tree")
    return next(t for p, t in r.files.items() if p.endswith(".cc")), r.todos


def test_prelu_sends_only_mode_all_to_aclnn():
    cc, todos = _cc("aclnnPrelu", "prelu")
    branch = cc.index('if (mode != "all" || x.dims().size() == 0) {')
    call = cc.index("EXEC_NPU_CMD(aclnnPrelu,")
    assert branch < cc.index("EXEC_NPU_CMD(aclnnSWhere, dev_ctx, acl_mode_pos, x, "
                             "acl_mode_scaled, *out);") < cc.index("return;", branch) < call
    assert ('if (mode == "channel") acl_mode_d[data_format == "NCHW" ? 1 : '
            'x.dims().size() - 1] = alpha.numel();') in cc
    assert not [t for t in todos if "`mode`" in t or "`data_format`" in t]


def test_prelu_grad_sums_alpha_grad_over_the_broadcast_dims():
    cc, todos = _cc("aclnnPreluBackward", "prelu_grad")
    branch = cc.index('if (mode != "all" || x.dims().size() == 0) {')
    assert branch < cc.index("EXEC_NPU_CMD(aclnnSWhere, dev_ctx, acl_mode_pos, out_grad, "
                             "acl_mode_scaled, *x_grad);")
    assert ("EXEC_NPU_CMD(aclnnReduceSum, dev_ctx, acl_mode_neg, acl_mode_axes, "
            "acl_mode_keep_dims, acl_mode_dtype, acl_mode_alpha_grad);") in cc
    assert cc.index("return;", branch) < cc.index("EXEC_NPU_CMD(aclnnPreluBackward,")
    assert not [t for t in todos if "`mode`" in t]
