"""Outputs torch's eager kernel returns 0-d where its Meta kernel gives a one-element
tensor, probed on the CPU and generated as empty sizes on those inputs (the third
audit's torch rows 13-24, docs/opgen.md "Third audit: the pool at head, torch rows
13-24"). Nothing keys on an API or op name in code; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

COND = "(self.dim() == 0 || self.dim() == 1) && reduction == 0"


def test_the_probe_finds_where_the_meta_kernel_disagrees_with_the_eager_kernel():
    """torch 2.13: multilabel_margin_loss_forward's Meta kernel (a Python decomposition)
    gives `output` [1] for a 0-d or 1-d `self` with reduction none, its CPU kernel [];
    ops whose kernels agree (histc's Python meta) or whose Meta kernel is the structured
    C++ one (log) have no cases."""
    import torch

    from codegen import torch_facts
    cases = torch_facts.meta_zero_dim_cases("aten::multilabel_margin_loss_forward")
    assert {(c.output, c.rank, c.ints) for c in cases} == {
        (0, 0, (("reduction", 0),)), (0, 1, (("reduction", 0),))}
    assert torch_facts.meta_zero_dim_cases("aten::histc") == ()
    assert torch_facts.meta_zero_dim_cases("aten::log") == ()
    # the cases hold at other sizes of the same rank too
    x, t = torch.rand(5), torch.zeros(5, dtype=torch.long)
    eager = torch.ops.aten.multilabel_margin_loss_forward(x, t, 0)[0]
    meta = torch.ops.aten.multilabel_margin_loss_forward(x.to("meta"), t.to("meta"), 0)[0]
    assert (eager.shape, meta.shape) == (torch.Size([]), torch.Size([1]))


def test_the_adapter_sizes_the_output_0_d_on_those_inputs(db):
    """op-plugin MultilabelMarginLossKernelNpuOpApi.cpp: `output_size = {self.size(0)}`
    when `self.dim() == 2 && reduction == None`, else `{}`. Before, ours allocated (and
    resized a given `out` to) the Meta kernel's [1] for a 0-d/1-d `self` with reduction
    none; now both members take empty sizes there, and `is_target` keeps the meta sizes."""
    r = prepare(db, "aclnnMultilabelMarginLoss", "torch",
                op="aten::multilabel_margin_loss_forward")
    text = r.files[ADAPTER.format("MultilabelMarginLossForward")]
    fn = _fn(text, "multilabel_margin_loss_forward(const at::Tensor& self")
    assert ("at::Tensor output = npu_preparation::apply_tensor_without_format(("
            f"{COND} ? at::IntArrayRef() : std::get<0>(meta).sizes())") in fn
    assert ("at::Tensor is_target = npu_preparation::apply_tensor_without_format("
            "std::get<1>(meta).sizes()") in fn
    out = _fn(text, "multilabel_margin_loss_forward_out(const at::Tensor& self")
    assert ("npu_preparation::check_tensor({self, target}, output, output.scalar_type(), "
            f"({COND} ? at::IntArrayRef() : std::get<0>(meta).sizes()));") in out
    assert out.index(COND) < out.index("EXEC_NPU_CMD")


def test_the_probe_keeps_torchs_cpu_warnings_off_the_terminal(capfd):
    """std's CPU kernel warns (TORCH_WARN, written to file descriptor 2 past Python's
    `warnings`) on the probe's 0-d samples, "degrees of freedom is <= 0"; a user
    rendering an adapter must not see warnings about inputs they never gave."""
    from codegen import torch_facts
    torch_facts.meta_zero_dim_cases.__wrapped__("aten::std.correction")
    assert "degrees of freedom" not in capfd.readouterr().err
