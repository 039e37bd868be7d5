"""The dump's worker process (stats_worker): the same bytes as the in-process writer on
both frameworks, its errors as one line at the next submit or at close, no process or
shared memory left behind (also when the step raises, KeyboardInterrupt included), the
in-process fallback with a note, and a worker that never imports a framework."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from analyzer.align import stats_worker
from analyzer.align.layout import StepDump, StepWriter
from opdb.errors import OpscanError

from .conftest import EXAMPLES, MODELS, ROOT


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "opscan_align.json"}


def _dump_both(tmp_path, monkeypatch, model, framework, **kw):
    from analyzer.align.runner import DumpOptions, run_dump

    out = {}
    for mode in ("0", "1"):
        monkeypatch.setenv(stats_worker.ENV, mode)
        d = tmp_path / f"w{mode}"
        r = run_dump(DumpOptions(model=str(model), framework=framework, output=str(d), **kw))
        assert not any("writer process" in n for n in r.meta["notes"])
        out[mode] = _files(d)
    return out["0"], out["1"]


@pytest.mark.parametrize("level", ["module", "op"])
def test_torch_dump_same_bytes_in_worker(tmp_path, monkeypatch, level):
    inproc, worker = _dump_both(tmp_path, monkeypatch, EXAMPLES / "torch_transformer.py", "torch",
                                steps=2, level=level)
    assert len(inproc) == 6 and inproc.keys() == worker.keys()
    for name in inproc:
        assert inproc[name] == worker[name], name


def test_paddle_dump_same_bytes_in_worker(tmp_path, monkeypatch):
    inproc, worker = _dump_both(tmp_path, monkeypatch, MODELS / "paddle_tiny_transformer.py", "paddle",
                                steps=2)
    assert len(inproc) == 6 and inproc.keys() == worker.keys()
    for name in inproc:
        assert inproc[name] == worker[name], name


def _torch_recorder():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    from analyzer.align.hooks_torch import TorchRecorder
    return model, TorchRecorder(model).install()


def _step(model, rec, step, scale=1.0):
    import torch

    rec.begin_step(step)
    x = torch.linspace(-1, 1, 8 * 300).reshape(300, 8) * scale  # 19200 outputs: a copied large tensor
    model(x).square().mean().backward()
    return rec.end_step()


def test_staged_and_copied_tensors_match_in_process(tmp_path):
    """Small (staged), mid-size (copied to the shared slot) and NaN/Inf tensors: the records
    the worker writes equal the in-process ones (NaN/Inf counts in every record of a slot)."""
    import json

    import torch

    for name, worker in (("a", False), ("b", True)):  # (one call site: the same stack.json)
        model, rec = _torch_recorder()
        with stats_worker.open_writer(tmp_path / name, rec, worker=worker) as w:
            assert isinstance(w, stats_worker.WorkerWriter) is worker
            for step, scale in ((0, 1.0), (1, float("inf"))):
                w.submit(_step(model, rec, step, scale))
        rec.remove()
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and len(a) == 6
    for name in a:
        assert a[name] == b[name], name
    data = json.loads(b["step1/rank0/dump.json"])["data"]
    assert data["Module.0.Linear.forward.0"]["input_args"][0]["InfCount"] == 2400
    assert torch.is_tensor(torch.zeros(1))  # (torch stayed in this process)


def _worker_pids():
    me = str(os.getpid())
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if ppid == me and b"analyzer.align.stats_worker" in cmd:
            out.append(int(pid))
    return out


def _memfds():
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "opscan-align-stage" in os.readlink(f"/proc/self/fd/{fd}"):
                n += 1
        except OSError:
            pass
    maps = open("/proc/self/maps").read().count("opscan-align-stage")
    return n, maps


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_no_process_or_shared_memory_left(tmp_path, exc):
    shm_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    model, rec = _torch_recorder()
    with pytest.raises(exc):
        with stats_worker.open_writer(tmp_path, rec) as w:
            assert _worker_pids() == [w.pid]
            assert _memfds() == (1, 1)  # mapped once (mmap keeps its own descriptor), no name
            w.submit(_step(model, rec, 0))
            rec.begin_step(1)
            raise exc("the user's step failed")
    rec.remove()
    assert _worker_pids() == []
    assert _memfds() == (0, 0)
    assert (tmp_path / "step0" / "rank0" / "dump.json").is_file()  # the step before stays written
    if os.path.isdir("/dev/shm"):
        assert set(os.listdir("/dev/shm")) == shm_before


def test_worker_os_error_is_the_same_os_error(tmp_path):
    """A file system error in the worker comes back as the OSError the in-process writer
    raises (the CLI words both the same way)."""
    (tmp_path / "step0").write_text("a file where the step folder goes")
    model, rec = _torch_recorder()
    w = stats_worker.open_writer(tmp_path, rec)
    w.submit(_step(model, rec, 0))
    with pytest.raises(NotADirectoryError) as e:
        w.close()
    rec.remove()
    assert e.value.filename == str(tmp_path / "step0" / ".rank0.tmp")
    assert _worker_pids() == []


def test_worker_error_is_one_line(tmp_path):
    w = stats_worker.open_writer(tmp_path)
    w._tx.send_bytes(b"m not a marshalled step")
    with pytest.raises(OpscanError) as e:
        w.close()
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("align dump writer process: ValueError: bad marshal data")
    assert msg.endswith("(rerun with OPSCAN_ALIGN_WORKER=0 to write in-process)")
    assert _worker_pids() == []


def test_worker_that_cannot_start_falls_back_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    notes = []
    model, rec = _torch_recorder()
    with stats_worker.open_writer(tmp_path, rec, notes) as w:
        assert isinstance(w, StepWriter)
        d = _step(model, rec, 0)
        assert d.stats is None and d.data["Module.0.Linear.forward.0"]["output"][0]["Max"] is not None
        w.submit(d)
    rec.remove()
    assert len(notes) == 1 and notes[0].startswith("statistics computed in-process: the writer process did not start")
    assert (tmp_path / "step0" / "rank0" / "dump.json").is_file()


def test_env_asks_for_in_process(tmp_path, monkeypatch):
    monkeypatch.setenv(stats_worker.ENV, "0")
    w = stats_worker.open_writer(tmp_path)
    assert isinstance(w, StepWriter)
    w.close()


def test_back_pressure_bounds_steps_in_flight(tmp_path):
    model, rec = _torch_recorder()
    with stats_worker.open_writer(tmp_path, rec) as w:
        for i in range(6):
            w.submit(_step(model, rec, i))
            assert len(w._inflight) <= stats_worker.MAX_INFLIGHT
    rec.remove()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"step{i}" for i in range(6)]


def test_worker_imports_no_framework():
    code = ("import sys; import analyzer.align.stats_worker, mmap, signal, multiprocessing.connection, "
            "opdb.errors; bad = [m for m in ('torch', 'paddle') if m in sys.modules]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    assert r.stdout.strip() == "[]"


def test_step_message_round_trip_keeps_shared_records():
    d = StepDump(step=3, rank=0, framework="pytorch", level="L0", data={}, construct={}, stack={})
    rec = {"type": "torch.Tensor", "Max": None}
    d.data["k"] = {"output": [rec]}
    import numpy as np

    # the second: a staging buffer outside the shared slot (a numpy array: pickled)
    for payload in ({"slots": [[1, True, rec]], "chunks": [(True, 0, 1, [0], [0], [])], "arrays": False},
                    {"slots": [[1, True, rec]], "chunks": [(True, np.zeros(3, np.float32), 1, [0], [0], [])],
                     "arrays": True}):
        msg = stats_worker.encode_step(d, payload)
        assert msg[:1] == (b"p" if payload["arrays"] else b"t")
        out = stats_worker.decode_step(msg)
        assert out[7]["slots"][0][2] is out[4]["k"]["output"][0]
        assert type(out[7]["chunks"][0][1]) is type(payload["chunks"][0][1])


def test_worker_ends_when_the_training_process_is_killed(tmp_path):
    """SIGKILL of the training process (no close, no finalizer): the worker sees its pipe
    close and exits (no orphan)."""
    import signal
    import time

    code = ("import os, signal, sys; from pathlib import Path; "
            "from analyzer.align.stats_worker import WorkerWriter; "
            f"w = WorkerWriter(Path({str(tmp_path)!r})); print(w.pid, flush=True); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == -signal.SIGKILL
    pid = int(r.stdout.split()[0])
    for _ in range(100):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # (reaped by init soon)
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the worker outlived its training process")


def test_worker_keeps_hook_time_values_through_writes_the_version_misses(tmp_path):
    """Tensors changed after their hook ran, in the worker path: in place (`_version`
    moves: ReLU(inplace), `out += x`, a clipped parameter gradient) and through `.data`
    (a write `_version` does not see); each record holds the numbers at its hook. This is
    why the numbers are copied in the hook rather than read at the end of the step by a
    rule on `_version` (docs/align.md, the hook-side round)."""
    import json

    import torch
    from torch import nn

    from analyzer.align.hooks_torch import TorchRecorder

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fc = nn.Linear(16, 16)
            self.act = nn.ReLU(inplace=True)
            self.out = nn.Linear(16, 4)
            self.tail = nn.Identity()

        def forward(self, x):
            h = self.act(self.fc(x))  # fc's output changed in place
            y = self.out(h)
            y.data.mul_(0.0)  # out's output changed where _version does not move
            return self.tail(y + 1.0)

    model = Net()
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
    rec = TorchRecorder(model).install()
    seen = {}
    with stats_worker.open_writer(tmp_path, rec, worker=True) as w:
        rec.begin_step(0)
        y = model(x)
        seen["fc"] = model.fc(x).detach()  # what fc returned (same weights, same input)
        y.square().mean().backward()
        g = model.out.weight.grad
        seen["grad"] = g.clone()
        v = g._version
        g.mul_(0.5)  # a clipped gradient, after its hook
        assert g._version != v
        w.submit(rec.end_step())
    rec.remove()
    data = json.loads((tmp_path / "step0/rank0/dump.json").read_text())["data"]
    fc_out = data["Module.fc.Linear.forward.0"]["output"][0]
    assert fc_out["Min"] == pytest.approx(float(seen["fc"].min()), rel=1e-6) and fc_out["Min"] < 0
    out_rec = data["Module.out.Linear.forward.0"]["output"][0]
    assert out_rec["Max"] != 0.0 or out_rec["Min"] != 0.0  # not the zeros written through .data
    assert data["Module.tail.Identity.forward.0"]["output"][0]["Max"] == 1.0
    grad = data["Module.out.Linear.parameters_grad.0"]["weight"][0]
    assert grad["Norm"] == pytest.approx(float(seen["grad"].norm()), rel=1e-6)


def test_worker_path_records_are_compact_and_expanded_by_the_worker(tmp_path):
    """On the worker path the torch hooks make no dict per tensor record: a tuple (dtype,
    shape, requires_grad) the worker turns into msprobe's dict; one tuple in two places
    (a slot and dump.data) stays one record after the message's round trip."""
    from analyzer.align.stats import expand_records

    model, rec = _torch_recorder()
    with stats_worker.open_writer(tmp_path, rec, worker=True) as w:
        d = _step(model, rec, 0)
        out = d.data["Module.0.Linear.forward.0"]["output"][0]
        assert type(out) is tuple and out[0] == "torch.float32" and out[1] == [300, 64]
        grad = d.data["Module.0.Linear.backward.0"]["input"][0]
        assert type(grad) is tuple and grad[2] is False
        msg = stats_worker.encode_step(d, d.stats.payload())
        w.submit(d)
    rec.remove()
    *_, data, _, _, payload = stats_worker.decode_step(msg)
    expand_records(data, payload["slots"])
    r = data["Module.0.Linear.forward.0"]["output"][0]
    assert list(r) == ["type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "NanCount", "InfCount",
                       "requires_grad"]
    assert r["shape"] == [300, 64] and r["requires_grad"] is True
    assert any(r is s for slot in payload["slots"] for s in slot[2:])


