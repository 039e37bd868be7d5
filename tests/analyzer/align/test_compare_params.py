"""Parameter gradients are matched by parameter name (autocast changes the order they
accumulate in), and an infinite error (shapes or NaN/Inf counts differ) never passes,
even when the floor run is itself infinite."""
from __future__ import annotations

from analyzer.align.compare import compare_dumps
from analyzer.align.layout import StepDump


def _t(shape, mx, mean, norm):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": shape, "Max": mx, "Min": -mx,
            "Mean": mean, "Norm": norm, "NanCount": 0, "InfCount": 0, "requires_grad": False}


def _dump(root, params: dict, out_shape=(2, 3)):
    data = {"Module.fc.Linear.forward.0": {"input_args": [_t([2, 4], 1.0, 0.1, 2.0)], "input_kwargs": {},
                                           "output": [_t(list(out_shape), 1.5, 0.2, 3.0)]},
            "Module.fc.Linear.parameters_grad.0": params}
    StepDump(step=0, rank=0, framework="pytorch", level="L0", data=data,
             construct={"Module.fc.Linear.forward.0": None}).write(root)
    return root


def test_parameter_grads_match_by_name(tmp_path):
    w, b = [_t([3, 4], 0.5, 0.01, 1.0)], [_t([3], 0.2, 0.0, 0.3)]
    a = _dump(tmp_path / "a", {"bias": b, "weight": w})
    b_ = _dump(tmp_path / "b", {"weight": w, "bias": b})
    rep = compare_dumps(a, b_)
    row = next(r for r in rep.rows if r.key.endswith("parameters_grad.0"))
    assert row.err == 0.0 and row.status == "pass"


def test_infinite_error_never_passes(tmp_path):
    a = _dump(tmp_path / "a", {"weight": [_t([3, 4], 0.5, 0.01, 1.0)]})
    b = _dump(tmp_path / "b", {"weight": [_t([3, 4], 0.5, 0.01, 1.0)]}, out_shape=(2, 4))
    rep = compare_dumps(a, b)
    row = next(r for r in rep.rows if r.key == "Module.fc.Linear.forward.0")
    assert row.err == float("inf") and row.status == "fail"
