"""Statistics of one tensor, in msprobe's statistics-dump spelling.

A record is a plain dict so it serialises straight into dump.json:
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 4], "Max": .., "Min": ..,
     "Mean": .., "Norm": .., "NanCount": 0, "InfCount": 0, "requires_grad": true}
Statistics are computed in float32, or float64 for float64 tensors, whatever the tensor dtype.
Non-tensor arguments become {"type": "int", "value": 3} like msprobe writes them.

`StepStats` is the framework-neutral half of a step's statistics: each framework's recorder
reduces a tensor as the tensor comes by (Max, Min, Sum, Norm) and hands the values here;
`flush()` fills the records once per step. On an accelerator the values stay device
scalars until then (no host sync per tensor; one conversion per step). On the CPU there is
nothing to sync: the values are read at once as Python floats (`HOST`), which costs less
than keeping four small tensors alive per tensor until the end of the step.
Small float32/float64 host tensors (up to STAGED_MAX elements) are not reduced one by
one: `add_array` copies their numbers into a 32K-element staging buffer per dtype as they
come by (a copy, so a later in-place change of the tensor cannot reach the dump), and each
full buffer, and the rest at `flush()`, is reduced at once (`StagedReductions`: numpy's
`maximum/minimum/add.reduceat` over the tensors' segments, Sum and sum of squares
accumulated in float64), where four numpy calls per tensor cost more in call overhead
than in arithmetic on tensors this small.
"""
from __future__ import annotations

import math
import struct

STAT_KEYS = ("Max", "Min", "Mean", "Norm")

# Paddle dtype spellings -> the torch spelling msprobe expects.
PADDLE_TO_TORCH_DTYPE = {
    "paddle.float32": "torch.float32", "paddle.float64": "torch.float64",
    "paddle.float16": "torch.float16", "paddle.bfloat16": "torch.bfloat16",
    "paddle.int64": "torch.int64", "paddle.int32": "torch.int32", "paddle.int16": "torch.int16",
    "paddle.int8": "torch.int8", "paddle.uint8": "torch.uint8", "paddle.bool": "torch.bool",
    "paddle.complex64": "torch.complex64", "paddle.complex128": "torch.complex128",
}


def scalar_record(value) -> dict:
    """msprobe's record of a non-tensor argument."""
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    if value is None:
        return {"type": "NoneType", "value": None}
    if isinstance(value, str):
        return {"type": "str", "value": value}
    return {"type": type(value).__name__, "value": None}


def place_grad(data: dict, targets: list, rec) -> None:
    """Put one gradient's record into every backward record that wants it: targets are
    (backward key, "input" or "output", index, count) as the recorders' tensor hooks keep
    them (a module's input is often the previous module's output: one hook, two places)."""
    for bkey, side, i, n in targets:
        call = data.get(bkey)
        if call is None:
            call = data[bkey] = {"input": [], "output": []}
        lst = call[side]
        if len(lst) < n:
            lst.extend([None] * (n - len(lst)))
        lst[i] = rec


def finite_or_str(x: float, single: bool = False):
    """NaN/Inf stay floats: Python's json writes NaN/Infinity tokens, as msprobe's dumps do
    (a string "-inf" trips msprobe compare's formula-injection check). single: the value was
    computed in float32; keep its shortest float32 spelling (9 digits, not 17)."""
    if single and x - x == 0:  # finite (inf - inf and nan - nan are nan)
        return float("%.9g" % x)  # 9 significant digits round-trip every float32
    return float(x)


def numel(rec: dict) -> int:
    n = 1
    for s in rec.get("shape") or ():
        n *= int(s)
    return n


def as_float(v) -> float:
    """A Max/Min/Mean/Norm value read back from JSON ("nan", "inf", None -> float)."""
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


_F32 = struct.Struct("f")
HOST = "host"  # the group of values already read as Python numbers


