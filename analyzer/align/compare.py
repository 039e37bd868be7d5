"""`opscan align compare A B`: match calls, score them against a noise floor, find where the
runs part ways.

Matching: module calls by key (`Module.{path}.{Class}.{phase}.{n}`, paths renamed by a
mapping file first); op calls by (parent module call, op name, occurrence under that parent),
which survives the casts autocast inserts. A call fails when its error exceeds k x its noise
floor: the error each side's dtype shows against a float64 reference run (`--reference`),
taken from a CPU run in that dtype (the side itself when it ran on the CPU without a planted
fault, or a `--floor` dump), else the dtype's unit roundoff; k = 2 for float32, 3 for
bf16/fp16. The origin is the first forward module call, in completion order, whose inputs
pass and outputs fail (then backward); the descent names the first failing op of its own.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from analyzer.align import layout, metrics
from analyzer.align.layout import StepDump
from opdb.errors import OpscanError


@dataclass
class CallRow:
    """One matched call (module phase or op) of the compared step."""

    key: str  # side A's key
    kind: str  # "module" | "op"
    phase: str  # forward | backward | parameters_grad
    parent: str | None
    order: int  # position in A's dump.json
    name: str  # module path, or op name (torch: gelu.default; paddle: gelu)
    dtype_a: str | None = None
    dtype_b: str | None = None
    err: float | None = None  # outputs (forward), input grads (backward), param grads
    err_in: float | None = None  # inputs (forward), output grads (backward)
    floor: float | None = None
    floor_in: float | None = None
    threshold: float | None = None
    threshold_in: float | None = None
    mean_ok: bool | None = None  # the guide's 1% mean criterion
    norm_a: float | None = None
    norm_b: float | None = None
    mean_a: float | None = None
    mean_b: float | None = None
    status: str = "pass"  # pass | fail | missing-in-b | not-compared

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def inputs_ok(self) -> bool:
        return self.err_in is None or self.threshold_in is None or self.err_in <= self.threshold_in


@dataclass
class Suspect:
    op: str  # framework op (aten::gelu / gelu)
    key: str
    parent: str | None
    err: float | None
    threshold: float | None
    verdict: dict = field(default_factory=dict)  # opscan classification for the target
    rank: int = 0
    # Paddle: the CUSTOM_DEVICE_BLACK_LIST trial as `opscan blacklist` judged it:
    # {"status": "trial"|"refused"|"unchecked", "export": ..., "reason": ...}; {} for torch
    blacklist: dict = field(default_factory=dict)


@dataclass
class AlignReport:
    a: str
    b: str
    meta_a: dict
    meta_b: dict
    step: int
    rows: list[CallRow]
    floor_source: str
    origin: CallRow | None = None
    descent: list[str] = field(default_factory=list)
    op: CallRow | None = None
    suspects: list[Suspect] = field(default_factory=list)
    loss: dict = field(default_factory=dict)
    losses_a: list = field(default_factory=list)
    losses_b: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    repro: str | None = None
    op_dumps: tuple[str, str] | None = None  # op-level re-runs the op was named from

    # ---------------------------------------------------------------- numbers
    @property
    def counts(self) -> dict:
        c = {"calls": len(self.rows), "failed": 0, "passed": 0, "unmatched": 0,
             "modules_failed": 0, "ops_failed": 0, "mean_criterion_failed": 0}
        for r in self.rows:
            if r.status == "fail":
                c["failed"] += 1
                c["modules_failed" if r.kind == "module" else "ops_failed"] += 1
            elif r.status == "pass":
                c["passed"] += 1
            else:
                c["unmatched"] += 1
            if r.mean_ok is False:
                c["mean_criterion_failed"] += 1
        return c

    @property
    def summary(self) -> str:
        c = self.counts
        if self.origin is None:
            head = (f"no divergence above the noise floor: {c['passed']}/{c['calls']} calls pass"
                    + (f", {c['unmatched']} not compared" if c["unmatched"] else "")
                    + f" ({self.floor_source})")
        else:
            head = f"runs part ways at {self.origin.key} (error {_fmt(self.origin.err)} > {_fmt(self.origin.threshold)})"
            if self.op is not None:
                head += f", op {self.op.name} ({self.op.key})"
            head += f"; {c['failed']}/{c['calls']} calls fail"
        if self.loss.get("mean_relative_error") is not None:
            head += (f"; loss mean relative error {self.loss['mean_relative_error']:.3g} over "
                     f"{self.loss['steps']} step(s)")
        return head

    def to_json(self) -> dict:
        return {
            "schema": "opscan-align-compare/1",
            "a": self.a, "b": self.b, "step": self.step, "summary": self.summary,
            "run_a": _run_info(self.meta_a), "run_b": _run_info(self.meta_b),
            "floor_source": self.floor_source, "counts": self.counts,
            "origin": asdict(self.origin) if self.origin else None,
            "descent": self.descent, "op": asdict(self.op) if self.op else None,
            "suspects": [asdict(s) for s in self.suspects],
            "loss": self.loss, "losses_a": self.losses_a, "losses_b": self.losses_b,
            "criteria": {"floor_k": metrics.K, "module_mean": metrics.MEAN_CRITERION,
                         "loss_step": metrics.LOSS_STEP_CRITERION,
                         "loss_curve": metrics.LOSS_CURVE_CRITERION},
            "notes": self.notes, "next_steps": self.next_steps, "repro": self.repro,
            "op_dumps": list(self.op_dumps) if self.op_dumps else None,
            "rows": [asdict(r) for r in self.rows],
        }


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.3g}"


def _run_info(meta: dict) -> dict:
    keys = ("model", "framework", "device", "dtype", "amp", "compute_dtype", "reference", "level",
            "steps", "seed", "fault")
    return {k: meta.get(k) for k in keys if k in meta} or {"source": "msprobe dump"}


# ---------------------------------------------------------------- identities

def _phase(key: str) -> str:
    for p in ("parameters_grad", "backward", "forward"):
        if f".{p}." in key or key.endswith(f".{p}"):
            return p
    return "forward"


def _module_path(key: str) -> str:
    """Module.blocks.0.fc1.Linear.forward.0 -> blocks.0.fc1"""
    parts = key.split(".")
    for p in ("forward", "backward", "parameters_grad"):
        if p in parts:
            i = parts.index(p)
            return ".".join(parts[1:i - 1])
    return ".".join(parts[1:-3])


def _op_name(key: str) -> str:
    """Aten.gelu.default.3.forward -> gelu.default; Paddle.gelu.3.forward -> gelu;
    msprobe Functional.gelu.0.forward -> gelu."""
    parts = key.split(".")
    if parts[-1] in ("forward", "backward"):
        parts = parts[:-1]
    if parts and parts[-1].isdigit():
        parts = parts[:-1]
    return ".".join(parts[1:])


def is_module_key(key: str) -> bool:
    return key.startswith("Module.") or key.startswith("Cell.")


def identities(dump: StepDump, rename=None) -> dict:
    """identity -> key. Module keys are their own identity (after renaming); op keys become
    (parent, op name, occurrence under that parent)."""
    out: dict = {}
    seen: dict = {}
    for key in dump.data:
        if is_module_key(key):
            out[rename(key) if rename else key] = key
            continue
        parent = dump.construct.get(key)
        if rename and parent:
            parent = rename(parent)
        name = key.split(".")[0] + ":" + _op_name(key)
        if _phase(key) != "forward":
            name += ":" + _phase(key)
        n = seen.get((parent, name), 0)
        seen[(parent, name)] = n + 1
        out[(parent, name, n)] = key
    return out


def load_mapping(path: str | None):
    """A JSON or YAML file {"path.in.b": "path.in.a", ...} (module path prefixes of B -> A)."""
    if not path:
        return None
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise OpscanError(f"{p}: cannot read the mapping file ({e.strerror})") from None
    try:
        import yaml
        m = yaml.safe_load(text)
    except Exception as e:  # yaml.YAMLError and friends
        raise OpscanError(f"{p}: not JSON/YAML ({e.__class__.__name__})",
                          hint='write {"module.path.in.b": "module.path.in.a"}') from None
    if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in m.items()):
        raise OpscanError(f"{p}: the mapping must be an object of strings",
                          hint='write {"module.path.in.b": "module.path.in.a"}')
    items = sorted(m.items(), key=lambda kv: -len(kv[0]))

    def rename(key: str) -> str:
        if not is_module_key(key):
            return key
        path_ = _module_path(key)
        for old, new in items:
            if path_ == old or path_.startswith(old + "."):
                new_path = new + path_[len(old):]
                return key.replace(f"Module.{path_}.", f"Module.{new_path}.", 1)
        return key
    return rename


# ---------------------------------------------------------------- errors

def _finite(x) -> float:
    return x if x is not None and math.isfinite(x) else 0.0


def _parts(phase: str, rec: dict) -> tuple[list, list]:
    """(checked records, their inputs) of one call record."""
    if not isinstance(rec, dict):
        return [], []
    if phase == "backward":
        return rec.get("output") or [], rec.get("input") or []
    if phase == "parameters_grad":  # by parameter name: the order grads accumulate in varies
        return [x for _, v in sorted(rec.items()) for x in (v if isinstance(v, list) else [v])], []
    ins = list(rec.get("input_args") or [])
    kw = rec.get("input_kwargs") or {}
    if isinstance(kw, dict):
        ins += _records(list(kw.values()), [])
    return rec.get("output") or [], ins


def _records(vals: list, out: list) -> list:
    """The records in keyword-argument values, nested lists (a tuple argument) opened."""
    for v in vals:
        if isinstance(v, list):
            _records(v, out)
        elif isinstance(v, dict):
            if "type" in v:
                out.append(v)
            else:  # a dict argument: its values
                _records(list(v.values()), out)
    return out


def _errors(phase: str, ra: dict, rb: dict) -> tuple[float | None, float | None, bool | None]:
    oa, ia = _parts(phase, ra)
    ob, ib = _parts(phase, rb)
    err, err_in = metrics.list_error(oa, ob), metrics.list_error(ia, ib)
    if err is None and phase == "backward":  # no input needs a gradient: judge the output grads
        return err_in, None, metrics.list_mean_within(ia, ib)
    return err, err_in, metrics.list_mean_within(oa, ob)


class _Floor:
    """Per-identity floor: sum over the two sides of (floor run vs float64 reference) error."""

    def __init__(self, ref: StepDump | None, runs: list[StepDump | None], rename):
        self.ref = ref
        self.runs = runs
        self.ref_ids = identities(ref) if ref else {}
        self.run_ids = [identities(r) if r else None for r in runs]

    def of(self, ident, phase: str) -> tuple[float | None, float | None]:
        if self.ref is None or ident not in self.ref_ids:
            return None, None
        rr = self.ref.data[self.ref_ids[ident]]
        out, inn = 0.0, 0.0
        for run, ids in zip(self.runs, self.run_ids):
            if run is None or ident not in ids:
                return None, None
            e, ei, _ = _errors(phase, rr, run.data[ids[ident]])
            if e is None:
                return None, None
            out += e
            inn += ei or 0.0
        return out, inn


def _floor_run_for(side: StepDump, meta: dict, other: tuple[StepDump, dict],
                   floors: list[tuple[StepDump, dict]]):
    """The CPU run showing this side's dtype error: itself (CPU, no planted fault), the other
    side when it is such a run in the same dtype, or a --floor dump."""
    want = meta.get("compute_dtype")

    def clean(m):
        return m and m.get("device", "cpu") == "cpu" and not m.get("fault") and not m.get("reference")
    if clean(meta):
        return side, "itself"
    if clean(other[1]) and other[1].get("compute_dtype") == want:
        return other[0], "the other side (same dtype, CPU)"
    for d, m in floors:
        if m.get("compute_dtype") == want and m.get("device", "cpu") == "cpu" and not m.get("fault"):
            return d, f"--floor {m.get('_path')}"
    return None, None


def compare_dumps(a: str | Path, b: str | Path, reference: str | None = None,
                  floors: tuple[str, ...] = (), mapping: str | None = None,
                  step: int | None = None) -> AlignReport:
    """Compare step `step` (default: the first) of two dumps; see the module docstring."""
    a, b = Path(a), Path(b)
    da, db = layout.read_step(a, step), layout.read_step(b, step)
    ma, mb = layout.read_meta(a), layout.read_meta(b)
    rename = load_mapping(mapping)
    notes: list[str] = []
    ref = None
    if reference:
        ref = layout.read_step(Path(reference), step)
        mr = layout.read_meta(Path(reference))
        if mr and mr.get("reference") != "fp64" and mr.get("dtype") != "float64":
            raise OpscanError(f"{reference}: not a float64 reference dump",
                              hint="make it with `opscan align dump MODEL --reference fp64 --inputs A`")
    floor_dumps = []
    for f in floors:
        m = layout.read_meta(Path(f))
        m["_path"] = str(f)
        floor_dumps.append((layout.read_step(Path(f), step), m))
    fa, srca = _floor_run_for(da, ma, (db, mb), floor_dumps)
    fb, srcb = _floor_run_for(db, mb, (da, ma), floor_dumps)
    floor = _Floor(ref, [fa, fb], rename) if ref is not None and fa is not None and fb is not None else None
    if ref is None:
        floor_source = "no float64 reference: floor = the dtype's unit roundoff"
        notes.append("pass --reference DUMP (made with --reference fp64) for per-module noise floors")
    elif floor is None:
        floor_source = "float64 reference given but no CPU run in each side's dtype: floor = unit roundoff"
        notes.append("pass --floor DUMP: a CPU run in the device side's dtype, to get per-module floors")
    else:
        floor_source = f"float64 reference {reference}; side A floor from {srca}, side B from {srcb}"

    ids_a = identities(da)
    ids_b = identities(db, rename)
    dtype_a = ma.get("compute_dtype")
    dtype_b = mb.get("compute_dtype")
    rows: list[CallRow] = []
    order = {k: i for i, k in enumerate(da.data)}
    for ident, ka in sorted(ids_a.items(), key=lambda kv: order[kv[1]]):
        ra = da.data[ka]
        phase = _phase(ka)
        kind = "module" if is_module_key(ka) else "op"
        name = _module_path(ka) if kind == "module" else _op_name(ka)
        row = CallRow(key=ka, kind=kind, phase=phase, parent=da.construct.get(ka), order=order[ka], name=name)
        outs_a, _ = _parts(phase, ra)
        row.dtype_a = metrics.dtype_of(outs_a)
        if outs_a and isinstance(outs_a[0], dict):
            row.norm_a = _num(outs_a[0].get("Norm"))
            row.mean_a = _num(outs_a[0].get("Mean"))
        kb = ids_b.get(ident)
        if kb is None:
            row.status = "missing-in-b"
            rows.append(row)
            continue
        rb = db.data[kb]
        outs_b, _ = _parts(phase, rb)
        row.dtype_b = metrics.dtype_of(outs_b)
        if outs_b and isinstance(outs_b[0], dict):
            row.norm_b = _num(outs_b[0].get("Norm"))
            row.mean_b = _num(outs_b[0].get("Mean"))
        row.err, row.err_in, row.mean_ok = _errors(phase, ra, rb)
        dt = _lowest(dtype_a or row.dtype_a, dtype_b or row.dtype_b)
        k, eps = metrics.K.get(dt, 2.0), metrics.EPS.get(dt, metrics.EPS["float32"])
        if floor is not None:
            row.floor, row.floor_in = floor.of(ident, phase)
        # a floor run that differs structurally (inf) sets no floor: the unit roundoff does
        row.threshold = k * max(_finite(row.floor), eps)
        row.threshold_in = k * max(_finite(row.floor_in), eps)
        if row.err is None:
            row.status = "not-compared"
        else:  # an infinite error (shape or NaN/Inf counts differ) never passes
            row.status = "fail" if row.err > row.threshold or math.isinf(row.err) else "pass"
        rows.append(row)
    extra = set(ids_b) - set(ids_a)
    extra_mod = sum(1 for i in extra if isinstance(i, str))
    if extra_mod:
        notes.append(f"{extra_mod} module call(s) of B have no match in A (renamed modules? pass --map FILE)")
    if len(extra) - extra_mod:
        notes.append(f"{len(extra) - extra_mod} op call(s) run only in B (casts autocast inserts, "
                     "decompositions): not compared")
    if not any(r.status in ("pass", "fail") for r in rows):
        # nothing compared is not "no divergence": say so instead of passing
        raise OpscanError(
            f"{a} and {b}: no call compared ({len(ids_a)} call(s) in A, {len(ids_b)} in B, "
            f"{sum(1 for r in rows if r.status != 'missing-in-b')} matched, none with statistics "
            "on both sides)" if rows and any(r.status != "missing-in-b" for r in rows) else
            f"{a} and {b}: no call compared ({len(ids_a)} call(s) in A, {len(ids_b)} in B, none "
            "matched)",
            hint="dump both sides from the same model at the same --level, or pass --map FILE "
                 "for renamed modules")
    rep = AlignReport(a=str(a), b=str(b), meta_a=ma, meta_b=mb, step=da.step, rows=rows,
                      floor_source=floor_source, notes=notes)
    _localize(rep)
    rep.losses_a, rep.losses_b = list(ma.get("losses") or []), list(mb.get("losses") or [])
    rep.loss = metrics.loss_errors(rep.losses_a, rep.losses_b)
    return rep


def _num(v):
    from analyzer.align.stats import as_float
    x = as_float(v)
    return x if math.isfinite(x) else None


def _lowest(*dtypes) -> str:
    order = ["bfloat16", "float16", "float32", "float64"]
    ds = [metrics.short_dtype(d) for d in dtypes if d]
    ds = [d for d in ds if d in order]
    return min(ds, key=order.index) if ds else "float32"


# ---------------------------------------------------------------- where they part ways

def _localize(rep: AlignReport) -> None:
    by_key = {r.key: r for r in rep.rows}
    for phase in ("forward", "backward", "parameters_grad"):
        mods = [r for r in rep.rows if r.kind == "module" and r.phase == phase]
        first = next((r for r in mods if r.failed), None)
        if first is None:
            continue
        origin = first
        # inputs already wrong: the divergence began earlier, in an ancestor's own ops
        while not origin.inputs_ok:
            parent = by_key.get(origin.parent) if origin.parent else None
            if parent is None:
                origin = None
                break
            origin = parent
        if origin is None or origin.key != first.key:
            # prefer a failing module with passing inputs anywhere (innermost in completion order)
            cand = next((r for r in mods if r.failed and r.inputs_ok), None)
            if cand is not None:
                origin = cand
        rep.origin = origin
        rep.descent = [f"first failing {phase} call: {first.key}"]
        if origin is None:
            rep.descent.append("its inputs already differ and no enclosing module call has passing "
                               "inputs: the divergence starts in the model's top-level code")
        elif origin.key != first.key:
            rep.descent.append(f"its inputs already differ: the divergence starts in {origin.key}")
        if origin is not None:
            kids = [r for r in rep.rows if r.parent == origin.key and r.kind == "module"]
            bad_kids = [r for r in kids if r.failed and r.inputs_ok]
            if kids and not bad_kids:
                rep.descent.append(f"{origin.key}: the module fails, none of its {len(kids)} child "
                                   "call(s) fails on passing inputs -> the cause is among its own ops")
        parent_key = origin.key if origin is not None else None
        ops = [r for r in rep.rows if r.kind == "op" and r.parent == parent_key and r.phase == "forward"]
        if phase == "forward" and ops:
            bad = [r for r in ops if r.failed]
            if bad:
                rep.op = bad[0]
                rep.descent.append(f"first failing op of its own: {bad[0].key} ({bad[0].name}, "
                                   f"error {_fmt(bad[0].err)} > {_fmt(bad[0].threshold)})")
            else:
                rep.descent.append("none of its own ops fails: the difference is below op resolution")
        elif origin is not None and phase == "forward":
            path = origin.name
            rep.next_steps.append(
                f"op level inside {origin.key}: dump both sides again with "
                f"--level op --scope {path} (the same --inputs)")
        if rep.origin is None:
            rep.origin = first
        return