def test_paddle_worker_path_records_are_compact_and_expanded_by_the_worker(tmp_path):
    """Paddle's recorder makes the same compact records on the worker path (a tuple per
    host tensor, NaN/Inf counts from its careful path in the tuple); the worker expands
    them with Paddle's record type, into the in-process writer's bytes."""
    import paddle

    from analyzer.align.hooks_paddle import PaddleRecorder

    def run(root, worker):
        paddle.seed(0)
        model = paddle.nn.Sequential(paddle.nn.Linear(8, 64), paddle.nn.ReLU(), paddle.nn.Linear(64, 4))
        rec = PaddleRecorder(model).install()
        seen = {}
        with stats_worker.open_writer(root, rec, worker=worker) as w:
            for step, scale in ((0, 1.0), (1, float("inf"))):
                rec.begin_step(step)
                x = paddle.linspace(-1, 1, 8 * 300).reshape([300, 8]) * scale
                model(x).square().mean().backward()
                d = rec.end_step()
                seen[step] = (d.data["Module.0.Linear.forward.0"]["output"][0],
                              d.data["Module.0.Linear.forward.0"]["input_args"][0])
                w.submit(d)
        rec.remove()
        return seen

    seen = {name: run(tmp_path / name, worker)  # (one call site: the same stack.json)
            for name, worker in (("p", False), ("w", True))}
    compact = seen["w"]
    assert type(seen["p"][0][0]) is dict
    out = compact[0][0]
    assert type(out) is tuple and out[:3] == ("torch.float32", [300, 64], True)
    out_inf = compact[1][0]  # 19200 elements (reduced in the hook), NaN/Inf: the careful path
    assert type(out_inf) is tuple and len(out_inf) == 5 and out_inf[3] + out_inf[4] > 0
    a, b = _files(tmp_path / "p"), _files(tmp_path / "w")
    assert a.keys() == b.keys() and len(a) == 6
    for name in a:
        assert a[name] == b[name], name
    assert b'"type": "paddle.Tensor"' in b["step0/rank0/dump.json"] or \
        b'"type":"paddle.Tensor"' in b["step0/rank0/dump.json"]


