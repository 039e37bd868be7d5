"""The one record of what opdb knows about an op: `OpFacts`, built in `op_facts()`.

    facts = op_facts(db, "torch", "aten::addmm", target="torch_npu==2.13.0", soc="ascend910b")

One record per (framework, op, target, soc): the op's catalog entry, the target's
adapters (stubs apart), every API each adapter calls with its role, the dtypes the
adapters cover and where that came from, signature drift (paddle), known per-dtype
failures (op-plugin's skip list), the installed torch's dispatch facts, what the op
becomes/decomposes into, related ops and aclnn candidates with evidence. `opdb show`,
`opscan classify`, the scan's classification and opgen's resolve read it, so they
cannot disagree. Op names are normalized once, by `opdb.names.normalize_op_name`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from opdb.drift import DriftReport, signature_drift
from opdb.model import AclnnApi, Adapter, FrameworkOp, KnownFailure, format_target
from opdb.names import normalize_op_name, split_op
from opdb.roles import PRIMARY, assign_roles, related
from opdb.soc import resolve_soc, supports

MIN_CANDIDATE_CONFIDENCE = 0.35
# op-plugin skip-list tests that speak of numerical results.
PRECISION_TESTS = ("test_compare_cpu", "test_backward")


@dataclass(frozen=True)
class AdapterCall:
    """One aclnn API an adapter calls, and its role there (opdb.roles)."""

    adapter: str  # `torch_npu==2.13.0 addmm`
    api: str
    role: str


@dataclass(frozen=True)
class DtypeCoverage:
    """Dtypes an op's adapters accept on the SoC; `dtypes=None`: unverified (`reason`)."""

    dtypes: tuple[str, ...] | None
    how: str
    reason: str = ""
    casts: bool = False  # the adapter casts some inputs (a dtype outside the list may be cast)


@dataclass(frozen=True)
class Candidate:
    """An aclnn API that could back the op, with the evidence and any semantic caveat."""

    api: AclnnApi
    evidence: str  # adapter | curated | cross-framework | name | related-op
    confidence: float
    detail: str
    soc_support: bool | None
    via: str = ""  # the related op whose primary mapping this is, when not the op itself


@dataclass(frozen=True)
class OpFacts:
    framework: str
    name: str  # normalized op name
    target: str
    soc: str
    known: bool  # in the framework catalog or adapted by some release
    op: FrameworkOp | None = None
    aliases: tuple[str, ...] = ()
    adapters: tuple[Adapter, ...] = ()  # usable adapters in the target
    stubs: tuple[Adapter, ...] = ()  # registered but throwing (PADDLE_THROW bodies)
    calls: tuple[AdapterCall, ...] = ()
    dtypes: DtypeCoverage | None = None
    drift: tuple[DriftReport, ...] = ()
    known_failures: tuple[KnownFailure, ...] = ()
    first_release: str = ""  # oldest release adapting it (any target)
    adapted_elsewhere: tuple[str, ...] = ()  # other releases adapting it
    dispatch: object | None = None  # opdb.torch_dispatch.DispatchFacts
    becomes: tuple[str, ...] | None = None  # what the dispatcher/decomposition turns it into
    candidates: tuple[Candidate, ...] = ()
    related_ops: tuple[tuple[str, str], ...] = ()  # (op, relation)

    @property
    def primary_apis(self) -> tuple[str, ...]:
        return tuple(sorted({c.api for c in self.calls if c.role == PRIMARY}))


def opinfo_name(op: str) -> str:
    """op-plugin's test skip list keys ops by OpInfo name (`add`, not `aten::add.Tensor`)."""
    return split_op(op)[1]


NO_TENSOR_INPUT = ()


def _api_input_dtypes(api: AclnnApi | None) -> tuple[str, ...] | None:
    """Dtypes of the API's data input: the input tensor with the longest documented
    dtype list (`aclnnSWhere`'s `self`, not its bool `condition`); `NO_TENSOR_INPUT`
    when it takes no input tensor (mask generators take a shape); None when unknown."""
    if api is None:
        return None
    inputs = [p for p in api.params if "Tensor" in p.ctype and p.role in ("input", "inout")]
    if not inputs:
        return NO_TENSOR_INPUT
    best = max(inputs, key=lambda p: len(p.dtypes))
    return tuple(best.dtypes) or None


