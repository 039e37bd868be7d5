"""Class 13's outputs sized by an input's values (docs/opgen.md, "Data-dependent and
flag-sized outputs"): torch's fake implementation gives `bincount` an unbacked length with
no upper bound, so no bound can be allocated; torch's CPU kernel, probed on concrete
values, shows the length (`max(max(self) + 1, minlength)`), the dtype (by `weights`) and
the refusal of negative values, and the adapter reads the length back before the call as
op-plugin 517f2e7d BincountKernelNpuOpApi.cpp does. Nothing keys on an API or op name in
code."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from codegen.torch_facts import ValueSizedOutput
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_bincount_length_dtype_and_refusal_are_probed():
    assert torch_facts.value_sized_output("aten::bincount") == ValueSizedOutput(
        ("max_plus_one", "self", "minlength", "at_least"),
        ("optional", "weights", ("Float",), "Double", "Long"), "self", empty_dtype="Long")
    # an op with a bound (or no tag, or no single sizing tensor) is not value-sized
    for op in ("aten::masked_select", "aten::add.Tensor", "aten::no_such_op"):
        assert torch_facts.value_sized_output(op) is None, op


def test_bincount_reads_its_length_back(db):
    """Before: the output allocated like `self` (its dtype, its length), no check."""
    r = prepare(db, "aclnnBincount", "torch", op="aten::bincount")
    text = r.files[ADAPTER.format("Bincount")]
    body = _fn(text, "at::Tensor bincount(")
    assert "no meta function is known" not in body
    assert ("TORCH_CHECK(self.numel() == 0 || self.min().item().toLong() >= 0," in body)
    assert ("const int64_t opgen_len = std::max<int64_t>((self.numel() == 0 ? 0 : "
            "self.max().item().toLong() + 1), minlength);") in body
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format({opgen_len}, "
            "self.options().dtype((self.numel() == 0 ? at::kLong : "
            "((weights.has_value() && weights->defined()) ? "
            "(weights->scalar_type() == at::kFloat ? weights->scalar_type() : at::kDouble)"
            " : at::kLong))));") in body
    assert "EXEC_NPU_CMD(aclnnBincount, self, weights, minlength, out);" in body
    out = _fn(text, "at::Tensor& bincount_out(")
    assert ("npu_preparation::check_tensor({self}, out, out.scalar_type(), "
            "std::vector<int64_t>{opgen_len});") in out
    assert "out.resize_(self.sizes())" not in out


def test_empty_input_dtype_whatever_the_optional_is_probed(db):
    """Fifth audit (docs/opgen.md, "Fifth audit ... torch rows 13-24"): torch's CPU kernel
    returns int64 zeros for an empty `self` whatever `weights` is (SummaryOps.cpp
    `at::zeros({minlength}, kLong)`; op-plugin BincountKernelNpuOpApi.cpp allocates
    `{minlength}` in Long for it too), where a non-empty `self` is typed by the weights.
    Before: an empty `self` with float weights gave a float32 output. Probed: an empty
    sizing tensor with the optional given in each probe dtype; one dtype for all of them,
    differing from the by-weights rule, is `empty_dtype`."""
    vs = torch_facts.value_sized_output("aten::bincount")
    assert vs.empty_dtype == "Long"
    # an op with no optional tensor keeps None (one_hot's dtype is Long anyway)
    assert torch_facts.value_sized_output("aten::one_hot").empty_dtype is None
    r = prepare(db, "aclnnBincount", "torch", op="aten::bincount")
    body = _fn(r.files[ADAPTER.format("Bincount")], "at::Tensor bincount(")
    assert "self.options().dtype((self.numel() == 0 ? at::kLong : ((weights.has_value()" in body


def test_one_hot_num_classes_minus_one_reads_the_length_back():
    """one_hot's `num_classes` is the length unless it holds its default -1, which asks
    for `max(self) + 1` (torch's CPU kernel; its meta function cannot size it, so the
    adapter's meta call failed for the default). OneHotKernelNpuOpApi.cpp reads it back
    and passes that `depth` to aclnnOneHot, which refuses a negative `numClasses`."""
    assert torch_facts.value_sized_output("aten::one_hot") == ValueSizedOutput(
        ("max_plus_one", "self", "num_classes", "unless_default"), ("const", "Long"),
        "self", True, -1, True)


def test_one_hot_renders_upstreams_depth_and_values(db):
    """The length read back for -1, `self`'s shape plus it, the API given the length; the
    reviewed constants: `onValue`/`offValue` [1] tensors of 1 / 0 in the output's dtype,
    `axis` -1 (op-plugin OneHotKernelNpuOpApi.cpp). Before: a meta call that fails for
    -1 and three placeholders."""
    r = prepare(db, "aclnnOneHot", "torch", op="aten::one_hot")
    body = _fn(r.files[ADAPTER.format("OneHot")], "at::Tensor one_hot(")
    assert "opgen_meta" not in body
    assert ("const int64_t opgen_len = (num_classes == -1 ? (self.numel() == 0 ? 0 : "
            "self.max().item().toLong() + 1) : num_classes);") in body
    assert "num_classes = opgen_len;" in body
    assert "TORCH_CHECK(self.numel() != 0 || num_classes != -1," in body
    assert ("at::Tensor out = npu_preparation::apply_tensor_without_format(opgen_sizes, "
            "self.options().dtype(at::kLong));") in body
    assert "at::Tensor acl_on_value = at::ones({1}, out.options());" in body
    assert "at::Tensor acl_off_value = at::zeros({1}, out.options());" in body
    assert "int64_t acl_axis = -1;" in body
    assert ("EXEC_NPU_CMD(aclnnOneHot, self, acl_num_classes, acl_on_value, acl_off_value, "
            "acl_axis, out);") in body
    assert not r.todos