def test_worker_path_copies_dense_tensors_by_address(tmp_path, monkeypatch):
    """On the worker path a C-contiguous float tensor's numbers are copied from its address
    (DeferredStepStats.copy_from: no numpy view), staged or copied to the shared slot like
    numpy's; a permuted tensor and a negative-bit view still go through numpy (its view
    resolves the bit); every record equals the in-process one."""
    import torch

    from analyzer.align import hooks_torch as ht

    base = torch.linspace(-3, 2, 4 * 700, dtype=torch.float32).reshape(4, 700)
    cases = [base[:, :5].contiguous(), base.t(), torch._neg_view(base[1]),  # staged: dense, permuted, neg bit
             base, base.double().t().contiguous(),  # above STAGED_MAX: copied to the slot
             torch.ones(3, requires_grad=True) * 2.5, base[2:3]]  # requires grad; a view at an offset
    assert cases[2].is_neg() and not cases[1].is_contiguous()
    viewed = []
    real_numpy = torch.Tensor.numpy

    def counting_numpy(t, *a, **k):
        viewed.append(tuple(t.shape))
        return real_numpy(t, *a, **k)

    monkeypatch.setattr(torch.Tensor, "numpy", counting_numpy)
    with stats_worker.WorkerWriter(tmp_path) as w:
        batch = w.new_batch(ht._to_floats)
        recs = [ht.queue_stats(t, batch, compact=True)[0] for t in cases]
        payload = batch.payload()
        region = w._view[payload["slot"] * stats_worker.SLOT_BYTES:(payload["slot"] + 1) * stats_worker.SLOT_BYTES]
        from analyzer.align.stats import expand_records
        data = {"r": list(recs)}
        expand_records(data, payload["slots"])
        stats_worker.finish_stats(payload, region)
        batch.release()
        del region
    assert viewed == [(700, 4), (700,)]  # only the permuted and the negative-bit tensors
    ref = ht.new_step_stats()
    want = [ht.queue_stats(t, ref)[0] for t in cases]
    ref.flush()
    for got, exp in zip(data["r"], want):
        for k in ("Max", "Min", "Mean", "Norm", "NanCount", "InfCount"):
            assert got[k] == exp[k], (k, got, exp)
    assert data["r"][2]["Max"] == pytest.approx(-float(base[1].min()))