def indirect_apis(adapter: Adapter) -> tuple[str, ...]:
    """APIs an op-plugin adapter reaches only through another op entry point (its
    `aclnn_indirect=` note, written by opdb.ingest.op_plugin)."""
    for n in adapter.notes:
        if n.startswith("aclnn_indirect="):
            return tuple(x for x in n[len("aclnn_indirect="):].split(",") if x)
    return ()


def adapter_calls(adapters) -> tuple[AdapterCall, ...]:
    """Every API each adapter calls (directly, or through another op) with its role."""
    out = []
    for a in adapters:
        via = indirect_apis(a)
        apis = tuple(a.aclnn) + tuple(x for x in via if x not in a.aclnn)
        computed = assign_roles(a.op, apis)
        roles = dict(zip(a.aclnn, a.roles)) if len(a.roles) == len(a.aclnn) else {}
        name = f"{a.target} {a.function or a.op}".strip()
        out += [AdapterCall(name, api, roles.get(api, computed[api])) for api in apis]
    return tuple(sorted(set(out), key=lambda c: (c.adapter, c.api)))


def dtype_coverage(db, adapters, calls, soc: str) -> DtypeCoverage:
    """Registration (paddle) else the primary APIs' documented dtypes on the SoC."""
    registered = [a for a in adapters if a.dtypes is not None]
    if registered:
        out = sorted({d for a in registered for d in a.dtypes})
        return DtypeCoverage(tuple(out), "registered dtypes of " + ", ".join(
            sorted({f"{a.target} {a.function or a.op} ({a.source.where()})" for a in registered})))
    primary = sorted({c.api for c in calls if c.role == PRIMARY})
    casts = any(c.role == "helper:cast" for c in calls)
    if not primary:
        native = any(any("torch_npu-native kernel" in n for n in a.notes) for a in adapters)
        why = ("its aclnn calls are a composition or helpers only" if calls else
               "no aclnn API recorded (legacy CANN op path)" if any(a.legacy_ops for a in adapters)
               else "a torch_npu core kernel (not in op-plugin), no aclnn API recorded" if native
               else "no aclnn API recorded")
        return DtypeCoverage(None, "", f"dtype coverage unverified: {why}", casts)
    covered: set[str] = set()
    used = []
    for name in primary:
        api = db.aclnn_api(name)
        if api is not None and supports(api.products, soc) is False:
            continue  # not on this chip: its dtypes do not count
        d = _api_input_dtypes(api)
        if d is NO_TENSOR_INPUT and len(primary) > 1:
            continue  # a mask generator next to the op's compute API says nothing of dtypes
        if d is None or d is NO_TENSOR_INPUT:
            return DtypeCoverage(None, "", f"dtype coverage unverified: the docs of {name} list no dtypes", casts)
        covered |= set(d)
        used.append(name)
    if not used:
        return DtypeCoverage(None, "", f"dtype coverage unverified: none of {', '.join(primary)} "
                             f"is documented for {soc}", casts)
    how = "dtypes of the primary aclnn APIs it calls: " + ", ".join(used)
    if casts:
        how += " (the adapter also casts with aclnnCast)"
    return DtypeCoverage(tuple(sorted(covered)), how, "", casts)


