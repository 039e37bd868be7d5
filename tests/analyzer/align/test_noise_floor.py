"""Issue 15: CPU float32 vs CPU bf16 autocast on the bundled examples of both frameworks:
no module is flagged that the float64 noise floor explains, while a planted fault of the
size a real bug gives (1%, the guide's module criterion) in an otherwise identical bf16 run
is flagged at its module: a compare that flags nothing, or everything, fails this test."""
from __future__ import annotations

import pytest

from analyzer.align.compare import compare_dumps
from analyzer.align.fault import Fault
from analyzer.align.layout import read_meta

from .conftest import EXAMPLES

# (framework, model, planted fault in the bf16 run: an op deep enough to leave clean calls before it)
CASES = [("torch", EXAMPLES / "torch_transformer.py", Fault("layer_norm", 2, rel=1e-2)),
         ("paddle", EXAMPLES / "paddle_crnn.py", Fault("conv", 1, rel=1e-2))]


@pytest.mark.parametrize("framework,model,fault", CASES, ids=[c[0] for c in CASES])
def test_fp32_vs_bf16_autocast_flags_nothing_the_floor_explains(align_dumps, framework, model, fault):
    a = align_dumps(f"{framework}-ex-a", model, framework, save_inputs=True)
    ref = align_dumps(f"{framework}-ex-ref", model, framework, inputs_from=str(a), reference="fp64")
    b = align_dumps(f"{framework}-ex-bf16", model, framework, inputs_from=str(a), amp="bf16")
    rep = compare_dumps(a, b, reference=str(ref))
    assert "float64 reference" in rep.floor_source
    modules = [r for r in rep.rows if r.kind == "module"]
    assert len(modules) > 20
    assert [r.key for r in modules if r.failed] == []
    assert rep.origin is None and rep.summary.startswith("no divergence above the noise floor")
    # bf16 really differs from fp32: without the floor (unit roundoff of fp32) it would be flagged
    assert max(r.err for r in modules if r.err is not None) > 1e-3
    assert rep.loss["step0_within_5pct"] is True

    # negative control: the same bf16 run with one op 1% off; B's floor from the clean bf16 run
    bad = align_dumps(f"{framework}-ex-bf16-{fault.kind}{fault.occurrence}", model, framework,
                      inputs_from=str(a), amp="bf16", fault=fault)
    hit = read_meta(bad)["fault"]["hit"]
    assert hit is not None, "the fault never fired"
    rep = compare_dumps(a, bad, reference=str(ref), floors=(str(b),))
    assert rep.floor_source.endswith(f"side B from --floor {b}")
    assert rep.origin is not None and rep.origin.key == hit["module"]
    flagged = [r.key for r in rep.rows if r.kind == "module" and r.failed]
    assert hit["module"] in flagged
    # calls that finished before the faulty op stay within the bf16 floor
    order = [r.key for r in rep.rows if r.kind == "module" and ".forward." in r.key]
    assert not set(order[:order.index(hit["module"])]) & set(flagged)


def test_fp32_vs_bf16_without_reference_uses_bf16_roundoff(align_dumps):
    model = EXAMPLES / "torch_transformer.py"
    a = align_dumps("torch-ex-a", model, "torch", save_inputs=True)
    b = align_dumps("torch-ex-bf16", model, "torch", inputs_from=str(a), amp="bf16")
    rep = compare_dumps(a, b)
    assert rep.floor_source.startswith("no float64 reference")
    assert all(r.threshold == pytest.approx(3 * 7.8e-3) for r in rep.rows if r.status in ("pass", "fail"))
