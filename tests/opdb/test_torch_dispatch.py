"""Torch dispatch truth from the installed torch, computed once per version and cached."""
import json

import pytest

from opdb import torch_dispatch


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path))
    torch_dispatch.table.cache_clear()
    torch_dispatch._becomes_cache.cache_clear()
    torch_dispatch.becomes.cache_clear()
    yield tmp_path
    torch_dispatch.table.cache_clear()
    torch_dispatch._becomes_cache.cache_clear()
    torch_dispatch.becomes.cache_clear()


def test_facts_and_cache(fresh_cache):
    gn = torch_dispatch.facts("aten::group_norm")
    assert gn.composite_implicit and gn.device_agnostic_key == "CompositeImplicitAutograd"
    mk = torch_dispatch.facts("aten::mkldnn_max_pool2d")
    assert mk.cpu_only and mk.parent == "aten::max_pool2d"
    assert torch_dispatch.facts("aten::mkldnn_convolution").cpu_only  # oneDNN as CompositeExplicit
    assert torch_dispatch.facts("aten::cudnn_convolution").gpu_only
    assert not torch_dispatch.facts("aten::_add_relu.Tensor").cpu_only  # a plain CPU op an NPU may adapt
    assert torch_dispatch.facts("aten::addmm").structured_delegate == "aten::addmm.out"
    assert torch_dispatch.facts("aten::no_such_op") is None
    cached = list(fresh_cache.glob("torch-dispatch-*.json"))
    assert len(cached) == 1
    data = json.loads(cached[0].read_text())
    assert data["ops"]["aten::group_norm"]["keys"] == ["CompositeImplicitAutograd"]


@pytest.mark.parametrize("op,parts", [
    ("aten::group_norm", ("aten::native_group_norm",)),
    ("aten::nll_loss_nd", ("aten::nll_loss_forward",)),
    ("aten::layer_norm", ("aten::native_layer_norm",)),
    ("aten::mkldnn_max_pool2d", ()),
])
def test_becomes(fresh_cache, op, parts):
    assert torch_dispatch.becomes(op) == parts
    torch_dispatch.becomes.cache_clear()
    torch_dispatch._becomes_cache.cache_clear()
    assert torch_dispatch.becomes(op) == parts  # from the on-disk cache
    assert list(fresh_cache.glob("torch-becomes-*.json"))


def test_other_devices_own_kernels(fresh_cache):
    """An op whose only declared kernels are another device's (Metal's `max_pool2d_backward`)
    is no NPU's op; one with a CPU/CUDA kernel or a structured delegate is."""
    mps = torch_dispatch.facts("aten::max_pool2d_backward")
    assert mps.other_device_only and mps.foreign_library == "MPS"
    assert torch_dispatch.facts("aten::_lstm_mps").parent == "aten::lstm"
    for op in ("aten::addbmm", "aten::max_pool2d_with_indices", "aten::isinf", "aten::mode"):
        f = torch_dispatch.facts(op)
        assert not f.other_device_only and f.foreign_library == "", op
    assert torch_dispatch.facts("aten::mkldnn_max_pool2d").foreign_library == "CPU"


@pytest.mark.parametrize("op,parts", [
    ("aten::_unsafe_index.Tensor", ("aten::index.Tensor",)),  # a `Tensor?[]` of indices
    ("aten::to.dtype", ("aten::_to_copy",)),  # ScalarType is an int in the schema: uint8
])
def test_becomes_synthesizes_indices(fresh_cache, op, parts):
    assert torch_dispatch.becomes(op) == parts


def test_structured_ops_become_their_decomposition_and_prims_are_known(fresh_cache):
    """A structured op's generated wrapper only calls its `.out` delegate, so what it
    becomes is its torch._decomp entry (lcm: gcd, mul, ... and prims::div); prims carry
    dispatch facts and run as ATen ops through their CompositeExplicitAutograd kernels."""
    lcm = torch_dispatch.becomes("aten::lcm")
    assert "aten::gcd" in lcm and "prims::div" in lcm and "aten::lcm.out" not in lcm
    div = torch_dispatch.facts("prims::div")
    assert div is not None and div.device_agnostic_key == "CompositeExplicitAutograd"
    assert "aten::div.Tensor" in torch_dispatch.becomes("prims::div")
    assert torch_dispatch.becomes("prims::hypot") == ("aten::empty_permuted", "aten::hypot")
    # a layout argument that must be a permutation: integer lists are retried with 0
    assert torch_dispatch.becomes("aten::empty_permuted") == ("aten::as_strided", "aten::empty.memory_format")


def test_part_dtypes_follow_the_data_dtype(fresh_cache):
    """What each part receives when the op's data inputs are float64: masks stay bool."""
    assert torch_dispatch.part_dtypes("aten::selu", "float64") == (("aten::elu", ("float64",)),)
    parts = dict(torch_dispatch.part_dtypes("aten::_safe_softmax", "bfloat16"))
    assert parts["aten::_softmax"] == ("bfloat16",) and parts["aten::all.dim"] == ("bool",)
    assert torch_dispatch.part_dtypes("aten::selu", "no_such_dtype") is None