def related_ops(framework: str, op: str, known) -> list[tuple[str, str]]:
    """Ops related to `op` by naming convention, that `known(name)` says exist:
    in-place/out/functional siblings, `_ex` variants, `linalg_`/`_linalg_` forms,
    forward/backward pairs, paddle `x`/`x_grad`."""
    ns, base, overload = split_op(op)
    out: list[tuple[str, str]] = []

    def add(name: str, why: str) -> None:
        if name != op and known(name) and name not in [n for n, _ in out]:
            out.append((name, why))

    if framework == "torch":
        head = f"{ns}::" if ns else "aten::"
        forms = []
        b = base
        if b.endswith("_") and not b.endswith("__"):
            forms.append((b[:-1], "functional sibling"))
        else:
            forms.append((b + "_", "in-place sibling"))
        if b.endswith("_ex"):
            forms.append((b[:-3], "non-_ex variant"))
        else:
            forms.append((b + "_ex", "_ex variant"))
        for pre in ("linalg_", "_linalg_"):
            if b.startswith(pre):
                forms.append((b[len(pre):], "base op of the linalg form"))
            else:
                forms.append((pre + b, "linalg form"))
        if b.endswith("_backward"):
            forms.append((b[: -len("_backward")], "forward op"))
        else:
            forms.append((b + "_backward", "backward op"))
        if b.startswith("native_"):
            forms.append((b[len("native_"):], "non-native form"))
        else:
            forms.append(("native_" + b, "native form"))
        for name, why in forms:
            for ov in ([overload] if overload else []) + ["", "out", "Tensor", "default"]:
                full = head + name + (f".{ov}" if ov and ov != "default" else "")
                add(full, why)
        if overload:
            add(head + base, "other overload")
            add(head + base + ".out", "out overload")
    else:
        if base.endswith("_grad"):
            add(base[: -len("_grad")], "forward op")
        else:
            add(base + "_grad", "backward op")
        if base.endswith("_raw"):
            add(base[: -len("_raw")], "op of the legacy `_raw` kernel")
        else:
            add(base + "_raw", "legacy `_raw` kernel")
        if base.endswith("_"):
            add(base[:-1], "functional sibling")
    return out


def _candidates(db, framework: str, op: str, soc: str, rel_ops: list[tuple[str, str]]) -> list[Candidate]:
    best: dict[str, Candidate] = {}

    def offer(m, via: str = "", why: str = "") -> None:
        if not m.is_primary or m.confidence < MIN_CANDIDATE_CONFIDENCE:
            return
        api = db.aclnn_api(m.aclnn)
        if api is None:
            return
        conf = m.confidence if not via else round(m.confidence * 0.8, 3)
        detail = m.detail or m.source.where()
        if via:
            detail = f"{why} {via} is implemented by it ({m.evidence}: {detail})"
        cur = best.get(api.name)
        if cur is None or conf > cur.confidence:
            best[api.name] = Candidate(api, m.evidence if not via else "related-op", conf, detail,
                                       supports(api.products, soc), via)

    for m in db.mappings(framework, op):
        offer(m)
    for rop, why in rel_ops:
        for m in db.mappings(framework, rop):
            if m.evidence != "adapter":
                continue
            if "backward" in why or "forward" in why:
                # a forward op's API is not the backward op's; its Backward/Grad sibling is
                for suffix in ("Backward", "Grad"):
                    for name in (m.aclnn + suffix, m.aclnn.replace("Backward", "").replace("Grad", "")):
                        if name != m.aclnn and db.aclnn_api(name) is not None and related(op, name):
                            offer(type(m)(m.framework, m.op, name, m.evidence, m.confidence, m.source,
                                          f"{m.aclnn} -> {name}", m.role), rop, why)
                continue
            offer(m, rop, why)
    return sorted(best.values(), key=lambda c: (c.soc_support is False, -c.confidence, c.api.name))


@lru_cache(maxsize=64)
def _target(db, framework: str, target: str | None) -> str:
    return str(db.parse_target(framework, target))


@lru_cache(maxsize=4096)
def _cached(db, framework: str, name: str, target: str, soc: str) -> OpFacts:
    return _build(db, framework, name, target, soc)


