"""A dumped step's statistics, records, encoding and writing in a worker process.

The training process's hooks copy each small host tensor's numbers into a staging area
(as they do in-process, `stats.StagedReductions`); here that area is a shared memory
file (`memfd`, three slots of 8 MB, one per step in flight), and tensors of up to
CHUNKED_MIN elements are copied there too instead of reduced in the hook. At the end of
the step the training process converts what is still on a device (one conversion, as
before), pickles the step's records (their statistics still empty), the slots that point
at them and the staging offsets, and hands that to the worker in one message
(`DeferredStepStats.payload`); the worker (`python -m analyzer.align.stats_worker`: a
fresh interpreter importing numpy and opscan's align modules, never torch or paddle)
reduces the staged numbers, fills the records with `StepStats.flush_host`, encodes and
writes the step's three files with layout's code: the same bytes as the in-process dump
(tests/analyzer/align/test_stats_worker.py). The message is split in a head (the step's
number, its slot and host values) and the step's structure (records, calls, staging
offsets), which a training loop repeats byte for byte: from the third step of a repeated
structure the worker decodes only the head and fills a template of dump.json made from the
second (`StepServer`), the same bytes for about half the worker's instructions. The
pipe's wake-up tends to put the worker on the training thread's own core; it moves off it
for the step while the machine has a spare core (`StepServer._away_from`). The one
difference: a staged tensor holding NaN/Inf or values whose squares could overflow is
reduced by `stats.numpy_fallback` (what Paddle's recorder does in-process); torch's
in-process path takes torch's reductions there, whose Sum and Norm can differ in the last
digits when they are finite.

`WorkerWriter` is the training process's side: `submit(dump)` like `layout.StepWriter`,
at most two steps in flight (a third waits for the worker: back-pressure), the worker's
first error raised as one line by the next `submit` or by `close`; `close()` always ends
the worker (it ignores SIGINT and finishes the steps it has; it exits when its pipe
closes, so it cannot outlive the training process) and unmaps the staging file (a memfd:
no name to leak). `open_writer` starts one, or falls back to the in-process
`layout.StepWriter` with a one-line note when the worker cannot start
(OPSCAN_ALIGN_WORKER=0 asks for the in-process writer).
"""
from __future__ import annotations

import marshal
import os
import pickle
import select
import sys
from pathlib import Path

from ctypes import memmove as _memmove

from analyzer.align import layout
from analyzer.align.stats import (_PENDING, _STAGE, CHUNKED_MIN, STAGED_MAX, StagedReductions,
                                  StepStats, _fragments, expand_records, host_reductions,
                                  numpy_fallback, step_values)

SLOTS = 3  # staging slots: steps in flight (MAX_INFLIGHT) + the step being recorded
MAX_INFLIGHT = 2
SLOT_BYTES = 8 << 20
ENV = "OPSCAN_ALIGN_WORKER"  # "0": in-process writer
_ALIGN = 64  # staging buffers start on a cache line


def _numpy():
    import numpy
    return numpy