def test_answers_are_polled_without_a_selector_per_step(tmp_path, monkeypatch):
    """`submit` picks up the worker's answers with a poller made once (one poll(2)), not
    `Connection.poll`, which builds a selector on every call; answers and a worker's error
    still arrive (the error at the next submit)."""
    from multiprocessing.connection import Connection

    model, rec = _torch_recorder()
    w = stats_worker.open_writer(tmp_path, rec)

    def no_poll(self, timeout=0.0):
        raise AssertionError("Connection.poll called in the step")

    monkeypatch.setattr(Connection, "poll", no_poll)
    for i in range(4):
        w.submit(_step(model, rec, i))
    w.drain()
    assert w._inflight == []
    w._tx.send_bytes(b"m not a marshalled step")
    import time
    time.sleep(1.0)  # the worker's error answer is waiting
    with pytest.raises(OpscanError, match="bad marshal data"):
        w.submit(_step(model, rec, 4))
    w.close(quiet=True)
    rec.remove()
    assert _worker_pids() == []


def _synthetic_messages(steps, shape2=(2,)):
    """Messages of a two-tensor step as the torch recorder sends them (compact records, the
    numbers staged in the shared slot), one per entry of `steps` (each tensor's two values);
    -> [(message, slot bytes)]."""
    import numpy as np

    out = []
    for i, values in enumerate(steps):
        t1 = ("torch.float32", [2], True)
        t2 = ("torch.float32", list(shape2), False)
        slots = [[2, True, t1], [2, True, t2]]
        d = StepDump(step=i, rank=0, framework="pytorch", level="L0",
                     data={"Module.a.Linear.forward.0": {"input_args": [t1], "input_kwargs": {}, "output": [t2]},
                           "Module.a.Linear.backward.0": {"input": [t2], "output": [t1]}},
                     construct={"Module.a.Linear.forward.0": None}, stack={})
        payload = {"slot": i % 3, "host": [None] * 8, "slots": slots,
                   "chunks": [(True, 0, 4, [0, 2], [0, 4], slots)], "large": [], "arrays": False}
        out.append((stats_worker.encode_step(d, payload), np.array(values, np.float32).tobytes()))
    return out


