"""Mapping roles (primary vs helper), PEP 440 version order, and opgen's resolve choice."""
import pytest

from opdb.query import OpDB
from opdb.roles import assign_roles, related
from opdb.versions import version_key


@pytest.mark.parametrize("op,apis,expect", [
    # helper calls never count as the op's implementation
    ("cross_entropy_with_softmax", ["aclnnInplaceZero"], {"aclnnInplaceZero": "helper:zero-fill"}),
    ("add_grad", ["aclnnReduceSum"], {"aclnnReduceSum": "helper:broadcast"}),
    ("batch_norm", ["aclnnBatchNorm", "aclnnInplaceAdd", "aclnnMuls"],
     {"aclnnBatchNorm": "primary", "aclnnInplaceAdd": "helper:auxiliary", "aclnnMuls": "helper:auxiliary"}),
    ("matmul_grad", ["aclnnCast", "aclnnMatmul", "aclnnMul", "aclnnReduceSum"],
     {"aclnnCast": "helper:cast", "aclnnMatmul": "primary", "aclnnMul": "helper:auxiliary",
      "aclnnReduceSum": "helper:broadcast"}),
    ("softmax_grad", ["aclnnSoftmax", "aclnnSoftmaxBackward"],
     {"aclnnSoftmax": "helper:auxiliary", "aclnnSoftmaxBackward": "primary"}),
    # the op that IS the utility keeps it as primary
    ("aten::zero_", ["aclnnInplaceZero"], {"aclnnInplaceZero": "primary"}),
    ("sum", ["aclnnReduceSum"], {"aclnnReduceSum": "primary"}),
    # a thin wrapper / run-time alternatives of one family / a composition
    ("conv2d", ["aclnnConvolution"], {"aclnnConvolution": "primary"}),
    ("npu::npu_fusion_attention", ["aclnnDropoutGenMaskV2", "aclnnFlashAttentionScore",
                                   "aclnnFlashAttentionVarLenScore"],
     {"aclnnDropoutGenMaskV2": "helper:mask", "aclnnFlashAttentionScore": "primary",
      "aclnnFlashAttentionVarLenScore": "primary"}),
    ("abs_grad", ["aclnnInplaceMul", "aclnnSign"], {"aclnnInplaceMul": "composite", "aclnnSign": "composite"}),
])
def test_assign_roles(op, apis, expect):
    assert assign_roles(op, apis) == expect


@pytest.mark.parametrize("op,apis,expect", [
    # rule 1b, trap names: the API carrying the op's head word is the op, even when its
    # name is a utility's (a `permute_pack_grad` is not a layout helper of itself)
    ("permute_pack_grad", ["aclnnMuls", "aclnnPermute"],
     {"aclnnPermute": "primary", "aclnnMuls": "helper:auxiliary"}),
    ("warpx_grad", ["aclnnInplaceMuls", "aclnnWarpxDoMask"],
     {"aclnnWarpxDoMask": "primary", "aclnnInplaceMuls": "helper:auxiliary"}),
    # an op named after two computations: either API is the op (a flag picks one)
    ("cast_expand_grad", ["aclnnCast", "aclnnExpand"],
     {"aclnnCast": "primary", "aclnnExpand": "primary"}),
    # one adapter for several modes: the mode the kernel is named after is primary, the
    # other mode's branch is not (it was "composite", so the kernel had no primary)
    ("zoom_resize", ["aclnnGatherV2", "aclnnResizeCubic2d", "aclnnResizeZoom2d"],
     {"aclnnResizeZoom2d": "primary", "aclnnResizeCubic2d": "helper:auxiliary",
      "aclnnGatherV2": "helper:auxiliary"}),
    ("zoom_resize_grad", ["aclnnResizeCubic2dBackward", "aclnnResizeZoom2dBackward"],
     {"aclnnResizeZoom2dBackward": "primary", "aclnnResizeCubic2dBackward": "helper:auxiliary"}),
    # a backward API never implements a forward op; a grad prefers the backward API
    ("zoom_resize", ["aclnnResizeZoom2d", "aclnnResizeZoom2dBackward"],
     {"aclnnResizeZoom2d": "primary", "aclnnResizeZoom2dBackward": "helper:auxiliary"}),
    ("zoom_resize_grad", ["aclnnResizeZoom2d", "aclnnResizeZoom2dBackward"],
     {"aclnnResizeZoom2dBackward": "primary", "aclnnResizeZoom2d": "helper:auxiliary"}),
    # a later word alone only qualifies the op; a head word under four letters names nothing
    ("scaled_mix_attention", ["aclnnFlashAttentionScore", "aclnnInplaceMaskedFillScalar", "aclnnSqrt"],
     {"aclnnFlashAttentionScore": "composite", "aclnnInplaceMaskedFillScalar": "helper:mask",
      "aclnnSqrt": "composite"}),
    ("pad_warpx_grad", ["aclnnMuls", "aclnnPadWarp"], {"aclnnMuls": "composite", "aclnnPadWarp": "composite"}),
])
def test_the_ops_head_word_names_its_api(op, apis, expect):
    assert assign_roles(op, apis) == expect


def test_related_names():
    assert related("aten::add.Scalar", "aclnnAdds")
    assert related("aten::nll_loss_forward", "aclnnNLLLoss")
    assert related("aten::addmm", "aclnnAddmmWeightNz")
    assert not related("aten::add.Tensor", "aclnnAddLayerNormGrad")  # backward API, forward op
    assert not related("batch_norm", "aclnnInplaceAdd")