class DeferredStepStats(StepStats):
    """StepStats whose host statistics are computed by the worker: `add_array` copies into
    staging buffers of _STAGE elements cut from this step's shared slot (a full buffer
    starts the next one, where the in-process path reduces it: the same segments, so the
    same sums), `add_large` copies arrays of up to CHUNKED_MIN elements likewise (larger
    ones, and anything beyond the slot's 8 MB, are reduced here as before). `payload()`
    converts the device groups and returns what the worker needs."""

    by_address = True  # copy_from: a contiguous tensor's bytes copied from its address

    def __init__(self, to_floats, region, slot: int):
        super().__init__(to_floats)
        self._region = region  # this slot's uint8 view of the shared file (None: no sharing)
        self._addr = region.ctypes.data if region is not None else None
        self._slot = slot
        self._used = 0
        self._chunks: list = []  # [single, array, used, [starts], [host positions], [slots], offset]
        self._open: dict = {}  # single -> its open chunk
        self._large: list = []  # (offset or array, numel, single, host position, slot)

    def _take(self, n: int, single: bool):
        """n elements of this slot's shared memory -> (array, byte offset), or a private
        array and None when the slot is full."""
        np = _numpy()
        dt = np.float32 if single else np.float64
        nbytes = n * (4 if single else 8)
        off = self._used
        if self._region is not None and off + nbytes <= len(self._region):
            self._used = off + ((nbytes + _ALIGN - 1) // _ALIGN) * _ALIGN
            return self._region[off:off + nbytes].view(dt), off
        return np.empty(n, dt), None

    def add_array(self, a, rec: dict, numel: int, single: bool) -> list:
        host = self._host
        slot = [numel, single, rec]
        pos = len(host)
        host += _PENDING
        st = self._open.get(single)
        if st is None or st[2] + numel > _STAGE:
            st = self._new_chunk(single)
        used = st[2]
        end = st[2] = used + numel
        st[1][used:end] = a
        st[3].append(used)
        st[4].append(pos)
        st[5].append(slot)
        self._host_slots.append(slot)
        return slot

    def _new_chunk(self, single: bool) -> list:
        buf, off = self._take(_STAGE, single)
        st = self._open[single] = [single, buf, 0, [], [], [], off, buf.ctypes.data]
        self._chunks.append(st)
        return st

    def copy_from(self, addr: int, rec, numel: int, single: bool) -> list | None:
        """`add_array`/`add_large` of a C-contiguous float32 (`single`) or float64 tensor of
        1..CHUNKED_MIN elements given by the address of its first element: its bytes copied
        now by one memmove (where numpy's view of the tensor, its ravel and the assignment
        cost ~10 K instructions more per tensor: docs/align.md), into the same staging
        buffer and at the same place as `add_array`/`add_large` would put them, so the
        worker reduces the same numbers in the same segments. None when the slot is full
        for a tensor above STAGED_MAX (the caller reduces it from numpy's view, as
        `add_large` does then)."""
        nbytes = numel * (4 if single else 8)
        host = self._host
        pos = len(host)
        if numel <= STAGED_MAX:
            st = self._open.get(single)
            if st is None or st[2] + numel > _STAGE:
                st = self._new_chunk(single)
            used = st[2]
            st[2] = used + numel
            _memmove(st[7] + used * (4 if single else 8), addr, nbytes)
            slot = [numel, single, rec]
            st[3].append(used)
            st[4].append(pos)
            st[5].append(slot)
        else:
            off = self._used
            if self._region is None or off + nbytes > len(self._region):
                return None
            self._used = off + ((nbytes + _ALIGN - 1) // _ALIGN) * _ALIGN
            _memmove(self._addr + off, addr, nbytes)
            slot = [numel, single, rec]
            self._large.append((off, numel, single, pos, slot))
        host += _PENDING
        self._host_slots.append(slot)
        return slot

    def add_large(self, a, rec: dict, numel: int, single: bool) -> list | None:
        if numel > CHUNKED_MIN:
            return super().add_large(a, rec, numel, single)
        buf, off = self._take(numel, single)
        if off is None:  # the slot is full: reduced here
            return super().add_large(a, rec, numel, single)
        buf[:] = a
        host = self._host
        slot = [numel, single, rec]
        self._large.append((off, numel, single, len(host), slot))
        host += _PENDING
        self._host_slots.append(slot)
        return slot

    def release(self) -> None:
        """Drop this step's views of the shared slot (its numbers are the worker's now)."""
        self._region = self._addr = None
        self._chunks, self._open, self._large = [], {}, []

    def payload(self) -> dict:
        """The worker's share of the step (device values converted first)."""
        self.flush_device()
        chunks = [(single, (off if off is not None else buf[:used]), used, starts, pos, slots)
                  for single, buf, used, starts, pos, slots, off, _ in self._chunks if used]
        return {"slot": self._slot, "host": self._host, "slots": self._host_slots,
                "chunks": chunks, "large": self._large,
                "arrays": any(not isinstance(c[1], int) for c in chunks)}


def reduce_host(chunks: list, large: list, region, host: list, on_nan=None) -> None:
    """Reduce one step's staged and copied arrays (`chunks` and `large` of its payload, their
    numbers in `region`, its shared slot) into `host`, its flat (Max, Min, Sum, Norm) list.
    A segment holding NaN/Inf or values whose squares could overflow takes
    `stats.numpy_fallback`; where it counts NaN/Inf, `on_nan(counts)` may raise (the
    template path, whose records are still tuples) before any record gets the counts."""
    np = _numpy()

    def checked(a):
        vals = numpy_fallback(a)
        if vals[4] or vals[5]:
            on_nan(vals[4:])
        return vals
    fallback = numpy_fallback if on_nan is None else checked
    staged = StagedReductions(fallback)
    for single, src, used, starts, positions, slots in chunks:
        dt = np.float32 if single else np.float64
        buf = region[src:src + used * (4 if single else 8)].view(dt) if isinstance(src, int) else src
        staged._reduce([buf, used, starts, positions, slots], single, host)
    for off, n, single, pos, slot in large:
        a = region[off:off + n * (4 if single else 8)].view(np.float32 if single else np.float64)
        vals = host_reductions(a)
        if vals[3] is None:  # NaN/Inf or overflow: the careful path (Paddle's in-process one)
            mx, mn, total, norm, nan, inf = fallback(a)
            vals = (mx, mn, total, norm)
            if nan or inf:
                for rec in slot[2:]:
                    rec["NanCount"], rec["InfCount"] = nan, inf
        host[pos:pos + 4] = vals


def finish_stats(payload: dict, region) -> dict:
    """The worker's half of `StepStats.flush`: reduce the staged and copied arrays of one
    step (from `region`, its shared slot), fill the records; -> the texts for the encoder."""
    host = payload["host"]
    reduce_host(payload["chunks"], payload["large"], region, host)
    st = StepStats(None, numpy_fallback)
    st._host, st._host_slots = host, payload["slots"]
    st.flush_host()
    return st.texts


# A step's message (`encode_step`): b"t", the length of its head (4 bytes, little-endian),
# the head (marshal: step, rank, slot, the host values) and its structure (marshal:
# framework, level, dump.data, construct, stack, and the statistics' slots, chunks and
# large arrays), which a training loop repeats byte for byte from one step to the next (the
# same calls, records and staging offsets; the numbers are in the shared slot and the
# head). The worker compares the structure's bytes with the last step's (`StepServer`).
# b"p": everything pickled (a staging buffer outside the shared slot, a value marshal
# cannot write).
_HEAD = 5


def encode_step(dump: layout.StepDump, payload: dict) -> bytes:
    """One step's message: marshal (a third cheaper than pickle here; its references keep a
    record shared between dump.data and its slot one object, as pickle's memo does), or
    pickle when something marshal cannot write is in it (a staging buffer outside the
    shared slot, which marshal would turn into bytes; a record value it cannot write). The
    first byte says which."""
    if not payload.get("arrays"):  # (marshal would write an array as bytes)
        try:
            head = marshal.dumps((dump.step, dump.rank, payload.get("slot"), payload.get("host", []),
                                  payload.get("cpu")), 4)
            body = marshal.dumps((dump.framework, dump.level, dump.data, dump.construct, dump.stack,
                                  payload.get("slots", []), payload.get("chunks", []),
                                  payload.get("large", [])), 4)
            return b"".join((b"t", len(head).to_bytes(4, "little"), head, body))
        except ValueError:
            pass
    obj = (dump.step, dump.rank, dump.framework, dump.level, dump.data, dump.construct, dump.stack, payload)
    return b"p" + pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _split(msg) -> tuple:
    """A b"t" message -> (its head's memoryview, its structure's)."""
    mv = memoryview(msg)
    n = int.from_bytes(mv[1:_HEAD], "little")
    return mv[_HEAD:_HEAD + n], mv[_HEAD + n:]


def decode_step(msg: bytes) -> tuple:
    """-> (step, rank, framework, level, data, construct, stack, payload)."""
    if msg[:1] == b"p":
        return pickle.loads(memoryview(msg)[1:])
    head, body = _split(msg)
    step, rank, slot, host, _cpu = marshal.loads(head)
    framework, level, data, construct, stack, slots, chunks, large = marshal.loads(body)
    return (step, rank, framework, level, data, construct, stack,
            {"slot": slot, "host": host, "slots": slots, "chunks": chunks, "large": large, "arrays": False})


class WorkerError(Exception):
    pass


class WorkerWriter:
    """The training process's end of the worker (module docstring). `new_batch(to_floats)`
    is the recorder's StepStats factory while this writer is open."""

    def __init__(self, root: Path, start_timeout: float = 60.0, avoid_core: bool = True):
        """avoid_core: the worker leaves the core a step is sent from (`StepServer._away_from`)."""
        import mmap
        import subprocess

        np = _numpy()
        self.root = Path(root)
        self._proc = None
        self._fds: list = []
        self._mm = None
        self._inflight: list = []  # (step, slot) sent, not yet acknowledged
        self._error: str | None = None
        self._os_error = None
        self.recorder = None  # the recorder deferring to this writer (open_writer), handed back at close
        self._owner = os.getpid()  # (a forked child, a DataLoader worker, never ends the worker)
        size = SLOTS * SLOT_BYTES
        mfd = os.memfd_create("opscan-align-stage", 0) if hasattr(os, "memfd_create") else None
        if mfd is None:
            raise WorkerError("no memfd_create on this platform")
        try:
            os.ftruncate(mfd, size)
            self._mm = mmap.mmap(mfd, size)
            self._view = np.frombuffer(self._mm, np.uint8)
            to_w, self._w = os.pipe()  # main -> worker
            self._r, from_w = os.pipe()  # worker -> main
            self._fds = [self._w, self._r]
            pkg = str(Path(__file__).resolve().parents[2])
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [pkg] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "analyzer.align.stats_worker", str(self.root), str(to_w),
                 str(from_w), str(mfd), str(SLOTS), str(SLOT_BYTES), "1" if avoid_core else "0"],
                pass_fds=(to_w, from_w, mfd), env=env, stdin=subprocess.DEVNULL, close_fds=True)
        except BaseException:
            os.close(mfd)
            self._cleanup(kill=True)
            raise
        finally:
            for fd in (locals().get("to_w"), locals().get("from_w")):
                if fd is not None:
                    os.close(fd)
        os.close(mfd)  # the mapping and the worker keep the file
        from multiprocessing.connection import Connection

        self._tx = Connection(self._w, readable=False)
        self._rx = Connection(self._r, writable=False)
        self._fds = []  # the connections own them now
        # is an answer waiting: one poll(2) through a poller made once, where
        # Connection.poll builds a selector per call (~10x the instructions, every step)
        self._answers = select.poll()
        self._answers.register(self._r, select.POLLIN)
        try:
            if not self._rx.poll(start_timeout):
                raise WorkerError(f"no answer within {start_timeout:.0f} s")
            msg = self._rx.recv()
            if msg != ("ready",):
                raise WorkerError(f"unexpected first message {msg!r}")
        except (EOFError, OSError) as e:
            code = self._proc.poll()
            self._cleanup(kill=True)
            raise WorkerError(f"exited at start ({e.__class__.__name__}, exit code {code})") from None
        except BaseException:
            self._cleanup(kill=True)
            raise

    # ------------------------------------------------------------ recorder side
    def new_batch(self, to_floats) -> DeferredStepStats:
        used = {s for _, s in self._inflight}
        slot = next((i for i in range(SLOTS) if i not in used), None)
        if slot is None:  # (cannot happen while submit keeps MAX_INFLIGHT < SLOTS)
            self._wait(len(self._inflight) - 1)
            return self.new_batch(to_floats)
        region = self._view[slot * SLOT_BYTES:(slot + 1) * SLOT_BYTES] if self._mm is not None else None
        return DeferredStepStats(to_floats, region, slot)

    def submit(self, dump: layout.StepDump) -> Path:
        """Hand a recorder's step (statistics pending, `dump.stats`) to the worker."""
        self._poll()
        self._raise()
        batch = dump.stats
        payload = batch.payload()
        if _getcpu is not None:  # (the worker leaves this core: StepServer._away_from)
            payload["cpu"] = _getcpu()
        msg = encode_step(dump, payload)
        batch.release()
        try:
            self._tx.send_bytes(msg)
        except OSError as e:
            self._finish_dead(e)
        self._inflight.append((dump.step, payload["slot"]))
        self._wait(MAX_INFLIGHT)
        self._raise()
        return self.root / f"step{dump.step}" / f"rank{dump.rank}"

    def drain(self) -> None:
        """Wait until the worker has written every step sent (raise its first error)."""
        self._wait(0)
        self._raise()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _poll(self) -> None:
        try:
            while self._answers.poll(0):  # (ready on POLLHUP too: recv raises EOFError)
                self._take(self._rx.recv())
        except (EOFError, OSError) as e:
            self._finish_dead(e)

    def _wait(self, most: int) -> None:
        """Block until at most `most` steps are in flight."""
        try:
            while len(self._inflight) > most:
                self._take(self._rx.recv())
        except (EOFError, OSError) as e:
            self._finish_dead(e)

    def _take(self, msg) -> None:
        kind = msg[0]
        if kind in ("ok", "error"):
            step = msg[1]
            self._inflight = [(s, k) for s, k in self._inflight if s != step]
            if kind == "error" and self._error is None:
                self._error = f"step {step}: {msg[2]}" if step is not None else msg[2]
                self._os_error = msg[3:] or None  # (errno, strerror, filename) of an OSError

    def _finish_dead(self, e) -> None:
        self._inflight = []
        if self._error is None:
            code = self._proc.poll() if self._proc is not None else None
            self._error = f"the worker process ended ({e.__class__.__name__}; exit code {code})"
        self._raise()

    def _raise(self) -> None:
        """The worker's first error: an OSError as the same OSError (the CLI words it as it
        words the in-process writer's), anything else as one line."""
        if self._error is not None:
            from opdb.errors import OpscanError
            err, self._error = self._error, None
            os_error, self._os_error = getattr(self, "_os_error", None), None
            if os_error is not None:
                raise OSError(*os_error)
            raise OpscanError(f"align dump writer process: {err}",
                              hint=f"rerun with {ENV}=0 to write in-process")

    # ------------------------------------------------------------ shutdown
    def close(self, quiet: bool = False) -> None:
        """Wait for the worker to write every step sent, end it, unmap the staging file;
        raise its first error (quiet: an error is on its way up already; raise nothing)."""
        if self.recorder is not None:  # its next steps' statistics in-process again
            self.recorder.defer_to(None)
            self.recorder = None
        try:
            if self._proc is not None and self._proc.poll() is None:
                try:
                    self._tx.send_bytes(b"close")
                    while True:
                        msg = self._rx.recv()
                        if msg == ("closed",):
                            break
                        self._take(msg)
                except (EOFError, OSError) as e:
                    if self._error is None and not quiet:
                        code = self._proc.poll()
                        self._error = f"the worker process ended ({e.__class__.__name__}; exit code {code})"
        finally:
            self._cleanup(kill=False)
        if not quiet:
            self._raise()

    def _cleanup(self, kill: bool) -> None:
        import subprocess

        for c in ("_tx", "_rx"):
            conn = getattr(self, c, None)
            if conn is not None:
                try:
                    conn.close()
                except OSError:
                    pass
                setattr(self, c, None)
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []
        p = self._proc
        if p is not None:
            if kill:
                p.kill()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            self._proc = None
        self._view = None
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a batch still holds a view: freed with it
                pass
            self._mm = None

    def __enter__(self) -> "WorkerWriter":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(quiet=exc_type is not None)

    def __del__(self):
        if getattr(self, "_proc", None) is not None and getattr(self, "_owner", None) == os.getpid():
            self._cleanup(kill=True)


