"""The meta-mode cache of the emulated NPU (analyzer.trace.torch.npu_emulation): a repeated
(op, argument signature) is answered from the first run's output geometry. It must change
nothing in the trace: same calls, phases, modules, sources, tensor ids, shapes, dtypes and
the kernels each call dispatched, with and without the cache."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch  # installed by scripts/setup.sh

from analyzer.trace.torch import npu_emulation
from analyzer.trace.torch.tracer import trace_torch
from tests.analyzer import npu_adapted

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def adapted():
    return set(npu_adapted.adapted_ops())


def _detail(trace):
    return [(c.index, c.op, c.overload, c.phase, c.module, c.source, c.step, tuple(c.cpu_ops),
             tuple((t.id, t.dtype, t.shape) for t in c.inputs),
             tuple((t.id, t.dtype, t.shape) for t in c.outputs)) for c in trace.calls]


def _meta_trace(path, adapted, cached: bool, monkeypatch, hits: list):
    seen = []
    orig_install = npu_emulation.Emulator.install

    def install(self):
        seen.append(self)
        return orig_install(self)

    with monkeypatch.context() as m:
        m.setattr(npu_emulation.Emulator, "install", install)
        if not cached:
            m.setattr(npu_emulation, "_meta_cacheable", lambda op: False)
        tr = trace_torch(path, adapted=adapted, mode="meta")
    hits.append(seen[-1].meta_cache_hits)
    return tr


@pytest.mark.parametrize("model", ["tests/fixtures/models/tiny_decoder.py",
                                   "examples/torch_transformer.py"])
def test_cached_meta_trace_equals_uncached(model, adapted, monkeypatch):
    hits: list[int] = []
    with_cache = _meta_trace(ROOT / model, adapted, True, monkeypatch, hits)
    without = _meta_trace(ROOT / model, adapted, False, monkeypatch, hits)
    assert not with_cache.partial and not without.partial
    assert _detail(with_cache) == _detail(without)
    assert with_cache.notes == without.notes
    assert hits[0] > 0 and hits[1] == 0  # the cache answered repeats, and only with it on


def test_only_ops_returning_fresh_tensors_are_cacheable():
    aten = torch.ops.aten
    assert npu_emulation._meta_cacheable(aten.add.Tensor)
    assert npu_emulation._meta_cacheable(aten.native_layer_norm.default)  # tuple of fresh
    assert not npu_emulation._meta_cacheable(aten.add_.Tensor)  # mutates self
    assert not npu_emulation._meta_cacheable(aten.add.out)  # writes out=
    assert not npu_emulation._meta_cacheable(aten.view.default)  # aliases its input
    assert not npu_emulation._meta_cacheable(aten.split.Tensor)  # Tensor[] of views
    assert not npu_emulation._meta_cacheable(aten._local_scalar_dense.default)  # a Scalar


def test_python_number_types_are_part_of_the_signature(tmp_path, adapted):
    """2 == 2.0 as dict keys, but int64 * 2 stays int64 and int64 * 2.0 is float32."""
    model = tmp_path / "promote.py"
    model.write_text(
        "import torch\n\n"
        "def build():\n"
        "    def step():\n"
        "        x = torch.ones(3, dtype=torch.int64)\n"
        "        a = torch.ops.aten.mul.Tensor(x, torch.ops.aten.ones_like(x))\n"
        "        b = torch.ops.aten.mul.Scalar(a, 2)\n"
        "        c = torch.ops.aten.mul.Scalar(a, 2.0)\n"
        "        d = torch.ops.aten.mul.Scalar(a, 2)\n"
        "        return (b + c + d).sum()\n"
        "    return None, (), step\n", encoding="utf-8")
    tr = trace_torch(model, adapted=adapted, mode="meta")
    muls = [c for c in tr.calls if c.op == "aten::mul.Scalar"]
    assert [c.outputs[0].dtype for c in muls] == ["int64", "float32", "int64"]
