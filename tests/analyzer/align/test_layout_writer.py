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


def _records(values, single=True):
    """Tensor records filled by StepStats's host path, as a recorder makes them."""
    from analyzer.align.stats import StepStats

    batch = StepStats(None)
    recs = []
    for i, (mx, mn, total, norm) in enumerate(values):
        rec = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, i + 1], "Max": None,
               "Min": None, "Mean": None, "Norm": None, "NanCount": 0, "InfCount": 0}
        slot = batch.add_host((mx, mn, total, norm), rec, 2 * (i + 1), single)
        rec["requires_grad"] = bool(i % 2)
        twin = dict(rec, requires_grad=True)  # the same tensor seen again
        batch.alias(slot, twin)
        recs += [rec, twin]
    batch.flush()
    return recs, batch.texts


def test_template_encoder_writes_what_json_writes():
    """dump.json through the recorder's statistics texts: the same numbers as the C
    encoder, the same bytes where the float's shortest repr has 9 digits or fewer (every
    float32 statistic but integral values >= 1e9); an integral value stays a float; a
    NaN/Inf record, a float64 record without texts and a record changed after the flush
    take the C encoder."""
    from analyzer.align.layout import dumps_dump_json

    values = [(3.25, -2.0, 0.5, 4.1), (997.0, 5.0, 1234.0, 3096.34888), (0.1, -0.30000001, 1e-7, 1e-20),
              (2.5e9, -1e16, 3e17, 1.5e-5), (float("nan"), 1.0, 2.0, float("inf")), (-0.0, -0.0, 0.0, 0.0)]
    recs, texts = _records(values)
    assert len(texts) == 2 * (len(values) - 1)  # the NaN/Inf record's pair has none
    changed = recs[2]
    changed["Max"] = 7.5  # after the flush: its texts no longer describe it
    f64, _ = _records([(1.0 / 3, 0.0, 1.0, 2.0 / 3)], single=False)
    data = {"Module.a.A.forward.0": {"input_args": recs[:4], "input_kwargs": {"x": recs[4]}, "output": recs[4:]},
            "Module.a.A.parameters_grad.0": {"weight": [recs[0]], "bias": [f64[0]]},
            "Module.b.B.backward.0": {"input": [None, recs[1]], "output": [{"type": "int", "value": 3}]}}
    head = {"task": "statistics"}
    fast, slow = dumps_dump_json(head, data, texts), dumps_dump_json(head, data)
    assert fast != slow  # the 2.5e9 record is written as 2.5e+09 instead of 2500000000.0
    assert json.loads(fast) == json.loads(slow)
    lines = fast.decode().splitlines()
    assert '"Max":2.5e+09' in lines[3] and '"Max":997.0,"Min":5.0,"Mean":308.5' in lines[3]
    assert '"Max":7.5,' in lines[3] and '"Max":NaN' in lines[3] and '"Norm":Infinity' in lines[3]
    assert json.loads(fast)["data"]["Module.a.A.parameters_grad.0"]["bias"][0]["Max"] == 1.0 / 3  # float64: all 17 digits
    values = values[:2] + values[5:]  # no integral value >= 1e9, no NaN: byte for byte
    recs, texts = _records(values)
    data = {"Module.a.A.forward.0": {"input_args": recs, "input_kwargs": {}, "output": recs[:1]}}
    assert dumps_dump_json(head, data, texts) == dumps_dump_json(head, data)


def test_unchanged_construct_and_stack_bytes_reused():
    a = _dump(0, {"a": None})
    files = a.encode()
    b = _dump(1, {"a": None})
    again = b.encode({"construct.json": (a.construct, files["construct.json"]),
                      "stack.json": (a.stack, files["stack.json"])})
    assert again["construct.json"] is files["construct.json"] and again["stack.json"] is files["stack.json"]
    c = _dump(2, {"a": None, "b": "a"})
    new = c.encode({"construct.json": (a.construct, files["construct.json"])})
    assert json.loads(new["construct.json"]) == {"a": None, "b": "a"}
    a.construct["c"] = "a"  # the same object changed in place: encoded again
    same = a.encode({"construct.json": (a.construct, files["construct.json"])})
    assert json.loads(same["construct.json"]) == {"a": None, "c": "a"}


def test_fragments_spell_each_text_as_before():
    """stats._fragments (one format for the whole step) writes each "%.9g" text as the
    per-text patching did: ".0" added where the text has no "." and no "e" ("997", "-0",
    "123456789"), exponent forms and decimals as they are; a slot with NaN/Inf gets None."""
    import random
    import struct

    from analyzer.align import stats

    rng = random.Random(15)
    vals = [0.0, -0.0, 997.0, -3.0, 123456789.0, 999999999.4, 999999999.5, 1e9, 2.5e9, 1e-7, 0.1,
            -1e16, 1.5, 65504.0, 3.4028234663852886e38]
    for _ in range(400):
        kind = rng.random()
        x = float(rng.randint(-10**6, 10**6)) if kind < 0.3 else rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12)
        vals.append(struct.unpack("f", struct.pack("f", x))[0])
    vals += [0.0] * (-len(vals) % 4)
    host, texts = stats._all_single_digits(list(vals))
    want = [t if ("." in t or "e" in t) else t + ".0" for t in texts]
    frags = stats._fragments(list(texts), host)
    assert len(frags) == len(vals) // 4
    for k, f in enumerate(frags):
        assert f == '"Max":%s,"Min":%s,"Mean":%s,"Norm":%s' % tuple(want[4 * k:4 * k + 4])
    host, texts = stats._all_single_digits([1.0, float("nan"), 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, float("inf"), 0.0, 0.0, 0.0])
    assert stats._fragments(texts, host) == [None, '"Max":1.0,"Min":2.0,"Mean":3.0,"Norm":4.0', None]