class StepStats:
    """The statistics records of one step, filled once per step.

    `add_host(values, rec, numel, single)` queues one tensor's (Max, Min, Sum, Norm), read
    already as Python floats (the CPU path); `add(group, values, rec, numel, single, width)`
    queues values still on a device (Max, Min, Sum, Norm and optionally NanCount, InfCount:
    `width` numbers, as device scalars or one device vector per tensor) under a group key
    (the values' device and dtype: one group converts in one call); `alias(slot, rec)`
    makes another record share a queued tensor's numbers (the same tensor seen twice);
    `flush()` converts each device group with `to_floats(values) -> list[float]` and fills
    Max/Min/Mean/Norm (Mean = Sum / numel) and, when they were queued, the NaN/Inf counts."""

    by_address = False  # no `copy_from` (stats_worker.DeferredStepStats has one)

    def __init__(self, to_floats, fallback=None):
        self._to_floats = to_floats
        self._groups: dict = {}  # key -> [[values], [slots], count of numbers]
        self._host: list = []  # Max, Min, Sum, Norm of each host slot, one flat list
        self._host_slots: list = []  # [numel, single, rec, *aliases]
        # small host arrays queued by add_array, reduced together at flush; fallback(array)
        # -> (Max, Min, Sum, Norm, NanCount, InfCount) for an array with NaN/Inf or squares
        # that could overflow its dtype (the framework's own careful path)
        self._staged = StagedReductions(fallback or numpy_fallback)
        # id(record) -> (Max, Min, Mean, Norm, and their JSON texts): the 9-digit text each
        # float32 statistic was rounded through, kept for the dump's encoder (layout.py),
        # which then writes it as it is instead of finding the float's shortest repr again
        self.texts: dict = {}

    def add_host(self, values, rec: dict, numel: int, single: bool) -> list:
        self._host += values
        slot = [numel, single, rec]
        self._host_slots.append(slot)
        return slot

    def add(self, group, values, rec: dict, numel: int, single: bool, width: int | None = None) -> list:
        if group == HOST:
            return self.add_host(values, rec, numel, single)
        g = self._groups.get(group)
        if g is None:
            g = self._groups[group] = [[], [], 0]
        width = len(values) if width is None else width
        slot = [g[2], width, numel, single, rec]
        g[0].extend(values)
        g[1].append(slot)
        g[2] += width
        return slot

    def add_array(self, a, rec: dict, numel: int, single: bool) -> list:
        """Queue a flat float32 (`single`) or float64 numpy array of 1..STAGED_MAX elements:
        its numbers are copied now (a later in-place change of the tensor cannot reach the
        record), reduced with the other staged arrays when a buffer fills or at flush."""
        host = self._host
        slot = [numel, single, rec]
        pos = len(host)
        host += _PENDING
        self._staged.add(a, numel, single, pos, slot, host)
        self._host_slots.append(slot)
        return slot

    @staticmethod
    def alias(slot: list, rec: dict) -> None:
        slot.append(rec)

    def __len__(self) -> int:
        return len(self._host_slots) + sum(len(g[1]) for g in self._groups.values())

    def add_large(self, a, rec: dict, numel: int, single: bool) -> list | None:
        """Queue a flat float32 (`single`) or float64 numpy array above STAGED_MAX elements:
        reduced now (`host_reductions`); None when it holds NaN/Inf or squares that could
        overflow (the caller takes its framework's careful path). A step whose statistics
        go to the dump's worker process copies the numbers instead (stats_worker)."""
        vals = host_reductions(a)
        if vals[3] is None:
            return None
        return self.add_host(vals, rec, numel, single)

    def flush(self) -> None:
        self.flush_device()
        self.flush_host()

    def flush_host(self) -> None:
        """Fill the host slots' records (staged arrays reduced first)."""
        host, slots = self._host, self._host_slots
        self._host, self._host_slots = [], []
        self._staged.reduce_into(host)
        if slots:  # one flat list: means in one pass, digits in one format, 4 stores per record
            host, texts = step_values(host, slots)
            it = iter(host)
            if texts is not None:
                # each slot's four statistics as dump.json writes them, from one format of the
                # whole step (`_fragments`); every record of the slot shares the text
                store = self.texts
                for slot, mx, mn, mean, norm, frag in zip(slots, it, it, it, it, _fragments(texts, host)):
                    q = (mx, mn, mean, norm, frag) if frag is not None else None
                    for rec in slot[2:]:
                        rec["Max"] = mx
                        rec["Min"] = mn
                        rec["Mean"] = mean
                        rec["Norm"] = norm
                        if q is not None:
                            store[id(rec)] = q
            else:
                for slot, mx, mn, mean, norm in zip(slots, it, it, it, it):
                    for rec in slot[2:]:
                        rec["Max"] = mx
                        rec["Min"] = mn
                        rec["Mean"] = mean
                        rec["Norm"] = norm

    def flush_device(self) -> None:
        """Convert the device groups (one conversion per group) and fill their records."""
        groups, self._groups = self._groups, {}
        for group, (vals, slots, _) in groups.items():
            nums = self._to_floats(vals)
            quads = []  # Max, Min, Sum, Norm of each slot, the sum then turned into the mean
            for off, width, n, single, *recs in slots:
                quads += nums[off:off + 4]
                quads[-2] /= n
            if any(slot[3] for slot in slots):
                quads = _single_digits(quads, [slot[3] for slot in slots])
            for i, (off, width, n, single, *recs) in enumerate(slots):
                mx, mn, mean, norm = quads[4 * i:4 * i + 4]
                stats = {"Max": mx, "Min": mn, "Mean": mean, "Norm": norm}
                if width == 6:
                    stats["NanCount"], stats["InfCount"] = int(nums[off + 4]), int(nums[off + 5])
                for rec in recs:
                    rec.update(stats)


