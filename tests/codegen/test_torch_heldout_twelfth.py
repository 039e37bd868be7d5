"""Mechanisms found by scoring the twelfth held-out torch sample (drawn at random,
`benchmarks/opgen_heldout_draw.py --seed 12 --before 118`) against op-plugin 517f2e7d
(docs/opgen.md, "Twelfth sample"): the only Scalar on each side pairs (`other` /
`shiftBits`); an API with no output that writes one param is in-place whatever its name;
a `Tensor?[]` is built into an at::TensorList; an optional number the API lacks selects
the sibling that takes it (`dim` / aclnnRepeatInterleaveWithDim). None keys on an API name in code; the render tests name the upstream
adapter."""
from __future__ import annotations

from codegen.argmap import map_args
from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture
from tests.codegen.torch_adapter_parts import aclnn_api as _api, fw_param as _fw, mapped_names as _got

db = shipped_db_fixture()


def test_the_only_scalar_on_each_side_pairs():
    """torch's Scalar `other` is aclnn's `shiftBits` (aclScalar*), the only one either side
    has. Before, `shiftBits` was a nullptr placeholder and `other` went unpassed."""
    a = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
             ("shiftBits", "const aclScalar*", "input"), ("out", "aclTensor*", "output"))
    fws = [_fw("self", "tensor"), _fw("other", "scalar"), _fw("out", "tensor", is_output=True)]
    m = map_args(a, fws, "torch")
    assert _got(m)["shiftBits"] == ("other", "sole-scalar")
    assert len(m.todos) == 1 and "only Scalar on each side" in m.todos[0]
    assert not m.unused


def test_sole_scalar_needs_one_on_each_side_and_a_required_param():
    """Two Scalars left, two aclScalar params or an `...Optional` scalar: no pairing."""
    out = ("out", "aclTensor*", "output")
    one = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
               ("shiftBits", "const aclScalar*", "input"), out)
    base = [_fw("self", "tensor"), _fw("out", "tensor", is_output=True)]
    two_fw = base + [_fw("other", "scalar"), _fw("alpha", "scalar")]
    assert _got(map_args(one, two_fw, "torch"))["shiftBits"][0] is None
    two_api = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
                   ("low", "const aclScalar*", "input"), ("high", "const aclScalar*", "input"), out)
    got = _got(map_args(two_api, base + [_fw("other", "scalar")], "torch"))
    assert got["low"][0] is None and got["high"][0] is None
    opt = _api("aclnnFoo", ("self", "const aclTensor*", "input"),
               ("shiftBitsOptional", "const aclScalar*", "input"), out)
    assert _got(map_args(opt, base + [_fw("other", "scalar")], "torch"))[
        "shiftBitsOptional"][0] is None


def test_lshift_scalar_passes_other_as_shift_bits(db):
    """op-plugin __Lshift__KernelNpuOpApi.cpp: `EXEC_NPU_CMD(aclnnLeftShifts, self, other,
    result)`; opgen passed nullptr as the required `shiftBits`."""
    r = prepare(db, "aclnnLeftShifts", "torch", op="aten::__lshift__.Scalar")
    body = _fn(r.files[ADAPTER.format("Lshift")], "at::Tensor __lshift__(")
    assert "EXEC_NPU_CMD(aclnnLeftShifts, self, other, out);" in body
    assert "nullptr" not in body


def test_index_put_works_on_a_copy_of_self(db):
    """aclnnIndexPutImpl has no output and writes its `selfRef` in place: whatever the
    API's name, the functional and `.out` members copy `self` into the output and hand
    the API the output (op-plugin IndexPutKernelNpuOpApi.cpp: `self.clone().index_put_`).
    Before, the caller's `self` was written and the returned output never was."""
    r = prepare(db, "aclnnIndexPutImpl", "torch", op="aten::index_put")
    text = r.files[ADAPTER.format("IndexPut")]
    for sig in ("at::Tensor index_put(", "at::Tensor& index_put_out("):
        body = _fn(text, sig)
        assert "out.copy_(self);" in body
        assert "EXEC_NPU_CMD(aclnnIndexPutImpl, out, acl_indices, values, accumulate" in body


def test_optional_tensor_list_is_built_for_the_api(db):
    """torch `Tensor?[]` reaches an aclTensorList as op-plugin builds it: op-plugin's
    ConvertType has no overload for c10::List<c10::optional<at::Tensor>> (the in-tree
    check failed on it), an unset entry is an empty tensor and a host index moves to the
    input's device."""
    r = prepare(db, "aclnnIndex", "torch", op="aten::index.Tensor")
    body = _fn(r.files[ADAPTER.format("Index")], "at::Tensor index(")
    assert "for (const c10::optional<at::Tensor>& opgen_t : indices) {" in body
    assert "acl_indices_vec.push_back(at::empty({0}, self.options()));" in body
    assert ("at::Tensor opgen_e = opgen_t->device() != self.device() ? "
            "opgen_t->to(self.device()) : *opgen_t;") in body
    assert "EXEC_NPU_CMD(aclnnIndex, self, acl_indices, out);" in body


def test_an_optional_number_selects_the_sibling_api_that_takes_it(db):
    """repeat_interleave's `int? dim`: aclnnRepeatInterleave repeats the flattened input,
    aclnnRepeatInterleaveWithDim (same op directory, every param of the base and `dim`)
    repeats along `dim`; op-plugin RepeatInterLeaveKernelNpuOpApi.cpp calls the second
    when `dim.has_value()`. The optional-input branches took tensors and int lists only,
    so `dim` went unpassed and a given dim was ignored."""
    r = prepare(db, "aclnnRepeatInterleave", "torch", op="aten::repeat_interleave.self_Tensor")
    body = _fn(r.files[ADAPTER.format("RepeatInterleave")], "at::Tensor repeat_interleave(")
    assert "if (dim.has_value()) {" in body
    with_dim = body.split("if (dim.has_value()) {")[1].split("} else {")[0]
    assert "EXEC_NPU_CMD(aclnnRepeatInterleaveWithDim, self, repeats, acl_dim," in with_dim
    assert "EXEC_NPU_CMD(aclnnRepeatInterleave, self, repeats, acl_output_size, out);" in \
        body.split("} else {")[1]
    assert not any("`dim`" in t and "not passed" in t for t in r.todos)


def test_an_api_in_place_by_role_runs_the_in_place_member_on_self(db):
    """`index_put_` calls aclnnIndexPutImpl on `self` itself (op-plugin's
    `_index_put_impl_`). Before, the family's in-place member was dropped: the API has no
    `Inplace` name and no output, so neither the Inplace variant nor the out = self route
    applied, and index_put_ on the NPU had no kernel."""
    r = prepare(db, "aclnnIndexPutImpl", "torch", op="aten::index_put")
    body = _fn(r.files[ADAPTER.format("IndexPut")], "at::Tensor& index_put_(")
    assert "EXEC_NPU_CMD(aclnnIndexPutImpl, self, acl_indices, values, accumulate" in body
    assert "return self;" in body and "copy_" not in body
