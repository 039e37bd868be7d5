"""Classify ops against opdb for one target release: is it covered, and if not, what now?

`classify_op()` answers for one op and dtype set (it is what `opscan classify` calls);
`classify_trace()` groups a trace's calls by (op, dtypes) and classifies each group.
Every fact comes from the op's one `OpFacts` record (opdb.facts), the same record
`opdb show` prints. Order of the rules (first match wins):

1. not-a-kernel   views, metadata, markers; CPU-/CUDA-library kernels the NPU never
                  dispatches (oneDNN `mkldnn_*`, `*_for_cpu`, cuDNN) and other devices' own
                  kernels (MPS, XPU): names the parent op. A view-shaped schema whose
                  device-agnostic kernel turns into a copy (`to.dtype` -> `_to_copy`) is
                  not a view: the rules below classify what it becomes
2. signature-drift  (paddle) the adapter's kernel signature differs from the installed
                  Paddle's (the adam/amsgrad case): the adapter would be fed wrong args
3. dtype-gap      an adapter exists; its dtypes are known and miss a traced dtype
4. unverified     an adapter exists but its coverage cannot be established (no
                  registration, no documented dtypes of its primary APIs, casts, a dtype
                  registered under a CANN-version condition, a branch that throws
                  Unimplemented): the reason is given; never counted as supported
5. supported      an adapter exists and covers the dtypes; or the op has a device-
                  agnostic kernel (CompositeImplicitAutograd, CompositeExplicitAutograd)
                  and the dispatcher turns it into adapted ops (says what it becomes; a
                  part that is not adapted gives the op that part's verdict); or its
                  structured delegate `.out` is adapted; a documented dtype gap of the
                  adapted part or delegate that computes it, for the dtypes it receives, is
                  the op's (`selu` float64 -> `elu` float64). A CompositeExplicitAutograd `.out`
                  wrapper carries its functional's verdict for the dtypes (a dtype gap or a
                  missing adapter of the functional is the wrapper's)
6. cann-available no adapter; an aclnn API implements it (primary mapping of the op, a
                  related op or the other framework's equivalent op) on the SoC
7. decomposable   no adapter nor API, but a registered decomposition (torch._decomp,
                  torch._inductor) runs it as supported ops: nobody wired it yet
8. needs-ascendc  nothing matches
Names no catalog knows are an error (`UnknownOp`), never a verdict.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analyzer.model import SETUP, AclnnCandidate, OpVerdict, Trace
from analyzer.not_a_kernel import is_not_a_kernel
from opdb.dtypes import CAST_PREFERENCE, normalize_dtype
from opdb.facts import PRECISION_TESTS, OpFacts, op_facts
from opdb.names import normalize_op_name
from opdb.query import OpDB, Target
from opdb.soc import resolve_soc

TOP = 5  # modules / source lines kept per verdict


def opdb_op_name(framework: str, name: str) -> str:
    """Kept for callers: the one normalization is opdb.names.normalize_op_name."""
    return normalize_op_name(framework, name)


@dataclass(frozen=True)
class ClassifyContext:
    db: OpDB
    framework: str
    target: Target
    soc: str

    @classmethod
    def create(cls, db: OpDB, framework: str, target: str | Target | None = None,
               soc: str | None = None) -> "ClassifyContext":
        t = target if isinstance(target, Target) else db.parse_target(framework, target)
        return cls(db, framework, t, resolve_soc(soc).id)

    def facts(self, op: str) -> OpFacts:
        return op_facts(self.db, self.framework, op, str(self.target), self.soc)


def _cast_for(dtype: str, covered) -> str:
    for cand in CAST_PREFERENCE.get(dtype, ()):
        if cand in covered:
            return cand
    return ""


def check_op_name(ctx: ClassifyContext, op: str) -> None:
    """Raise NotFound (exit 2, closest matches) when no catalog knows `op`."""
    f = ctx.facts(op)
    if not f.known and not is_not_a_kernel(ctx.framework, f.name):
        from opdb.show import unknown_op

        raise unknown_op(ctx.db, op, ctx.framework)


# ---------------------------------------------------------------- the rules

def classify_op(ctx: ClassifyContext, op: str, dtypes: tuple[str, ...] = (),
                key_dtypes: tuple[str, ...] | None = None, _depth: int = 0) -> OpVerdict:
    """Classify one op (opdb spelling or traced spelling) for one dtype set.

    key_dtypes: the dtypes kernels are selected by (see `kernel_key_dtype`; index and
    length tensors do not pick the kernel); default: all of `dtypes`."""
    f = ctx.facts(op)
    dtypes = tuple(sorted({normalize_dtype(d) for d in dtypes}))
    key = tuple(sorted({normalize_dtype(d) for d in key_dtypes})) if key_dtypes is not None else dtypes
    v = OpVerdict(op=f.name, category="", dtypes=dtypes)
    v.aliases = list(f.aliases)

    reason = _no_kernel_reason(ctx, f)
    d = f.dispatch
    if not reason and d is not None and d.foreign_library and not f.adapters:
        reason = (f"{d.foreign_library}-library kernel ({', '.join(d.declared) or 'no device kernel'} "
                  f"only); the NPU runs {d.parent or 'the op that calls it'} instead")
    if reason:
        v.category = "not-a-kernel"
        v.evidence.append(reason)
        return v
    for a in f.stubs:
        v.evidence.append(f"{a.target} {a.function} is registered but throws Unimplemented "
                          f"(PADDLE_THROW body, {a.source.where()}): not supported")
    if f.adapters:
        _classify_adapted(ctx, v, f, key)
    else:
        _classify_missing(ctx, v, f, _depth)
    return v


def _classify_adapted(ctx: ClassifyContext, v: OpVerdict, f: OpFacts, key: tuple[str, ...]) -> None:
    main = f.adapters[0]
    v.adapter = f"{main.target} {main.function or main.op}".strip()
    for a in f.adapters:
        v.evidence.append(f"adapter {a.target} {a.function or a.op} ({a.source.where()})")
    for k in f.known_failures:
        if k.test in PRECISION_TESTS:
            bad = sorted(set(k.dtypes) & set(v.dtypes))
            if bad:
                v.known_failures.append(f"{k.test}: {', '.join(bad)} ({k.source.where()})")
    for dr in f.drift:
        if dr.differing:
            v.category = "signature-drift"
            v.drift = list(dr.details)
            v.action = (f"the {dr.adapter} kernel {dr.adapter_function} does not match the installed "
                        f"Paddle {dr.framework_function or v.op} signature (differs: "
                        f"{', '.join(dr.differing)}): update the adapter, or run it on the CPU through "
                        f"CUSTOM_DEVICE_BLACK_LIST (see `opscan blacklist` and the "
                        f"report's blacklist section)")
            return
    cov = f.dtypes
    if cov.dtypes is None:
        v.evidence.append(cov.reason)
        if key:
            v.category = "unverified"
            v.action = (f"{cov.reason}; check {', '.join(key)} on the NPU "
                        f"(single op vs CPU within 1e-4 mean abs error)")
            return
        v.category = "supported"
        return
    v.evidence.append(cov.how)
    missing = [d for d in key if d not in cov.dtypes]
    if missing and cov.casts:
        v.category = "unverified"
        v.action = (f"dtype coverage unverified: {', '.join(missing)} is outside the documented "
                    f"{', '.join(cov.dtypes)} but the adapter casts some inputs; check on the NPU")
        return
    if missing:
        v.category = "dtype-gap"
        v.missing_dtypes = missing
        casts = {d: _cast_for(d, cov.dtypes) for d in missing}
        v.cast_to = ",".join(c for c in casts.values() if c)
        parts = [f"cast {d} -> {c}" if c else f"no cast target for {d}" for d, c in casts.items()]
        v.action = (f"{'; '.join(parts)} around {v.op} (adapter covers {', '.join(cov.dtypes)}), "
                    f"or extend the adapter if a newer aclnn API supports {', '.join(missing)}")
        return
    caveats = []
    for a in f.adapters:
        for n in a.notes:
            if n.startswith("has_unimplemented_branch"):
                # only some attribute values throw, and the trace does not record attribute
                # values: a caveat on a supported op, not a verdict of its own
                v.evidence.append(f"caveat: a branch of {a.target} {a.function} throws "
                                  f"Unimplemented ({a.source.where()}): some attribute values "
                                  "are not supported")
            elif n.startswith("dtype_condition: "):
                dt, _, cond = n[len("dtype_condition: "):].partition(" if ")
                if dt in key:
                    caveats.append(f"{a.target} registers {dt} only if {cond} ({a.source.where()})")
    if caveats:
        v.category = "unverified"
        v.evidence += caveats
        v.action = "coverage unverified: " + "; ".join(caveats) + "; check on the NPU"
        return
    v.category = "supported"
    if v.known_failures:
        v.action = "supported, but op-plugin's tests skip these dtypes on NPU: check precision (1e-4 mean abs error vs CPU)"


def _candidates(ctx: ClassifyContext, f: OpFacts, op: str) -> list[AclnnCandidate]:
    return [AclnnCandidate(
        api=c.api.name, signature=c.api.workspace_signature(), evidence=c.evidence,
        confidence=c.confidence, detail=c.detail, supported_on_soc=c.soc_support,
        opgen_command=f"opgen aclnn {c.api.name} --target {ctx.framework} --op {op}")
        for c in f.candidates]


def _functional_of(op: str) -> str:
    """`aten::x.out` / `aten::x.Scalar_out` -> `aten::x` / `aten::x.Scalar`; "" otherwise."""
    head, _, overload = op.partition(".")
    if overload == "out":
        return head
    if overload.endswith("_out"):
        return f"{head}.{overload[:-4]}"
    return ""


def _no_kernel_reason(ctx: ClassifyContext, f: OpFacts) -> str:
    """Why `f`'s op needs no device kernel, or "". A view-shaped schema (`Tensor(a)`
    returned) with a device-agnostic kernel that turns into a computing op is an alias
    only sometimes: `to.dtype` returns `self` for the same dtype and `_to_copy` otherwise."""
    reason = is_not_a_kernel(ctx.framework, f.name, f.op.schema if f.op else "")
    d = f.dispatch
    if reason.startswith("view") and d is not None and d.device_agnostic_key and f.becomes:
        for o in f.becomes:
            g = ctx.facts(o)
            if not is_not_a_kernel(ctx.framework, g.name, g.op.schema if g.op else ""):
                return ""
    return reason


def _adapted_or_free(ctx: ClassifyContext, op: str, depth: int = 0) -> bool:
    """The NPU runs `op` without a gap: adapted, no kernel needed, or a device-agnostic
    kernel whose parts are (recursively, three levels); a structured op through its `.out`
    delegate only (its generated wrapper calls nothing else; a registered decomposition
    is not run by the dispatcher)."""
    g = ctx.facts(op)
    if g.adapters or _no_kernel_reason(ctx, g):
        return True
    d = g.dispatch
    if d is not None and d.structured_delegate and d.device_agnostic_key != "CompositeImplicitAutograd":
        return depth < 3 and _adapted_or_free(ctx, d.structured_delegate, depth + 1)
    if depth < 3 and d is not None and d.device_agnostic_key and g.becomes is not None:
        return all(_adapted_or_free(ctx, o, depth + 1) for o in g.becomes)
    return False


def _classify_missing(ctx: ClassifyContext, v: OpVerdict, f: OpFacts, depth: int) -> None:
    v.evidence.append(f"no adapter in {ctx.target}")
    if f.adapted_elsewhere:
        v.evidence.append("adapted in " + ", ".join(f.adapted_elsewhere))
    first = f.first_release
    d = f.dispatch
    if d is not None:
        v.evidence.append(d.describe())
    key = d.device_agnostic_key if d is not None else ""
    if key and d.structured_delegate and key != "CompositeImplicitAutograd":
        key = ""  # a structured op's functional wrapper only calls its `.out` kernel: rule below
    functional = _functional_of(v.op)
    if (key and functional and depth < 2 and ctx.facts(functional).known
            and (f.becomes is None or _adapted_or_free(ctx, functional))):
        # the wrapper calls the functional and copies into out: when the functional runs on
        # the NPU, or what the wrapper becomes is unknown, the functional's verdict for these
        # dtypes is the wrapper's (its dtype gap or missing adapter included)
        w = classify_op(ctx, functional, v.dtypes, _depth=depth + 1)
        if w.category == "supported":
            v.category = "supported"
            v.action = (f"nothing to do: {key} `.out` wrapper of {functional}, which runs on the "
                        f"NPU in {ctx.target} (the wrapper calls it and copies into out)")
            return
        if w.category != "not-a-kernel":
            v.category = w.category
            v.missing_dtypes, v.cast_to, v.candidates = w.missing_dtypes, w.cast_to, w.candidates
            v.action = (f"{key} `.out` wrapper of {functional} (calls it and copies into out); "
                        f"the gap is in {functional} ({w.category}): {w.action}")
            return
    if key:
        if f.becomes is not None:
            v.decomposes_into = list(f.becomes)
            missing = [o for o in f.becomes if not _adapted_or_free(ctx, o)]
            gap = None if missing else _part_gap(ctx, v.op, v.dtypes, depth)
            if gap is not None:
                _take_gap(v, gap, f"{key}: the dispatcher runs it as {', '.join(f.becomes)}")
                return
            if not missing:
                v.category = "supported"
                v.action = (f"nothing to do: {key}, the dispatcher runs it as "
                            + (", ".join(f.becomes) or "no device kernel")
                            + f", adapted in {ctx.target}")
                return
            if depth < 2:
                parts = [classify_op(ctx, o, v.dtypes, _depth=depth + 1) for o in missing]
                worst = sorted(parts, key=lambda p: _SEVERITY.index(p.category))[0]
                v.category = worst.category
                v.action = (f"{key}: the dispatcher runs it as {', '.join(f.becomes)}; "
                            f"the gap is in {worst.op} ({worst.category}): {worst.action}")
                v.candidates = worst.candidates
                return
        v.category = "unverified"
        v.action = (f"{key}: the NPU runs this device-agnostic kernel without an adapter, but what "
                    "it becomes could not be run on synthesized inputs; scan a model using it")
        return
    if d is not None and d.structured_delegate:
        if _adapted_or_free(ctx, d.structured_delegate):
            gap = classify_op(ctx, d.structured_delegate, v.dtypes, _depth=depth + 1) if depth < 2 else None
            if gap is not None and gap.category == "dtype-gap":
                _take_gap(v, gap, f"its structured delegate {d.structured_delegate} computes it")
                return
            v.category = "supported"
            v.action = f"nothing to do: its structured delegate {d.structured_delegate} is adapted in {ctx.target}"
            return
        v.evidence.append(f"its structured delegate {d.structured_delegate} is not adapted either")
    cands = _candidates(ctx, f, v.op)
    usable = [c for c in cands if c.supported_on_soc is not False]
    if usable:
        v.category = "cann-available"
        v.candidates = cands[:3]
        c = usable[0]
        v.action = f"write the adapter on {c.api}: {c.opgen_command}"
        if first:
            v.action += f" (or move to {first}, which adapts it)"
        return
    for c in cands:
        v.evidence.append(f"{c.api} exists but its docs do not list {ctx.soc}")
    v.candidates = cands[:3]
    if f.becomes:
        missing = [o for o in f.becomes if not _adapted_or_free(ctx, o)]
        if not missing:
            v.category = "decomposable"
            v.decomposes_into = list(f.becomes)
            v.action = "register the decomposition for the NPU (runs as " + ", ".join(f.becomes) + ")"
            return
        v.evidence.append("decomposes into " + ", ".join(f.becomes) + "; not adapted: " + ", ".join(missing))
    v.category = "needs-ascendc"
    v.action = "write an AscendC kernel (or accept the CPU fallback; see the fallback cost)"
    if first:
        v.action = f"move to {first}, which adapts it, or write an AscendC kernel"


def _part_gap(ctx: ClassifyContext, op: str, dtypes: tuple[str, ...], depth: int) -> OpVerdict | None:
    """The first adapted part of `op`'s device-agnostic kernel (or decomposition) whose own
    verdict, for the dtypes that part receives when `op`'s data inputs are `dtypes`, is a
    dtype gap (`selu` float64 runs `elu` float64, which aclnnElu does not document); None
    when there is none or it cannot be run."""
    if ctx.framework != "torch" or depth >= 2 or not dtypes:
        return None
    from opdb import torch_dispatch

    for d in [x for x in dtypes if x in FLOATING] or list(dtypes[:1]):
        for part, part_dts in torch_dispatch.part_dtypes(op, d) or ():
            if not part_dts or not ctx.facts(part).adapters:
                continue
            key = tuple(x for x in part_dts if x in FLOATING) or part_dts
            w = classify_op(ctx, part, part_dts, key_dtypes=key, _depth=depth + 1)
            if w.category == "dtype-gap":
                return w
    return None


def _take_gap(v: OpVerdict, gap: OpVerdict, how: str) -> None:
    """`v` inherits the dtype gap of the adapted op that computes it."""
    v.category = "dtype-gap"
    v.missing_dtypes, v.cast_to = list(gap.missing_dtypes), gap.cast_to
    v.action = f"{how}; the gap is in {gap.op} (dtype-gap): {gap.action}"


_SEVERITY = ("needs-ascendc", "signature-drift", "cann-available", "dtype-gap", "decomposable",
             "unverified", "supported", "not-a-kernel")


# ---------------------------------------------------------------- whole traces

FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def kernel_key_dtype(call) -> str:
    """The dtype a kernel is selected by: the first floating-point input (labels,
    indices and lengths do not pick the kernel), else the first input or output."""
    metas = call.inputs or call.outputs
    for t in metas:
        if t.dtype in FLOATING:
            return t.dtype
    return metas[0].dtype if metas else ""


def classify_trace(ctx: ClassifyContext, trace: Trace, groups: dict | None = None) -> list[OpVerdict]:
    """One verdict per unique (op, dtypes) of the trace, in a stable order. `groups`:
    `trace.unique_ops()` when the caller has it already (analyzer.scan groups once)."""
    verdicts = []
    cache: dict[tuple[str, tuple[str, ...]], OpVerdict] = {}
    for (op, dtypes), calls in (trace.unique_ops() if groups is None else groups).items():
        name = opdb_op_name(ctx.framework, (calls[0].overload or op) if ctx.framework == "torch" else op)
        key_dtypes = tuple(sorted({k for k in (kernel_key_dtype(c) for c in calls) if k}))
        key = (name, dtypes)
        if key not in cache:
            cache[key] = classify_op(ctx, name, dtypes, key_dtypes)
        base = cache[key]
        v = OpVerdict(**{**base.__dict__})
        v.evidence, v.candidates = list(base.evidence), list(base.candidates)
        v.setup_calls = sum(1 for c in calls if c.phase == SETUP)
        v.calls = len(calls) - v.setup_calls
        v.phases = sorted({c.phase for c in calls})
        v.modules = [m for m, _ in Counter(c.module for c in calls if c.module).most_common(TOP)]
        v.sources = [s for s, _ in Counter(c.source for c in calls if c.source).most_common(TOP)]
        v.aliases = sorted(set(base.aliases) | {a for c in calls for a in c.aliases})
        verdicts.append(v)
    from analyzer.model import verdict_order

    return sorted(verdicts, key=verdict_order)
