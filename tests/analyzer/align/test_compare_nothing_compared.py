"""Two dumps with no call in common are not "no divergence": compare refuses them in one
line (it used to pass them, 0/N calls, exit 0), and a partial match says how many calls it
left uncompared."""
from __future__ import annotations

import pytest

from analyzer.align.compare import compare_dumps
from analyzer.align.layout import StepDump
from opdb.errors import OpscanError


def _t(mean):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.0,
            "Min": -1.0, "Mean": mean, "Norm": 2.0, "NanCount": 0, "InfCount": 0,
            "requires_grad": False}


def _dump(root, modules):
    data = {f"Module.{m}.Linear.forward.0": {"input_args": [_t(0.1)], "input_kwargs": {},
                                             "output": [_t(0.2)]} for m in modules}
    StepDump(step=0, rank=0, framework="pytorch", level="L0", data=data,
             construct={k: None for k in data}).write(root)
    return root


def test_dumps_of_different_models_are_refused(tmp_path):
    a = _dump(tmp_path / "a", ["encoder.fc1", "encoder.fc2"])
    b = _dump(tmp_path / "b", ["decoder.proj"])
    with pytest.raises(OpscanError, match=r"no call compared \(2 call\(s\) in A, 1 in B, none "
                                          r"matched\)") as e:
        compare_dumps(a, b)
    assert "--map FILE" in e.value.hint


def test_empty_dumps_are_refused(tmp_path):
    a, b = _dump(tmp_path / "a", []), _dump(tmp_path / "b", [])
    with pytest.raises(OpscanError, match="no call compared"):
        compare_dumps(a, b)


def test_a_partial_match_counts_what_it_did_not_compare(tmp_path):
    a = _dump(tmp_path / "a", ["fc1", "fc2", "fc3"])
    b = _dump(tmp_path / "b", ["fc1"])
    rep = compare_dumps(a, b)
    assert rep.summary.startswith("no divergence above the noise floor: 1/3 calls pass, "
                                  "2 not compared (")