def open_writer(root: Path, recorder=None, notes: list | None = None, worker: bool | None = None):
    """The step writer of a dump: a WorkerWriter (the recorder's statistics go to it),
    or layout.StepWriter when `worker` is False, OPSCAN_ALIGN_WORKER=0, or the worker
    cannot start (a one-line note in `notes`)."""
    if worker is None:
        worker = os.environ.get(ENV, "1") != "0"
    if worker:
        try:
            w = WorkerWriter(root)
        except (WorkerError, OSError) as e:
            if notes is not None:
                notes.append(f"statistics computed in-process: the writer process did not start ({e})")
        else:
            if recorder is not None:
                recorder.defer_to(w)
                w.recorder = recorder
            return w
    if recorder is not None:
        recorder.defer_to(None)
    return layout.StepWriter(root)


# ---------------------------------------------------------------- the worker process
_TENSOR_TYPE = {"pytorch": "torch.Tensor", "paddle": "paddle.Tensor"}  # a record's "type"


def _cpu_reader():
    """sched_getcpu(3) through ctypes (the core this thread runs on; ~1 us), or None where
    there is none (not glibc, not Linux)."""
    try:
        import ctypes

        f = ctypes.CDLL(None).sched_getcpu
        f.restype, f.argtypes = ctypes.c_int, ()
        return f if f() >= 0 else None
    except (OSError, AttributeError):
        return None