def step_values(host: list, slots: list) -> tuple[list, list | None]:
    """A step's host statistics as the records get them: `host` holds (Max, Min, Sum, Norm)
    of each slot ([numel, single, ...]) in one flat list; the sums become means, and the
    slots computed in float32 go through their 9-digit texts. -> (the values, and the
    texts they were parsed from when every slot is float32; else None)."""
    host[2::4] = [s / slot[0] for s, slot in zip(host[2::4], slots)]
    single = [slot[1] for slot in slots]
    if all(single):
        return _all_single_digits(host)
    if any(single):
        return _single_digits(host, single), None
    return host, None


_PENDING = (None, None, None, None)
# elements per staging buffer (128 KB of float32): reduced as soon as it is full, while its
# numbers are still in the core's cache (its float64 copy 256 KB)
_STAGE = 1 << 15
# arrays up to this many elements (at most _STAGE) are staged; larger ones cost less reduced
# one by one
# (per float32 tensor, reductions and flush, this machine: 6.4 -> 3.4 us at 16 elements,
# 7.4 -> 6.4 us at 2048, 8.2 -> 9.6 us at 4096)
STAGED_MAX = 1 << 11


def numpy_fallback(a) -> tuple:
    """(Max, Min, Sum, Norm, NanCount, InfCount) of a flat float32/float64 array holding
    NaN/Inf or values whose squares could overflow its dtype: numpy in the array's dtype,
    warnings off; NaN/Inf counted only when the norm is not finite (a finite L2 norm means
    neither). Paddle's CPU path (hooks_paddle.queue_stats) computes the same."""
    np = _numpy()
    mx, mn = float(np.maximum.reduce(a)), float(np.minimum.reduce(a))
    with np.errstate(all="ignore"):
        norm = float(np.sqrt(a.dot(a)))
        total = float(np.add.reduce(a))
    nan = inf = 0
    if not math.isfinite(norm):
        nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    return mx, mn, total, norm, nan, inf


def _numpy():
    global _np
    if _np is None:
        import numpy
        _np = numpy
    return _np


