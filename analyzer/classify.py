"""Classify ops against opdb for one target release: is it covered, and if not, what now?

`classify_op()` answers for one op and dtype set (it is what `opscan classify` calls);
`classify_trace()` groups a trace's calls by (op, dtypes) and classifies each group,
adding call counts, module paths and source lines. Order of the rules:

1. not-a-kernel   views, metadata, markers (never a gap)
2. signature-drift  (paddle) the adapter's kernel signature differs from the installed
                  Paddle's (the adam/amsgrad case): the adapter would be fed wrong args
3. dtype-gap      an adapter exists but not for a traced dtype (suggest a cast)
4. supported      an adapter exists and covers the dtypes
5. cann-available no adapter, an aclnn API matches (with evidence and an opgen command)
6. decomposable   no adapter nor API, but the op decomposes into supported ops
7. needs-ascendc  nothing matches
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analyzer.model import SETUP, AclnnCandidate, OpVerdict, Trace
from analyzer.not_a_kernel import is_not_a_kernel
from opdb.dtypes import CAST_PREFERENCE, normalize_dtype
from opdb.model import Adapter, FrameworkOp
from opdb.names import op_display
from opdb.query import OpDB, Target
from opdb.soc import resolve_soc, supports

MIN_CANDIDATE_CONFIDENCE = 0.35
# op-plugin skip-list tests that speak of numerical results (others are about views,
# conjugation or eager/JIT consistency and say nothing about running the op).
PRECISION_TESTS = ("test_compare_cpu", "test_backward")
TOP = 5  # modules / source lines kept per verdict


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


def opdb_op_name(framework: str, name: str) -> str:
    """A traced name in opdb's spelling: `aten.add.Tensor` / `aten::add.default` ->
    `aten::add.Tensor` / `aten::add`; paddle kernel names unchanged."""
    if framework != "torch":
        return name
    if "::" not in name and name.count(".") >= 1 and name.split(".", 1)[0] in ("aten", "prims", "npu"):
        ns, rest = name.split(".", 1)
        name = f"{ns}::{rest}"
    if "::" not in name:
        name = f"aten::{name}"
    ns, rest = name.split("::", 1)
    base, _, overload = rest.partition(".")
    return op_display(ns, base, overload)


# ---------------------------------------------------------------- adapter dtypes

def _api_dtypes(db: OpDB, api_name: str) -> set[str] | None:
    """Dtypes of the API's first tensor input, None when the docs give none."""
    api = db.aclnn_api(api_name)
    if api is None:
        return None
    for p in api.params:
        if "Tensor" in p.ctype and p.role in ("input", "inout"):
            return set(p.dtypes) or None
    return None


def adapter_dtypes(db: OpDB, adapters: list[Adapter]) -> tuple[set[str] | None, str]:
    """Dtypes the adapters cover, and where that came from; None = unknown."""
    registered = [a for a in adapters if a.dtypes is not None]
    if registered:
        out: set[str] = set()
        for a in registered:
            out |= set(a.dtypes)
        return out, "registered dtypes of " + ", ".join(sorted({f"{a.target} {a.function or a.op}" for a in registered}))
    apis = sorted({n for a in adapters for n in a.aclnn})
    if not apis or any(a.legacy_ops for a in adapters):
        # a legacy CANN op path may cover dtypes the aclnn docs do not list
        return None, "dtype coverage not recorded (legacy CANN op path or no aclnn API)"
    out = set()
    for n in apis:
        d = _api_dtypes(db, n)
        if d is None:
            return None, f"dtype coverage unknown ({n} docs list none)"
        out |= d
    return out, "dtypes of the aclnn APIs it calls: " + ", ".join(apis)


def _cast_for(dtype: str, covered: set[str]) -> str:
    for cand in CAST_PREFERENCE.get(dtype, ()):
        if cand in covered:
            return cand
    return ""


# ---------------------------------------------------------------- the rules

def classify_op(ctx: ClassifyContext, op: str, dtypes: tuple[str, ...] = (),
                key_dtypes: tuple[str, ...] | None = None) -> OpVerdict:
    """Classify one op (opdb spelling or traced spelling) for one dtype set.

    key_dtypes: the dtypes kernels are selected by (see `kernel_key_dtype`; index and
    length tensors do not pick the kernel); default: all of `dtypes`."""
    db, fw = ctx.db, ctx.framework
    op = opdb_op_name(fw, op)
    dtypes = tuple(sorted({normalize_dtype(d) for d in dtypes}))
    key = tuple(sorted({normalize_dtype(d) for d in key_dtypes})) if key_dtypes is not None else dtypes
    fop = db.framework_op(fw, op)
    v = OpVerdict(op=op, category="", dtypes=dtypes)
    if fop is not None and fop.aliases:
        v.aliases = list(fop.aliases)

    reason = is_not_a_kernel(fw, op, fop.schema if fop else "")
    if reason:
        v.category = "not-a-kernel"
        v.evidence.append(reason)
        return v

    adapters = [a for a in db.adapters(fw, op, ctx.target)]
    stubs = [a for a in adapters if any("stub_unimplemented" in n for n in a.notes)]
    usable = [a for a in adapters if a not in stubs]
    for a in stubs:
        v.evidence.append(f"{a.target} {a.function} is a stub that throws Unimplemented ({a.source.where()})")
    if usable:
        _classify_adapted(ctx, v, usable, fop, key)
    else:
        _classify_missing(ctx, v, fop)
    return v