_getcpu = _cpu_reader()


def _cpus_to_avoid_on():
    """The CPUs this process may run on when it can leave one of them (two or more, and a
    way to read the current one); else None."""
    if _getcpu is None or not hasattr(os, "sched_getaffinity"):
        return None
    cpus = os.sched_getaffinity(0)
    return cpus if len(cpus) > 1 else None


class _Miss(Exception):
    """The template path cannot write this step (NaN/Inf, float64 statistics): the full one does."""


def _raise_miss(_counts) -> None:
    raise _Miss


class StepServer:
    """The worker's work on each step's message: its records expanded, its statistics
    finished from its shared slot (`view`: the whole staging file), its files encoded and
    written by `writer`.

    A training loop sends the same structure every step (`encode_step`): the same calls,
    records, shapes and staging offsets; only the numbers change. When a step's structure
    bytes equal the last step's, dump.json is the last step's text with each tensor
    record's statistics in their place: a template, made from the second step of a
    structure (its dump.json written with a marker in place of each record's statistics,
    checked to give that step's bytes back, and to hold a marker wherever dump.data holds
    a record with statistics), filled by one format; construct.json and stack.json are
    the last step's bytes. No records are decoded or expanded and nothing is encoded
    again. A step whose statistics meet NaN/Inf, or are not all float32 (no 9-digit
    texts), takes the full path, as does any step whose structure differs."""

    def __init__(self, view, slot_bytes: int, writer: layout.StepWriter, avoid: bool = False):
        self.view, self.slot_bytes, self.writer = view, slot_bytes, writer
        # avoid: leave the training thread's core (`_away_from`); the CPUs this process may use
        self._cpus = _cpus_to_avoid_on() if avoid else None
        self._moved = False
        self.moves = 0  # steps that found this process on the training thread's core
        self.step = None  # the step being served (its number for an error message)
        self._body = None  # the last step's structure bytes
        self._t = None  # its decoded structure and template (_Template), once made
        self.templated = 0  # steps written from a template (tests, benchmarks)

    def serve(self, msg: bytes) -> None:
        self.step = None
        if msg[:1] == b"p":
            self._full(decode_step(msg))
            self._body = self._t = None
            return
        head, body = _split(msg)
        step, rank, slot, host, cpu = marshal.loads(head)
        self.step = step
        if cpu is not None and self._cpus is not None:
            self._away_from(cpu)
        body = bytes(body)  # (a copy, then one memcmp: comparing a memoryview goes item by item)
        same = body == self._body
        if same and self._t is not None and self._t.text is not None:
            if self._templated(step, rank, slot, host):
                return
            host = marshal.loads(head)[3]  # (the template path may have filled part of it)
        structure = marshal.loads(body)
        framework, level, data, construct, stack, slots, chunks, large = structure
        payload = {"slot": slot, "host": host, "slots": slots, "chunks": chunks, "large": large}
        make = same and self._t is None
        if make:  # the second step of a structure: keep what the template path needs
            self._t = _Template(framework, level, construct, stack, slots, chunks, large)
        elif not same:
            self._body, self._t = body, None
        self._full((step, rank, framework, level, data, construct, stack, payload),
                   self._t if make else None)

    def _away_from(self, cpu: int) -> None:
        """Off the training thread's core (`cpu`, where it sent this step from). The step's
        message wakes this process through a pipe, a "sync" wake-up, and Linux places a
        task woken so on the waker's core when the waker looks about to sleep, which a
        training loop never is: the two then share one core while another may sit idle,
        and the step waits for this process's work. Found there, this process leaves that
        core for the step (`sched_setaffinity` without it: the kernel moves it at once)
        and takes every core back after (`settle`): the next wake-up finds it elsewhere.
        Only while the machine has a spare core on average (1-minute load below the number
        of cores this process may use): on an oversubscribed machine the other cores are
        others' too, and moving bought nothing in five A/B runs at load 9-15
        (docs/align.md)."""
        if _getcpu() == cpu and os.getloadavg()[0] < len(self._cpus):
            try:
                os.sched_setaffinity(0, self._cpus - {cpu})
            except OSError:  # (a CPU set changed under us: stay)
                return
            self._moved = True
            self.moves += 1

    def settle(self) -> None:
        """Every allowed core again after a step moved off the training thread's."""
        if self._moved:
            self._moved = False
            try:
                os.sched_setaffinity(0, self._cpus)
            except OSError:  # (a CPU taken away meanwhile: the kernel's mask stays)
                pass

    def _region(self, slot: int):
        return self.view[slot * self.slot_bytes:(slot + 1) * self.slot_bytes]

    def _full(self, step_msg: tuple, make=None) -> None:
        step, rank, framework, level, data, construct, stack, payload = step_msg
        self.step = step
        # (the hooks leave tuples: hooks_torch.queue_stats, hooks_paddle.queue_stats)
        expand_records(data, payload["slots"], _TENSOR_TYPE.get(framework, "torch.Tensor"))
        texts = finish_stats(payload, self._region(payload["slot"]))
        dump = layout.StepDump(step=step, rank=rank, framework=framework, level=level,
                               data=data, construct=construct, stack=stack, texts=texts)
        files = self.writer.encode(dump)
        if make is not None:
            make.build(dump, payload["slots"], files)
        self.writer.submit(dump, files)

    def _templated(self, step: int, rank: int, slot: int, host: list) -> bool:
        t = self._t
        try:
            reduce_host(t.chunks, t.large, self._region(slot), host, on_nan=_raise_miss)
        except _Miss:
            return False
        values, texts = step_values(host, t.slots)
        if texts is None:
            return False
        frags = _fragments(texts, values)
        if None in frags:
            return False
        data = (t.text % tuple([frags[k] for k in t.order])).encode("utf-8")
        dump = layout.StepDump(step=step, rank=rank, framework=t.framework, level=t.level,
                               construct=t.construct, stack=t.stack)
        self.writer.submit(dump, {"dump.json": data, **t.files})
        self.templated += 1
        return True


