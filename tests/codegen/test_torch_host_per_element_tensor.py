"""A tensor-list op with a plain `Tensor` argument torch reads on the host, one value
per list element (`_foreach_addcmul.Tensor(Tensor[] self, Tensor[] tensor1, Tensor[]
tensor2, Tensor scalars)`): the ninth held-out sample's ForeachAddcmulScalarList row
(docs/opgen.md). op-plugin ForeachAddcmulTensorKernelNpuOpApi.cpp (517f2e7d) allocates
one output per input, copies `scalars` to the device (`copy_tensor_host_to_device`) and
slices it with the lists (`scalars.slice(0, ...)`) in calls of at most 12 (16 in place)
tensors. The fact is probed from torch (`torch_facts.host_per_element_tensors`), not
keyed on a name."""
from __future__ import annotations

from codegen import torch_facts
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_probe_finds_per_element_host_tensors():
    """On Meta lists of two, `scalars` works as a CPU 1-d tensor of length 2 and fails
    on Meta or with length 3; ops without lists or without such an argument get none."""
    assert torch_facts.host_per_element_tensors("aten::_foreach_addcmul.Tensor") == {"scalars"}
    assert torch_facts.host_per_element_tensors("aten::_foreach_addcdiv.Tensor") == {"scalars"}
    for op in ("aten::_foreach_log2", "aten::_foreach_add.Tensor", "aten::addcmul",
               "aten::masked_select", "aten::no_such_op"):
        assert torch_facts.host_per_element_tensors(op) == frozenset(), op
    # torch's kernel runs on Meta lists with the host tensor left on the CPU: a meta function
    assert torch_facts.meta_kernel("aten::_foreach_addcmul.Tensor") is True


def test_functional_allocates_its_list_and_copies_and_slices_scalars(db):
    r = prepare(db, "aclnnForeachAddcmulScalarList", "torch", op="aten::_foreach_addcmul.Tensor")
    text = r.files[ADAPTER.format("ForeachAddcmul")]
    body = _fn(text, "std::vector<at::Tensor> _foreach_addcmul(")
    # the meta call keeps `scalars` on the host; outputs take each input's options
    assert ("auto meta = at::_foreach_addcmul(opgen_meta(self), opgen_meta(tensor1), "
            "opgen_meta(tensor2), scalars);") in body
    assert ("out.push_back(npu_preparation::apply_tensor_without_format(meta[i].sizes(), "
            "self[i].options().dtype(meta[i].scalar_type())));") in body
    assert "at::Tensor scalars_device = npu_preparation::copy_tensor_host_to_device(scalars);" in body
    assert "for (size_t opgen_i = 0; opgen_i < self.size(); opgen_i += 12) {" in body
    assert "auto opgen_scalars_part = scalars_device.slice(0, opgen_i, opgen_i + opgen_len);" in body
    assert ("EXEC_NPU_CMD(aclnnForeachAddcmulScalarList, opgen_x1_part, opgen_x2_part, "
            "opgen_x3_part, opgen_scalars_part, opgen_out_part);") in body
    assert "compute the returned" not in body
    # only the three position matches are left (right: x1..x3 are self, tensor1, tensor2)
    assert len(r.todos) == 3 and all("matched by position" in t for t in r.todos)
    # the .out member checks the out list against the device inputs only
    out = _fn(text, "void _foreach_addcmul_out(")
    assert "check_tensor({self[i], tensor1[i], tensor2[i]}, out_i," in out
    # the standalone binding copies with .to() and runs on the lists' device
    binding = r.files["standalone/src/binding.cpp"]
    assert "at::Tensor scalars_device = scalars.to(self.front().device());" in binding
    assert "self.front().device(), self, tensor1, tensor2, scalars_device, acl_out);" in binding
