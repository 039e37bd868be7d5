"""StepWriter: steps written in order on a background thread; an unchanged construct.json
or stack.json is hard-linked to the previous step's; errors surface at close."""
from __future__ import annotations

import json
import os

import pytest

from analyzer.align.layout import StepDump, StepWriter, read_step


def _dump(step, construct):
    return StepDump(step=step, rank=0, framework="pytorch", level="L0",
                    data={"Module.fc.Linear.forward.0": {"output": [{"type": "int", "value": step}]}},
                    construct=construct, stack={"0": [["Module.fc.Linear.forward.0"], ["File m.py, line 1"]]})


def test_steps_written_and_unchanged_files_linked(tmp_path):
    with StepWriter(tmp_path) as w:
        paths = [w.submit(_dump(0, {"a": None})), w.submit(_dump(1, {"a": None})),
                 w.submit(_dump(2, {"a": None, "b": "a"}))]
    s0, s1, s2 = paths
    assert os.path.samefile(s0 / "construct.json", s1 / "construct.json")
    assert os.path.samefile(s0 / "stack.json", s2 / "stack.json")
    assert not os.path.samefile(s1 / "construct.json", s2 / "construct.json")
    assert json.loads((s2 / "construct.json").read_text()) == {"a": None, "b": "a"}
    assert [read_step(tmp_path, n).data["Module.fc.Linear.forward.0"]["output"][0]["value"]
            for n in range(3)] == [0, 1, 2]


def test_writer_error_surfaces_at_close(tmp_path):
    blocker = tmp_path / "step0"
    blocker.write_text("a file where the step folder goes")
    w = StepWriter(tmp_path)
    w.submit(_dump(0, {}))
    with pytest.raises(OSError):
        w.close()


def test_step_written_again_and_leftover_temp_folder(tmp_path):
    """A step folder that exists (a dump redone with --force) is replaced whole, and a
    temp folder a dead run left behind is cleared first: no file of either survives."""
    first = _dump(0, {"a": None})
    first.write(tmp_path)
    (tmp_path / "step0" / "rank0" / "extra.json").write_text("{}")
    leftover = tmp_path / "step0" / ".rank0.tmp"
    leftover.mkdir()
    (leftover / "dump.json").write_text("half a file")
    again = _dump(0, {"b": None})
    again.data["Module.fc.Linear.forward.0"]["output"][0]["value"] = 7
    d = again.write(tmp_path)
    assert sorted(p.name for p in d.iterdir()) == ["construct.json", "dump.json", "stack.json"]
    assert sorted(p.name for p in (tmp_path / "step0").iterdir()) == ["rank0"]
    assert read_step(tmp_path, 0).data["Module.fc.Linear.forward.0"]["output"][0]["value"] == 7
    assert json.loads((d / "construct.json").read_text()) == {"b": None}