def _classify_adapted(ctx: ClassifyContext, v: OpVerdict, adapters: list[Adapter],
                      fop: FrameworkOp | None, key: tuple[str, ...]) -> None:
    db, fw = ctx.db, ctx.framework
    main = adapters[0]
    v.adapter = f"{main.target} {main.function or main.op}".strip()
    for a in adapters:
        v.evidence.append(f"adapter {a.target} {a.function or a.op} ({a.source.where()})")
    if fw == "torch":
        kf = db.known_failures(fw, v.op.split("::")[-1].split(".")[0])
        for k in kf:
            if k.test not in PRECISION_TESTS:
                continue
            bad = sorted(set(k.dtypes) & set(v.dtypes))
            if bad:
                v.known_failures.append(f"{k.test}: {', '.join(bad)} ({k.source.where()})")

    if fw == "paddle" and fop is not None and fop.params:
        from opdb.show import signature_drift

        for a in adapters:
            if a.signature:
                diff, _, details = signature_drift(a, fop)
                if diff:
                    v.category = "signature-drift"
                    v.drift = list(details)
                    names = sorted({v.op, *v.aliases} | ({a.op} if a.op else set()))
                    v.action = (f"the {a.target} kernel {a.function} does not match the installed "
                                f"Paddle {fop.function or v.op} signature (differs: {', '.join(diff)}): "
                                f"update the adapter, or run it on CPU with "
                                f'export CUSTOM_DEVICE_BLACK_LIST="{",".join(names)}"')
                    return

    covered, how = adapter_dtypes(db, adapters)
    v.evidence.append(how)
    if covered is not None and key:
        missing = [d for d in key if d not in covered]
        if missing:
            v.category = "dtype-gap"
            v.missing_dtypes = missing
            casts = {d: _cast_for(d, covered) for d in missing}
            v.cast_to = ",".join(c for c in casts.values() if c)
            parts = [f"cast {d} -> {c}" if c else f"no cast target for {d}" for d, c in casts.items()]
            v.action = (f"{'; '.join(parts)} around {v.op} (adapter covers {', '.join(sorted(covered))}), "
                        f"or extend the adapter's registration if its aclnn API supports {', '.join(missing)}")
            return
    v.category = "supported"
    if v.known_failures:
        v.action = "supported, but op-plugin's tests skip these dtypes on NPU: check precision (1e-4 mean abs error vs CPU)"


def _candidates(ctx: ClassifyContext, op: str) -> list[AclnnCandidate]:
    db = ctx.db
    best: dict[str, AclnnCandidate] = {}
    for m in db.mappings(ctx.framework, op):
        if m.confidence < MIN_CANDIDATE_CONFIDENCE:
            continue
        api = db.aclnn_api(m.aclnn)
        if api is None:
            continue
        c = best.get(api.name)
        if c is None or m.confidence > c.confidence:
            best[api.name] = AclnnCandidate(
                api=api.name, signature=api.workspace_signature(), evidence=m.evidence,
                confidence=m.confidence, detail=m.detail or m.source.where(),
                supported_on_soc=supports(api.products, ctx.soc),
                opgen_command=f"opgen aclnn {api.name} --target {ctx.framework} --op {op}")
    return sorted(best.values(), key=lambda c: (c.supported_on_soc is False, -c.confidence, c.api))


def _classify_missing(ctx: ClassifyContext, v: OpVerdict, fop: FrameworkOp | None) -> None:
    v.evidence.append(f"no adapter in {ctx.target}")
    first = ctx.db.first_release(ctx.framework, v.op)
    if first is not None:
        v.evidence.append(f"adapted in {first}")
    cands = _candidates(ctx, v.op)
    usable = [c for c in cands if c.supported_on_soc is not False]
    if usable:
        v.category = "cann-available"
        v.candidates = cands[:3]
        c = usable[0]
        v.action = f"write the adapter on {c.api}: {c.opgen_command}"
        if first is not None:
            v.action += f" (or move to {first}, which adapts it)"
        return
    for c in cands:
        v.evidence.append(f"{c.api} exists but its docs do not list {ctx.soc}")
    v.candidates = cands[:3]
    into = decomposition_of(ctx, v.op, fop)
    if into:
        unsupported = [o for o in into if not ctx.db.adapters(ctx.framework, o, ctx.target)
                       and not is_not_a_kernel(ctx.framework, o)]
        if not unsupported:
            v.category = "decomposable"
            v.decomposes_into = into
            v.action = ("register the decomposition for the NPU (runs as " + ", ".join(into) + ")")
            return
        v.evidence.append("decomposes into " + ", ".join(into) + "; not adapted: " + ", ".join(unsupported))
    v.category = "needs-ascendc"
    v.action = "write an AscendC kernel (or accept the CPU fallback; see the fallback cost)"
    if first is not None:
        v.action = f"move to {first}, which adapts it, or write an AscendC kernel"


def decomposition_of(ctx: ClassifyContext, op: str, fop: FrameworkOp | None) -> list[str]:
    """The ops `op` decomposes into (torch: its torch._decomp entry run on meta tensors)."""
    if fop is None or not (fop.has_decomposition or fop.composite_implicit):
        return []
    if ctx.framework == "torch":
        from analyzer.decompose import torch_decomposition

        return torch_decomposition(op)
    return []


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


def classify_trace(ctx: ClassifyContext, trace: Trace) -> list[OpVerdict]:
    """One verdict per unique (op, dtypes) of the trace, in a stable order."""
    verdicts = []
    cache: dict[tuple[str, tuple[str, ...]], OpVerdict] = {}
    for (op, dtypes), calls in trace.unique_ops().items():
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
    order = {c: i for i, c in enumerate(
        ("signature-drift", "needs-ascendc", "cann-available", "dtype-gap", "decomposable",
         "supported", "not-a-kernel"))}
    return sorted(verdicts, key=lambda v: (order[v.category], v.op, v.dtypes))