class StagedReductions:
    """Small host arrays reduced a buffer at a time instead of one by one: each array is
    copied into a staging buffer of its dtype as it is queued; a full buffer (and each at
    flush) is reduced at once while it is still in the core's cache: numpy's
    maximum/minimum.reduceat over the arrays' segments (exactly each array's own Max and
    Min), Sum and sum of squares by add.reduceat accumulated in float64 (like the chunked
    path's row sums: a float32 tensor's Mean and Norm come out as float64's rounded to
    float32, whatever the order of the elements), one `tolist()`. A segment whose
    Max/Min is NaN/Inf, or whose squares could overflow its dtype (`_SAFE_SQ`, as
    host_reductions judges it), takes `fallback` on its copy; its NaN/Inf counts go into
    every record of its slot."""

    def __init__(self, fallback):
        self.fallback = fallback
        self._open: dict = {}  # single -> [buffer, used, [starts], [host positions], [slots]]

    def add(self, a, n: int, single: bool, pos: int, slot: list, host: list) -> None:
        st = self._open.get(single)
        if st is None:
            np = _numpy()
            st = self._open[single] = [np.empty(_STAGE, np.float32 if single else np.float64), 0, [], [], []]
        elif st[1] + n > _STAGE:
            self._reduce(st, single, host)
        used = st[1]
        end = st[1] = used + n
        st[0][used:end] = a
        st[2].append(used)
        st[3].append(pos)
        st[4].append(slot)

    def reduce_into(self, host: list) -> None:
        """Fill the staged slots' (Max, Min, Sum, Norm) into `host` (StepStats' flat list)."""
        for single, st in self._open.items():
            if st[1]:
                self._reduce(st, single, host)

    def _reduce(self, st: list, single: bool, host: list) -> None:
        np = _numpy()
        buf, used, starts, positions, slots = st
        st[1:] = 0, [], [], []
        x = buf[:used]
        idx = np.array(starts, dtype=np.intp)
        f64 = np.float64
        with np.errstate(all="ignore"):  # NaN/Inf segments are redone by the fallback
            out = np.empty((4, len(starts)), f64)
            out[0] = np.maximum.reduceat(x, idx)
            out[1] = np.minimum.reduceat(x, idx)
            wide = x.astype(f64)  # (float64 data: a copy, squared in place below)
            out[2] = np.add.reduceat(wide, idx)
            out[3] = np.add.reduceat(np.multiply(wide, wide, out=wide), idx)
            counts = np.diff(idx, append=used)
            m = np.maximum(out[0], -out[1])
            ok = m * m * counts < _SAFE_SQ[single]  # False for NaN/Inf too
            np.sqrt(out[3], out=out[3])
            out = out.T.tolist()
        for pos, vals in zip(positions, out):
            host[pos:pos + 4] = vals
        if not ok.all():
            for k in np.flatnonzero(~ok).tolist():
                a = x[starts[k]:starts[k] + int(counts[k])]
                mxk, mnk, tot, norm, nan, inf = self.fallback(a)
                pos = positions[k]
                host[pos:pos + 4] = (mxk, mnk, tot, norm)
                if nan or inf:
                    for rec in slots[k][2:]:
                        rec["NanCount"], rec["InfCount"] = nan, inf


def _all_single_digits(quads: list) -> tuple[list, list | None]:
    """`_single_digits` when every slot was computed in float32 (the usual step); also
    -> the 9-digit texts the values were parsed from (None on the rare overflow path)."""
    k = len(quads) // 4
    try:
        quads[2::4] = struct.unpack("%df" % k, struct.pack("%df" % k, *quads[2::4]))
    except OverflowError:
        return _single_digits(quads, [True] * k), None
    texts = (("%.9g " * len(quads)) % tuple(quads)).split()
    return list(map(float, texts)), texts


# one slot's statistics in dump.json's spelling (layout._DataEncoder writes it as it is)
_FRAGMENT = '"Max":%s,"Min":%s,"Mean":%s,"Norm":%s\n'