def _paddle_inplace_api_op(db, name: str):
    """The phi kernel op an in-place API name runs (`relu_` -> relu: ops.yaml declares relu
    with `inplace : (x -> out)`), None otherwise. The YAML is read only for such names."""
    if not name.endswith("_") or name.endswith("__") or db.framework_op("paddle", name[:-1]) is None:
        return None
    from opdb.ingest.paddle_yaml import shipped

    op = shipped().resolve(name)
    if op is None or op.name == name or not op.inplace:
        return None
    for kernel in op.kernel_names or (op.name,):
        fop = db.framework_op("paddle", kernel)
        if fop is not None:
            return fop
    return None


def op_facts(db, framework: str, name: str, target=None, soc: str | None = None) -> OpFacts:
    """Everything opdb knows about `name` in `framework` for `target` on `soc` (cached
    per (db, framework, normalized name, target, soc))."""
    t = _target(db, framework, target if target is None or isinstance(target, str) else str(target))
    name = normalize_op_name(framework, name)
    if framework == "paddle":
        # one name per Paddle op: fluid (`matmul_v2`) and YAML (`adam_`) names resolve to
        # the phi kernel name through op_compat aliases; the typed name stays an alias
        fop = db.framework_op(framework, name)
        if fop is None and not db.adapters(framework, name):
            fop = _paddle_inplace_api_op(db, name)
        if fop is not None and fop.name != name and not db.adapters(framework, name):
            name = fop.name
    return _cached(db, framework, name, t, resolve_soc(soc).id)


def _build(db, framework: str, op: str, target: str, soc: str) -> OpFacts:
    fop = db.framework_op(framework, op)
    releases = db.adapter_releases(framework, op)  # (provider, version) adapting it
    in_target = db.adapters(framework, op, target)
    if not in_target and fop is not None and fop.name != op:
        in_target = db.adapters(framework, fop.name, target)
        releases = releases or db.adapter_releases(framework, fop.name)
    stubs = tuple(a for a in in_target if any("stub_unimplemented" in n for n in a.notes))
    usable = tuple(a for a in in_target if a not in stubs)
    calls = adapter_calls(usable)
    dispatch = becomes = None
    if framework == "torch" and op.startswith(("aten::", "prims::")):
        from opdb import torch_dispatch

        dispatch = torch_dispatch.facts(op)
    # an op opdb has evidence for (a curated row for Paddle's GPU-only `flash_attn`,
    # which the CPU wheel does not register) is known too
    known = (fop is not None or bool(releases) or dispatch is not None
             or bool(db.mappings(framework, op)))
    if not known and framework == "paddle":
        # a kernel the CPU wheel's registry cannot show (GPU-only `fused_dropout_add`)
        # still exists: Paddle's source registers it for another backend
        from opdb.paddle_backends import phi_registered

        known = phi_registered(op)
    aliases = tuple(fop.aliases) if fop is not None else ()
    drift: list[DriftReport] = []
    if framework == "paddle" and fop is not None and fop.params:
        for ad in usable:
            if ad.signature:
                drift.append(signature_drift(ad, fop))
    kf = tuple(db.known_failures(framework, opinfo_name(op))) if framework == "torch" else ()
    first = db.first_release(framework, op)
    elsewhere = tuple(sorted({format_target(p, v) for p, v in releases}
                             - {a.target for a in in_target}))

    def exists(n: str) -> bool:
        return db.framework_op(framework, n) is not None or bool(db.adapters(framework, n))

    rel = related_ops(framework, op, exists) if known else []
    cands = _candidates(db, framework, op, soc, rel) if known else []
    if dispatch is not None and (dispatch.device_agnostic_key or
                                 (fop is not None and fop.has_decomposition)) and not usable:
        from opdb import torch_dispatch

        becomes = torch_dispatch.becomes(op)
    return OpFacts(
        framework=framework, name=op, target=target, soc=soc, known=known, op=fop,
        aliases=aliases, adapters=usable, stubs=stubs, calls=calls,
        dtypes=dtype_coverage(db, usable, calls, soc) if usable else None,
        drift=tuple(drift), known_failures=kf, first_release=str(first) if first else "",
        adapted_elsewhere=elsewhere, dispatch=dispatch, becomes=becomes,
        candidates=tuple(cands), related_ops=tuple(rel))