def test_a_name_followed_by_a_number_is_another_function():
    """`log` inside `Log1p` is not log (PaddleCustomDevice computes log(x) as
    Log1p(x - 1), and the mapping said log is aclnnLog1p); a rank suffix is the same op."""
    assert not related("log", "aclnnLog1p")
    assert not related("aten::exp", "aclnnExp2")
    assert not related("aten::atan", "aclnnAtan2")
    assert related("aten::log1p", "aclnnLog1p")
    assert related("aten::log2", "aclnnLog2")
    assert related("aten::max_pool2d", "aclnnMaxPool2dWithIndices")
    assert related("grid_sample_grad", "aclnnGridSampler2DBackward")
    roles = assign_roles("log", ["aclnnInplaceOne", "aclnnSub", "aclnnLog1p"])
    assert roles == {"aclnnInplaceOne": "helper:fill", "aclnnSub": "composite",
                     "aclnnLog1p": "composite"}


def test_versions_are_pep440():
    assert sorted(["2.13.0", "2.6.0.post5", "2.1.0.post17", "develop"], key=version_key) == [
        "2.1.0.post17", "2.6.0.post5", "2.13.0", "develop"]


@pytest.fixture(scope="module")
def db():
    return OpDB.open(overlay=False)


def test_snapshot_roles(db):
    """The shipped snapshot records roles per adapter call; helpers are not primary."""
    ce = [m for m in db.mappings("paddle", "cross_entropy_with_softmax") if m.aclnn == "aclnnInplaceZero"]
    assert ce and all(m.role == "helper:zero-fill" for m in ce)
    ad = db.adapters("paddle", "batch_norm", "PaddleCustomDevice@develop")[0]
    assert dict(zip(ad.aclnn, ad.roles))["aclnnInplaceAdd"] == "helper:auxiliary"
    # no cross-framework evidence is derived from a helper call
    assert not [m for m in db.mappings("torch", aclnn="aclnnInplaceZero")
                if m.evidence == "cross-framework" and "cross_entropy" in m.detail]


def test_snapshot_roles_follow_upstream(db):
    """PaddleCustomDevice at 77090b64: dropout_grad runs aclnnDropoutDoMask and scales
    with aclnnInplaceMuls only for `downscale_in_infer`; tril_triu_grad calls aclnnTril or
    aclnnTriu by `lower`; the interpolate kernels dispatch on the mode."""
    def primaries(fw, op):
        return {m.aclnn for m in db.mappings(fw, op) if m.evidence == "adapter" and m.is_primary}

    assert primaries("paddle", "dropout_grad") == {"aclnnDropoutDoMask"}
    assert primaries("paddle", "tril_triu_grad") == {"aclnnTril", "aclnnTriu"}
    assert primaries("paddle", "bilinear_interp") == {"aclnnUpsampleBilinear2d"}
    assert primaries("paddle", "nearest_interp_grad") == {"aclnnUpsampleNearest2dBackward"}
    assert primaries("torch", "aten::native_dropout_backward") == {"aclnnDropoutDoMask"}
    # the wrong cross-framework rows the misfiled roles derived are gone
    assert not [m for m in db.mappings("torch", "aten::native_dropout_backward")
                if m.aclnn == "aclnnInplaceMuls"]
    # sdpa's flash-attention fast path next to a math composition stays composite
    assert not primaries("torch", "aten::scaled_dot_product_attention")


def test_torch_targets_newest_first(db):
    versions = [t.version for t in db.targets("torch")]
    assert versions == sorted(versions, key=version_key, reverse=True)
    assert versions[0] == "2.14.0"  # PEP 440: not "2.6.0.post5", which sorts first as a string
    assert versions.index("2.13.0") < versions.index("2.6.0.post5")


@pytest.mark.parametrize("api,framework,op", [
    ("aclnnReduceSum", "paddle", "sum"),
    ("aclnnReduceSum", "torch", "aten::sum"),
    ("aclnnInplaceAdd", "paddle", "add"),
    ("aclnnInplaceAdd", "torch", "aten::add_.Tensor"),
    ("aclnnFlashAttentionScore", "torch", "npu::npu_fusion_attention"),
    ("aclnnFlashAttentionScore", "paddle", "flash_attention_npu"),
    ("aclnnAdds", "torch", "aten::add.Scalar"),
    ("aclnnAdd", "torch", "aten::add.Tensor"),
    ("aclnnBatchNorm", "paddle", "batch_norm"),
])
def test_resolve_picks_the_primary_op(db, api, framework, op):
    from codegen.resolve import resolve

    res = resolve(db, api, framework)
    assert res.op.name == op
    assert "role primary" in res.op_how or "sibling" in res.op_how


def test_ambiguous_opgen_candidates_show_their_roles(db):
    from codegen.resolve import AmbiguousName, resolve

    with pytest.raises(AmbiguousName) as err:
        resolve(db, "FlashAttention", "torch")
    assert "aclnnFlashAttentionScoreGetWorkspaceSize" in str(err.value)
    assert "[primary for npu::npu_fusion_attention" in str(err.value)


def test_curated_caveats_travel_with_derived_candidates(db):
    """A candidate whose semantics differ is never offered silently."""
    m = [m for m in db.mappings("paddle", "gather_nd") if m.aclnn == "aclnnIndex"]
    assert m and all("CAVEAT:" in x.detail for x in m)
    from opdb.facts import op_facts

    f = op_facts(db, "torch", "aten::index.Tensor")
    assert all("CAVEAT" in c.detail for c in f.candidates if c.api.name == "aclnnGatherNd")
