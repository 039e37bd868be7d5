"""aclnnSplitTensor's `splitSections` is each equal section's extent along the split dim
(docs/opgen.md batch N, class 3; a reviewed arg_rules.yaml entry keyed by the API):
split_with_num passed a placeholder 0 (scored 1); upstream split_kernel.cc
SplitWithNumKernel splits x.dims()[axis] into `num` equal sections, the extent
SplitWithNumInferMeta gives each output."""
from __future__ import annotations


def test_split_with_num_passes_each_sections_extent():
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), "aclnnSplitTensor", "paddle", op="split_with_num",
                layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    assert ("uint64_t acl_split_sections = out.empty() ? 0 : "
            "static_cast<uint64_t>(out[0]->dims()[acl_split_sections_dim]);") in cc
    assert "if (acl_split_sections_dim < 0) acl_split_sections_dim += x.dims().size();" in cc
    assert not [t for t in r.todos if "placeholder" in t]