def _fragments(texts: list, values: list) -> list:
    """The step's "%.9g" texts, four per slot, as one fragment per slot
    ('"Max":0.5,"Min":-2.0,"Mean":0.1,"Norm":4.1'), from one format and one split for the
    whole step (where each text was checked and patched one by one). `values`: the floats
    the texts parse to; where one is integral and below 1e9, "%.9g" wrote no "." ("997",
    "-0") and JSON would read an integer: ".0" is added, as json writes the float. None for
    a slot with NaN/Inf (left to json, which writes NaN/Infinity)."""
    np = _numpy()
    v = np.array(values)
    with np.errstate(invalid="ignore"):
        integral = np.flatnonzero((v == np.trunc(v)) & (np.abs(v) < 1e9)).tolist()
    for i in integral:
        texts[i] += ".0"
    frags = ((_FRAGMENT * (len(texts) // 4)) % tuple(texts)).split("\n")
    frags.pop()
    bad = np.isnan(v) | np.isinf(v)
    if bad.any():
        for k in np.flatnonzero(bad.reshape(-1, 4).any(axis=1)).tolist():
            frags[k] = None
    return frags


def _single_digits(quads: list, single: list) -> list:
    """Each slot's (Max, Min, Mean, Norm) in `quads`; for the slots computed in float32
    (`single`): the mean rounded to float32, then all four to 9 significant digits (which
    round-trip every float32; nan/inf stay floats). One struct call and one %-format for
    the whole group instead of a few per value."""
    idx = [i for i, s in enumerate(single) if s]
    means = [quads[4 * i + 2] for i in idx]
    try:
        means = struct.unpack("%df" % len(means), struct.pack("%df" % len(means), *means))
    except OverflowError:  # a mean beyond float32's range (cannot come from float32 data): kept as is
        means = [_F32.unpack(_F32.pack(m))[0] if abs(m) <= 3.4028234663852886e38 or m != m else m
                 for m in means]
    picked = []
    for i, m in zip(idx, means):
        picked += (quads[4 * i], quads[4 * i + 1], m, quads[4 * i + 3])
    short = list(map(float, (("%.9g " * len(picked)) % tuple(picked)).split()))
    out = list(quads)
    for j, i in enumerate(idx):
        out[4 * i:4 * i + 4] = short[4 * j:4 * j + 4]
    return out


def pending_record(type_: str, dtype: str, shape: list) -> dict:
    """A tensor's record with its statistics to come (key order as msprobe writes them)."""
    return {"type": type_, "dtype": dtype, "shape": shape, "Max": None, "Min": None,
            "Mean": None, "Norm": None, "NanCount": 0, "InfCount": 0}


def expand_records(data: dict, slots: list, type_: str = "torch.Tensor") -> None:
    """Turn the compact records of a step (tuples (dtype, shape, requires_grad[, NanCount,
    InfCount]) that the torch recorder makes on the worker path, where a nine-key dict per
    tensor and its marshalling cost the training process more) into msprobe's dicts, in
    place: in `data` (any depth of dicts and lists) and in the statistics slots
    ([numel, single, record, *aliases]); one tuple object gives one dict wherever it is
    (the same record in two places stays one record). Dict records are left as they are."""
    template = record_template(type_)
    made: dict = {}

    def rec_of(t: tuple) -> dict:
        r = made.get(id(t))
        if r is None:
            r = made[id(t)] = dict(template, dtype=t[0], shape=t[1], requires_grad=t[2])
            if len(t) > 3:
                r["NanCount"], r["InfCount"] = t[3], t[4]
        return r

    todo = [data]
    while todo:
        obj = todo.pop()
        items = obj.items() if type(obj) is dict else enumerate(obj)
        for k, v in items:
            tv = type(v)
            if tv is tuple:
                obj[k] = rec_of(v)
            elif tv is dict or tv is list:
                todo.append(v)
    for slot in slots:
        for i in range(2, len(slot)):
            if type(slot[i]) is tuple:
                slot[i] = rec_of(slot[i])


def record_template(type_: str) -> dict:
    """`pending_record` to copy per tensor: `dict(template, dtype=.., shape=..)` clones the
    key table (~0.5 us) where a nine-key literal hashes and inserts each key (~0.85 us)."""
    return pending_record(type_, "", [])


# numpy sums in the array's dtype: below these (m * m * n, m the largest magnitude) a sum of
# n squares cannot overflow float32 / float64, so numpy warns of nothing and the norm is finite
_SAFE_SQ = {True: 1e37, False: 1e306}
# above this many elements a tensor is reduced in chunks (`_chunked_reductions`)
CHUNKED_MIN = 1 << 14
# a chunk: 1 MB (float32: 256K elements), read once from memory and kept in the L2 cache
# while the four reductions pass over it; its sum taken as rows of _ROW elements (one
# matrix-vector product with a vector of ones), its squares by one dot product
_CHUNK_BYTES = 1 << 20
_ROW = 1024


_np = None
_ONES: dict = {}


def host_reductions(a) -> tuple[float, float, float | None, float | None]:
    """(Max, Min, Sum, Norm) of `a`, a flat float32 or float64 numpy array on the host, in
    its own dtype (as the frameworks reduce); Sum and Norm are None when `a` holds NaN/Inf
    or its squares could overflow, where the caller takes its own careful path.
    Up to CHUNKED_MIN elements: numpy's max, min, (pairwise) sum and a dot product for the
    norm; above: `_chunked_reductions`."""
    global _np
    np = _np
    if np is None:
        import numpy as np
        _np = np
    if a.size > CHUNKED_MIN:
        return _chunked_reductions(a, np)
    mx, mn = float(np.maximum.reduce(a)), float(np.minimum.reduce(a))
    m = mx if mx > -mn else -mn
    if mx - mx == 0 and mn - mn == 0 and m * m * a.size < _SAFE_SQ[a.dtype != np.float64]:
        return mx, mn, float(np.add.reduce(a)), float(np.sqrt(a.dot(a)))
    return mx, mn, None, None


def _chunked_reductions(a, np) -> tuple[float, float, float | None, float | None]:
    """`host_reductions` of a large array: per 1 MB chunk (which stays in the L2 cache for
    its four passes, so memory is read once), max, min, and per 1024-element row its sum (a
    BLAS matrix-vector product with ones) and its sum of squares (`numpy.vecdot`), each
    accumulated in the array's dtype over 1024 elements, then added up in float64 (one
    float32 dot product over a chunk of bfloat16-valued data is already 4e-6 off).
    Against torch's aminmax, sum and vector_norm (three passes over the tensor): 1.2-1.5x
    less CPU time from 128K to 16M float32 elements, and closer to float64: torch's float32
    vector_norm is off by 1e-5 (1M elements) to 8e-4 (16M) relative, this by < 1e-7
    (benchmarks in docs/align.md; tests/analyzer/align/test_stats.py)."""
    global _rowdot
    ones = _ONES.get(a.dtype)
    if ones is None:
        ones = _ONES[a.dtype] = np.ones(_ROW, a.dtype)
        _rowdot = getattr(np, "vecdot", None) or _einsum_rowdot  # (numpy >= 2.0)
    if a.ndim != 1 or not a.flags.c_contiguous:
        a = a.ravel("K")  # a view in memory order when the array is dense (a permuted layout)
    step = _CHUNK_BYTES // a.itemsize
    safe = _SAFE_SQ[a.dtype != np.float64]
    if a.size <= step:  # one chunk
        mx, mn, total, sq = _chunk_reductions(a, np, ones, safe)
        return mx, mn, total, (None if sq is None else math.sqrt(sq))
    maxes, mins = [], []
    total, sq, ok = 0.0, 0.0, True
    for i in range(0, a.size, step):
        mx, mn, t, q = _chunk_reductions(a[i:i + step], np, ones, safe)
        maxes.append(mx)
        mins.append(mn)
        if q is None:
            ok = False  # NaN/Inf, or squares that could overflow: max and min only
        elif ok:
            total += t
            sq += q
    mx, mn = float(np.maximum.reduce(maxes)), float(np.minimum.reduce(mins))  # (a NaN propagates)
    if ok:
        return mx, mn, total, math.sqrt(sq)
    return mx, mn, None, None


def _chunk_reductions(c, np, ones, safe) -> tuple[float, float, float | None, float | None]:
    """(Max, Min, Sum, sum of squares) of one chunk (`_chunked_reductions`); the last two
    None when it holds NaN/Inf or squares that could overflow."""
    mx, mn = float(np.maximum.reduce(c)), float(np.minimum.reduce(c))
    m = mx if mx > -mn else -mn
    if not (mx - mx == 0 and mn - mn == 0 and m * m * c.size < safe):
        return mx, mn, None, None
    add, f64 = np.add.reduce, np.float64
    rows = c.size // _ROW
    k = rows * _ROW
    total = sq = 0.0
    if rows:
        m2 = c[:k].reshape(rows, _ROW)
        total = float(add(m2.dot(ones), dtype=f64))
        sq = float(add(_rowdot(m2, m2), dtype=f64))
    if k < c.size:  # the tail of the last chunk
        t = c[k:]
        total += float(add(t))
        sq += float(t.dot(t))
    return mx, mn, total, sq


def _einsum_rowdot(m, _):
    """numpy.vecdot(m, m) for numpy < 2.0: each row's sum of squares."""
    return _np.einsum("ij,ij->i", m, m)


_rowdot = None
