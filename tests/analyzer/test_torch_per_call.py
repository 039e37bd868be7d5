"""Issue 16 (scan wall time, per traced call): the emulator's shortcuts give exactly what
the general path gives. A fresh contiguous output becomes an npu tensor made with its
geometry at once (`npu_emulation.npu_from_raw`), without the as_strided redispatch every
other output takes; op names are cached per OpOverload."""
from __future__ import annotations

import pytest

import torch  # installed by scripts/setup.sh

from analyzer.trace.torch import npu_emulation as emu


def _general(raw):
    """The general path of npu_from_raw: an empty npu base, as_strided to raw's geometry."""
    base = torch._C._acc.create_empty_tensor([0], raw.dtype)
    base.untyped_storage()._opscan_raw = raw.untyped_storage()
    return torch.ops.aten.as_strided.default.redispatch(
        emu._meta_keyset(), base, list(raw.shape), list(raw.stride()), raw.storage_offset())


def _raws():
    x = torch.arange(24, dtype=torch.float32)
    return {
        "contiguous": x.reshape(2, 3, 4).clone(),
        "scalar": torch.tensor(3.5),
        "int64": torch.arange(6).reshape(2, 3),
        "size-1 dims": torch.randn(4, 1, 3),
        # contiguous by torch's rule, but a size-1 dim with a stride create_empty_tensor
        # would not give: must take the general path to keep these strides
        "odd size-1 stride": torch.empty_strided((4, 1, 3), (3, 7, 1)).copy_(
            torch.randn(4, 1, 3)),
        "transposed": x.reshape(4, 6).t(),
        "offset view": x[5:17],
        "offset contiguous 2d": x[4:].reshape(4, 5),
        "zero-size": torch.empty(0, 3),
        "expanded": torch.randn(3, 1).expand(3, 4),
    }


@pytest.mark.parametrize("name", list(_raws()))
def test_npu_from_raw_matches_the_general_path(name):
    emu.ensure_npu_backend()
    raw = _raws()[name]
    fast, slow = emu.npu_from_raw(raw), _general(raw)
    for t in (fast, slow):
        assert t.device.type == emu.DEVICE
    assert (fast.shape, fast.stride(), fast.storage_offset(), fast.dtype) == \
        (slow.shape, slow.stride(), slow.storage_offset(), slow.dtype) == \
        (raw.shape, raw.stride(), raw.storage_offset(), raw.dtype)
    back = emu.raw_of(fast)
    assert back.untyped_storage().data_ptr() == raw.untyped_storage().data_ptr()
    assert torch.equal(back, raw)


def test_contiguous_strides_refuse_zero_sizes_and_follow_create_empty_tensor():
    emu.ensure_npu_backend()
    assert emu._contiguous_strides_of(torch.Size([0, 3])) is None
    for shape in [(), (5,), (2, 3), (4, 1, 3), (1, 1), (2, 1, 1, 7)]:
        made = torch._C._acc.create_empty_tensor(list(shape), torch.float32)
        assert emu._contiguous_strides_of(torch.Size(shape)) == made.stride(), shape


def test_qualified_name_is_cached_per_overload():
    add = torch.ops.aten.add.Tensor
    mm = torch.ops.aten.mm.default
    assert emu.qualified_name(add) == "aten::add.Tensor"
    assert emu.qualified_name(mm) == "aten::mm"
    assert emu._QUALIFIED[add] == "aten::add.Tensor"
    assert emu.qualified_name(add) == "aten::add.Tensor"  # from the cache
