"""op-plugin's run-mode routes (docs/opgen.md, "Class 12 and the WithMask route"): an
adapter that runs one aclnn API in torch_npu's default mode and another in aclnn-only
mode or with the compatible-impl switch (`if (!c10_npu::IsAclnnOnly() &&
!CheckCompatibleImpl())`) is extracted from op-plugin's own sources, and a rendered API
that is the non-default one gets upstream's branch to the default one when the two take
the same parameters. The tests name the upstream adapters; nothing keys on a name in code."""
from __future__ import annotations

from codegen.api import prepare
from opdb.sources.torch.extract_mode_routes import rows_of_file
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

MODE = "!c10_npu::IsAclnnOnly() && !at_npu::native::env::CheckCompatibleImpl()"

SRC = """
std::tuple<at::Tensor, at::Tensor> pool(const at::Tensor& self)
{
    static auto pool_sc = at_npu::native::env::CheckCompatibleImpl();
    if (!c10_npu::IsAclnnOnly() && !pool_sc) {
        EXEC_NPU_CMD(aclnnPoolWithMask, self, out, indices);
    } else {
        EXEC_NPU_CMD(aclnnPoolWithIndices, self, out, indices);
    }
}

void norm(const at::Tensor& self)
{
    static auto layer_sc = at_npu::native::env::CheckCompatibleImpl();
    if (!layer_sc || c10_npu::IsAclnnOnly()) {
        EXEC_NPU_CMD(aclnnNorm, self);
    } else {
        EXEC_NPU_CMD(aclnnFastNorm, self);
    }
}

void other(const at::Tensor& self)
{
    static const bool soc = c10_npu::IsAclnnOnly();
    if (!has_v2 || !soc) {
        EXEC_NPU_CMD(aclnnOther, self);
    } else {
        EXEC_NPU_CMD(aclnnOtherV2, self);
    }
}
"""


def test_mode_routes_are_read_from_the_adapters_own_tests():
    """The default mode (IsAclnnOnly false, CheckCompatibleImpl false) picks the block;
    variables are replaced by their calls; a test of anything else gives no row."""
    rows = {r["function"]: r for r in rows_of_file(SRC, "X.cpp")}
    assert set(rows) == {"pool", "norm"}  # `has_v2` is not a mode
    assert (rows["pool"]["default_api"], rows["pool"]["api"], rows["pool"]["cond"]) == \
        ("aclnnPoolWithMask", "aclnnPoolWithIndices", MODE)
    # taken where the test is true: the default and aclnn-only modes
    assert (rows["norm"]["default_api"], rows["norm"]["api"], rows["norm"]["cond"]) == \
        ("aclnnNorm", "aclnnFastNorm",
         "!at_npu::native::env::CheckCompatibleImpl() || c10_npu::IsAclnnOnly()")
    assert rows["pool"]["source"]["line"] == 5


def test_opdb_knows_max_pool2d_with_indices_runs_with_mask_by_default():
    """MaxPool2dWithIndicesKernelNpuOpApi.cpp:157 / :180 and its backward :36 / :69."""
    from opdb.op_plugin_routes import mode_route
    for op, api, default in (
            ("aten::max_pool2d_with_indices", "aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithMask"),
            ("aten::max_pool2d_with_indices.out", "aclnnMaxPool2dWithIndices",
             "aclnnMaxPool2dWithMask"),
            ("aten::max_pool2d_with_indices_backward", "aclnnMaxPool2dWithIndicesBackward",
             "aclnnMaxPool2dWithMaskBackward")):
        r = mode_route(op)
        assert (r.api, r.default_api, r.cond) == (api, default, MODE), op
    assert mode_route("aten::add.Tensor") is None


def test_max_pool2d_with_indices_takes_the_mask_route_by_default(db):
    """On A2/A3 out of the box upstream runs aclnnMaxPool2dWithMask with an int8 mask
    `indices` of {N, C, kH*kW, (ceil(oH*oW/16)+1)*32}; aclnnMaxPool2dWithIndices (int32
    indices) in aclnn-only or compatible mode. Before, ours always ran the latter, so its
    `indices` were read as a mask by upstream's backward."""
    r = prepare(db, "aclnnMaxPool2dWithIndices", "torch", op="aten::max_pool2d_with_indices",
                layout="in-tree")
    text = r.files[ADAPTER.format("MaxPool2dWithIndices")]
    mask_w = "((indices.size(-2) * indices.size(-1) + 15) / 16 + 1) * 32"
    for sig, layout in (
            ("std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(",
             "indices = npu_preparation::apply_tensor_without_format(opgen_indices_sizes, "
             "self.options().dtype(at::kChar));"),
            ("std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(",
             "npu_preparation::check_tensor({self}, indices, at::kChar, opgen_indices_sizes);")):
        body = _fn(text, sig)
        gate = body.index(f"    if ({MODE}) {{\n        DO_COMPATIBILITY(aclnnMaxPool2dWithMask, ")
        assert gate < body.index("    } else {\n        DO_COMPATIBILITY(aclnnMaxPool2dWithIndices, ")
        route = body.index(f"    if ({MODE}) {{\n        // op-plugin's default mode runs "
                           "aclnnMaxPool2dWithMask")
        assert route < body.index(mask_w) < body.index(layout) \
            < body.index("EXEC_NPU_CMD(aclnnMaxPool2dWithMask, self, ") \
            < body.index("    } else {\n", route) \
            < body.index("EXEC_NPU_CMD(aclnnMaxPool2dWithIndices, self, ")


def test_the_backward_reads_the_mask_on_the_same_condition(db):
    r = prepare(db, "aclnnMaxPool2dWithIndicesBackward", "torch",
                op="aten::max_pool2d_with_indices_backward", layout="in-tree")
    body = _fn(r.files[ADAPTER.format("MaxPool2dWithIndicesBackward")],
               "at::Tensor max_pool2d_with_indices_backward(")
    route = body.index(f"    if ({MODE}) {{\n        // op-plugin's default mode")
    assert route < body.index("EXEC_NPU_CMD(aclnnMaxPool2dWithMaskBackward, grad_output, self, "
                              "indices, ") \
        < body.index("EXEC_NPU_CMD(aclnnMaxPool2dWithIndicesBackward, grad_output, self, indices, ")
    assert "opgen_indices_sizes" not in body  # gradInput is laid out the same way


def test_no_route_when_the_parameters_differ(db):
    """GeluOutKernelNpuOpApi.cpp runs aclnnGelu(self, out) by default, aclnnGeluV2(self,
    approximate, out) otherwise: not the same call, no route."""
    from codegen.torch_mode_route import mode_branch
    from opdb.op_plugin_routes import mode_route
    route = mode_route("aten::gelu.out")
    assert route is not None and route.default_api == "aclnnGelu"
    assert mode_branch(route, db.aclnn_api("aclnnGelu"), db.aclnn_api("aclnnGeluV2"), {}, set()) is None


def test_the_extractor_refuses_a_wrong_repo_in_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    out = root / "opdb/sources/torch/op_plugin_mode_routes.jsonl"
    before = out.read_bytes()
    r = subprocess.run([sys.executable, str(root / "opdb/sources/torch/extract_mode_routes.py"),
                        "--repo", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "extract_mode_routes:" in r.stderr
    assert out.read_bytes() == before