def _serve_all(root, msgs, templates=True, monkeypatch=None):
    import numpy as np

    size = 4096
    view = np.zeros(3 * size, np.uint8)
    writer = StepWriter(root, threads=False)
    server = stats_worker.StepServer(view, size, writer)
    if not templates:
        server._t = None
        monkeypatch.setattr(stats_worker._Template, "build", lambda self, *a: None)
    for msg, slot_bytes in msgs:
        s = stats_worker._split(msg)[0]
        import marshal
        slot = marshal.loads(s)[2]
        view[slot * size:slot * size + len(slot_bytes)] = np.frombuffer(slot_bytes, np.uint8)
        server.serve(msg)
    writer.close()
    if not templates:
        monkeypatch.undo()
    return server.templated


def test_repeated_structure_written_from_a_template(tmp_path, monkeypatch):
    """From the third step of a repeated structure, dump.json is the template filled with
    the step's statistics: the same bytes as the full path's, step by step; a step with
    NaN/Inf takes the full path (its counts), the next one the template again."""
    steps = [(1, 2, 3, 4), (0.5, -2, 7, 1e-3), (1 / 3, 2 / 3, -5, 9), (float("nan"), 1, 2, 3),
             (8, 9, 10, 11.5)]
    msgs = _synthetic_messages(steps)
    full = _serve_all(tmp_path / "full", msgs, templates=False, monkeypatch=monkeypatch)
    templated = _serve_all(tmp_path / "t", msgs)
    assert full == 0 and templated == 2  # steps 2 and 4 (0: first seen, 1: template made, 3: NaN)
    a, b = _files(tmp_path / "full"), _files(tmp_path / "t")
    assert a.keys() == b.keys() and len(a) == 15
    for name in a:
        assert a[name] == b[name], name
    assert b'"NanCount":1' in b["step3/rank0/dump.json"]
    assert b'"Max":11.5' in b["step4/rank0/dump.json"]