class _Template:
    """What `StepServer` keeps of a repeated structure: its decoded slots, chunks and large
    arrays (read, never changed), construct and stack and their bytes, and dump.json's
    template: `text % (one statistics fragment per marker)`, `order` naming each marker's
    slot. text None: the structure cannot be templated (a record written without its
    fragment, NaN/Inf in the step that made it, ...)."""

    def __init__(self, framework, level, construct, stack, slots, chunks, large):
        self.framework, self.level, self.construct, self.stack = framework, level, construct, stack
        self.slots, self.chunks, self.large = slots, chunks, large
        self.text = None
        self.order: list = []
        self.files: dict = {}

    def build(self, dump: layout.StepDump, slots: list, files: dict) -> None:
        """The template of this step's dump.json (`dump`'s records expanded and filled,
        `files` its encoded bytes), if it gives those bytes back."""
        texts = dump.texts
        marked, frags, ids = {}, [], set()
        for k, slot in enumerate(slots):
            e = texts.get(id(slot[2])) if len(slot) > 2 else None
            if e is None:
                return  # (NaN/Inf, float64, ...: no fragment to put in)
            frags.append(e[4])
            for rec in slot[2:]:
                q = texts.get(id(rec))
                if q is None:
                    return
                marked[id(rec)] = q[:4] + (f"\x00{k}\x00",)
                ids.add(id(rec))
        parts = dump.dump_json(marked).decode("utf-8").split("\x00")
        order = [int(k) for k in parts[1::2]]
        if len(order) != _count_records(dump.data, ids):
            return  # a record with statistics written without its marker: its numbers would stay
        text = "%s".join(p.replace("%", "%%") for p in parts[0::2])
        if (text % tuple([frags[k] for k in order])).encode("utf-8") != files["dump.json"]:
            return
        self.text, self.order = text, order
        self.files = {"construct.json": files["construct.json"], "stack.json": files["stack.json"]}


