"""The source list of the `.out` members' `npu_preparation::check_tensor(src, out, dtype,
sizes)` (docs/opgen.md, "Eighth audit: the pool at head, torch rows 13-24"). torch_npu's
check_tensor takes an `out` it finds in `src` for an in-place write and raises on a size
mismatch ("output with shape ... doesn't match the broadcast shape") where it resizes any
other `out`; torch resizes (an empty `out=` tensor is the usual case) and so does op-plugin
(LogSpaceKernelNpuOpApi.cpp `out.resize_({steps})`, CatKernelNpuOpApi.cpp
`check_tensor({materialized[0].get()}, out, ...)`). Before, an op with no single-tensor
input put its own `out` there. Nothing keys on an API or op name; the tests name the
upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def test_an_out_op_with_no_tensor_input_resizes_its_out(db):
    """`logspace.out` (Scalars and ints only): the check names no source, so a given
    `out` of another size is resized to `{steps}` as torch and op-plugin do, not refused."""
    r = prepare(db, "aclnnLogSpace", "torch", op="aten::logspace.out")
    body = _fn(r.files[ADAPTER.format("Logspace")], "at::Tensor& logspace_out(")
    assert "npu_preparation::check_tensor({}, out, out.scalar_type(), meta_out.sizes());" \
        in body
    assert "check_tensor({out}" not in body


def test_an_out_op_with_only_a_list_input_resizes_its_out(db):
    """`cat.out` takes its inputs as a list: `torch.cat(xs, out=torch.empty(0))` must
    resize `out` (CatKernelNpuOpApi.cpp); with `out` in the source list it raised."""
    r = prepare(db, "aclnnCat", "torch", op="aten::cat")
    text = r.files[ADAPTER.format("Cat")]
    body = _fn(text, "at::Tensor& cat_out(")
    assert "npu_preparation::check_tensor({}, out, out.scalar_type(), meta.sizes());" in body
    assert "check_tensor({out}" not in text


def test_the_sources_are_the_inputs_and_never_the_out():
    from codegen.torch_target import _check_sources
    assert _check_sources([]) == "{}"
    assert _check_sources(["self", "other"]) == "{self, other}"
    assert _check_sources(["self[i]"]) == "{self[i]}"