def test_no_template_when_a_record_is_written_without_its_statistics_text(tmp_path, monkeypatch):
    """A record the encoder writes from its values rather than its fragment (here a shape
    that is not all ints) would keep the template's numbers: no template is made, and every
    step has its own numbers."""
    steps = [(1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16)]
    msgs = _synthetic_messages(steps, shape2=(2, "n"))
    assert _serve_all(tmp_path / "t", msgs) == 0
    _serve_all(tmp_path / "full", msgs, templates=False, monkeypatch=monkeypatch)
    a, b = _files(tmp_path / "full"), _files(tmp_path / "t")
    assert a == b
    assert b'"Max":16.0' in b["step3/rank0/dump.json"]


def test_worker_dump_of_many_steps_same_bytes(tmp_path, monkeypatch):
    """Five steps (three from the worker's template) of the transformer example: the same
    bytes as the in-process writer."""
    inproc, worker = _dump_both(tmp_path, monkeypatch, EXAMPLES / "torch_transformer.py", "torch",
                                steps=5)
    assert len(inproc) == 15 and inproc.keys() == worker.keys()
    for name in inproc:
        assert inproc[name] == worker[name], name


def test_worker_leaves_the_core_the_step_was_sent_from(tmp_path, monkeypatch):
    """A step whose message says it was sent from the core the worker finds itself on: the
    worker leaves that core for the step (its affinity without it) and takes every core back
    after, while the machine has a spare core (load below the cores); a step sent from
    another core, or with no spare core, moves nothing. The training side puts its core in
    the message's head."""
    import marshal

    calls = []
    monkeypatch.setattr(stats_worker.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(stats_worker.os, "sched_setaffinity", lambda pid, cpus: calls.append(set(cpus)))
    monkeypatch.setattr(stats_worker, "_getcpu", lambda: 1)
    load = [0.5]
    monkeypatch.setattr(stats_worker.os, "getloadavg", lambda: (load[0], 0.0, 0.0))
    import numpy as np

    server = stats_worker.StepServer(np.zeros(3 * 4096, np.uint8), 4096, StepWriter(tmp_path, threads=False),
                                     avoid=True)
    for i, (msg, slot_bytes) in enumerate(_synthetic_messages([(1, 2, 3, 4), (5, 6, 7, 8), (9, 8, 7, 6)])):
        head, body = stats_worker._split(msg)
        h = list(marshal.loads(head))
        assert len(h) == 5 and h[4] is None  # (encode_step's own: no core given)
        h[4] = 2 if i == 1 else 1
        if i == 2:  # the same core, but no spare core on the machine (load 3 on 3 cores): stays
            load[0] = 3.0
        head = marshal.dumps(tuple(h), 4)
        server.serve(b"t" + len(head).to_bytes(4, "little") + head + bytes(body))
        server.settle()
        if i == 0:
            assert calls == [{0, 2}, {0, 1, 2}]
    assert calls == [{0, 2}, {0, 1, 2}] and server.moves == 1
    # the training side: the core it sends from, in the head
    model, rec = _torch_recorder()
    sent = []
    with stats_worker.open_writer(tmp_path / "w", rec, worker=True) as w:
        real = w._tx.send_bytes
        w._tx.send_bytes = lambda m: (sent.append(bytes(m)), real(m))[1]
        w.submit(_step(model, rec, 0))
    rec.remove()
    assert marshal.loads(stats_worker._split(sent[0])[0])[4] == 1