def _count_records(data: dict, ids: set) -> int:
    """How many places in `data` (dicts and lists at any depth) hold a record whose id is
    in `ids`."""
    n = 0
    todo = [data]
    while todo:
        obj = todo.pop()
        for v in (obj.values() if type(obj) is dict else obj):
            if type(v) is dict:
                if id(v) in ids:
                    n += 1
                else:
                    todo.append(v)
            elif type(v) is list:
                todo.append(v)
    return n


def _serve(argv: list[str]) -> int:
    import mmap
    import signal
    from multiprocessing.connection import Connection

    from opdb.errors import one_line

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the training process decides when to stop
    root, to_w, from_w, mfd, slots, slot_bytes, avoid = argv
    np = _numpy()
    mm = mmap.mmap(int(mfd), int(slots) * int(slot_bytes))
    view = np.frombuffer(mm, np.uint8)
    slot_bytes = int(slot_bytes)
    rx = Connection(int(to_w), writable=False)
    tx = Connection(int(from_w), readable=False)
    writer = layout.StepWriter(Path(root), threads=False)
    server = StepServer(view, slot_bytes, writer, avoid=avoid == "1")
    tx.send(("ready",))
    while True:
        try:
            msg = rx.recv_bytes()
        except (EOFError, OSError):  # the training process is gone
            break
        if msg == b"close":
            break
        step = None
        try:
            server.serve(msg)
            step = server.step
            tx.send(("ok", step))
        except OSError as e:  # raised again as this OSError by the training process
            step = server.step
            tx.send(("error", step, one_line(f"{e.__class__.__name__}: {e}"), e.errno, e.strerror, e.filename))
        except Exception as e:  # one line to the training process; the next steps still run
            step = server.step
            tx.send(("error", step, one_line(f"{e.__class__.__name__}: {e}")))
        server.settle()
    try:
        try:
            writer.close()
        except Exception as e:
            tx.send(("error", None, one_line(f"{e.__class__.__name__}: {e}")))
        tx.send(("closed",))
    except OSError:  # the training process is gone
        pass
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
