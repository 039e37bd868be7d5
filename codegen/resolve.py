"""NAME -> (AclnnApi, FrameworkOp): resolve what the user typed through opdb.

Order: the exact aclnn name; a framework op of that name and its best mapping
(`adam` -> the API PaddleCustomDevice's adam kernel calls); then opdb's ranked
normalized/fuzzy matches. Several equally good APIs -> `AmbiguousName` listing them
with signatures unless `pick` chooses (1-based). The framework op comes from
`--op`, the op the name resolved through, or the best mapping of the API.

`db` is anything with opdb.query.OpDB's methods (tests pass a small in-memory one).
"""
from __future__ import annotations

import re

from dataclasses import dataclass

from opdb.errors import NotFound, OpscanError
from opdb.model import AclnnApi, FrameworkOp
from opdb.names import norm_aclnn, norm_op, norm_text
from opdb.versions import version_key


class AmbiguousName(OpscanError):
    """NAME fits several aclnn APIs; `candidates` lists them best first."""

    def __init__(self, text: str, candidates: list[AclnnApi], roles: dict[str, str] | None = None):
        roles = roles or {}
        lines = [f"{i}. {a.workspace_signature()}" + (f"  [{roles[a.name]}]" if roles.get(a.name) else "")
                 for i, a in enumerate(candidates, 1)]
        super().__init__(f"{text!r} matches {len(candidates)} aclnn APIs:\n  " + "\n  ".join(lines),
                         hint="choose one with --pick N or pass the exact aclnn name")
        self.candidates = candidates


@dataclass
class Resolution:
    api: AclnnApi
    op: FrameworkOp
    how: str            # how the API was found
    op_how: str         # how the framework op was found
    alternatives: list[str]  # other APIs that fit


def op_from_adapter(db, framework: str, name: str) -> FrameworkOp | None:
    """torch_npu custom ops (`npu::npu_apply_adam.out`) are not in the ATen catalog;
    their schema comes from the adapter records (newest release first)."""
    try:
        adapters = db.adapters(framework, op=name)
    except Exception:
        return None
    if framework == "paddle":
        with_sig = sorted([a for a in adapters if a.signature], key=lambda a: version_key(a.version))
        if not with_sig:
            return None
        a = with_sig[-1]
        return FrameworkOp("paddle", name, a.source, kind="forward", params=a.signature,
                           function=a.function,
                           notes=(f"signature of the {a.provider}@{a.version} adapter",))
    adapters = [a for a in adapters if a.schema]
    if not adapters:
        return None
    a = sorted(adapters, key=lambda a: version_key(a.version), reverse=True)[0]
    ns = name.split("::")[0] if "::" in name else "npu"
    schema = a.schema if "::" in a.schema.split("(")[0] else f"{ns}::{a.schema}"
    return FrameworkOp("torch", name, a.source, schema=schema, kind="forward")


def _fw_op(db, framework: str, text: str) -> FrameworkOp | None:
    cands = [text]
    if framework == "torch" and "::" not in text:
        cands.append(f"aten::{text}")
    if framework == "paddle":
        cands.append(text.lower())
    for c in cands:
        op = db.framework_op(framework, c)
        if op is not None:
            return op
    if "::" in text or framework == "paddle":
        return op_from_adapter(db, framework, text)
    return None


EVIDENCE_RANK = {"adapter": 0, "curated": 1, "cross-framework": 2, "name": 3}
# mappings no adapter of this framework states: another framework's adapter, a name
GUESSED_EVIDENCE = ("cross-framework", "name")


def _top_mapped(db, framework: str, op: FrameworkOp) -> list[str]:
    """The APIs that implement `op`: primary mappings only (a zero-fill or cast an
    adapter also calls never counts), best evidence first."""
    from opdb.roles import related

    maps = [m for m in db.mappings(framework=framework, op=op.name) if m.is_primary]
    if not maps:
        return []
    maps.sort(key=lambda m: (EVIDENCE_RANK.get(m.evidence, 9), -m.confidence,
                             not related(op.name, m.aclnn), m.aclnn))
    best = (EVIDENCE_RANK.get(maps[0].evidence, 9), maps[0].confidence)
    names = []
    for m in maps:
        if (EVIDENCE_RANK.get(m.evidence, 9), m.confidence) == best and m.aclnn not in names:
            names.append(m.aclnn)
    return names


def resolve_api(db, text: str, framework: str, pick: int | None = None
                ) -> tuple[AclnnApi, FrameworkOp | None, str, list[str]]:
    text = text.strip()
    if not text:
        raise NotFound("empty aclnn name", hint="pass an API such as aclnnAdd or a name like adam")
    exact = db.aclnn_api(text) or db.aclnn_api("aclnn" + text)
    if exact is not None and pick is None:
        return exact, None, "exact name", []
    cands: list[AclnnApi] = []
    via_op = _fw_op(db, framework, text)
    how = ""
    if via_op is not None:
        names = _top_mapped(db, framework, via_op)
        # prefer the non-Inplace API unless the op itself is in-place
        inplace_op = via_op.name.rstrip(".").split("::")[-1].split(".")[0].endswith("_")
        if len(names) > 1 and not inplace_op:
            plain = [n for n in names if "Inplace" not in n]
            names = plain or names
        cands = [a for a in (db.aclnn_api(n) for n in names) if a is not None]
        how = f"mapping from {framework} op {via_op.name}"
    if not cands:
        via_op = None
        cands = list(db.resolve_aclnn(text, framework=framework))
        how = "name match"
        key = norm_text(text)
        lexical = [a for a in cands if key in norm_aclnn(a.name)]
        if cands and not lexical:  # only fuzzy look-alikes: never guess silently
            raise NotFound(f"no aclnn API matches {text!r}",
                           hint=f"closest: {', '.join(a.name for a in cands[:5])}")
        strong = [a for a in cands if norm_aclnn(a.name) in (key, "apply" + key)
                  and "Inplace" not in a.name]
        if len(strong) == 1 and pick is None:
            cands = strong + [a for a in cands if a is not strong[0]]
            return strong[0], None, how, [a.name for a in cands[1:]]
    if not cands:
        close = db.close_aclnn_names(text) if hasattr(db, "close_aclnn_names") else []
        hint = f"closest: {', '.join(close)}" if close else "try `opdb search NAME`"
        raise NotFound(f"no aclnn API matches {text!r}", hint=hint)
    if pick is not None:
        if not 1 <= pick <= len(cands):
            raise OpscanError(f"--pick {pick} is out of range", hint=f"choose 1..{len(cands)}")
        chosen = cands[pick - 1]
        return chosen, via_op, how, [a.name for a in cands if a is not chosen]
    if len(cands) > 1:
        raise AmbiguousName(text, cands, {a.name: mapping_roles(db, framework, a.name) for a in cands})
    return cands[0], via_op, how, []


def mapping_roles(db, framework: str, api: str, limit: int = 3) -> str:
    """How `framework`'s adapters use `api`: `primary for add; helper:auxiliary for
    batch_norm` (adapter evidence only; "" when no adapter calls it)."""
    try:
        maps = [m for m in db.mappings(framework=framework, aclnn=api) if m.evidence == "adapter"]
    except Exception:  # noqa: BLE001 - test doubles without mappings
        return ""
    by_role: dict[str, list[str]] = {}
    for m in sorted(maps, key=lambda m: (m.role != "primary", m.op)):
        ops = by_role.setdefault(m.role, [])
        if m.op not in ops:
            ops.append(m.op)
    return "; ".join(f"{role} for {', '.join(ops[:limit])}" + (" ..." if len(ops) > limit else "")
                     for role, ops in by_role.items())


def sibling_apis(api: str) -> list[str]:
    """In-place/functional siblings of an API: `aclnnInplaceAdd` <-> `aclnnAdd`."""
    if api.startswith("aclnnInplace"):
        return ["aclnn" + api[len("aclnnInplace"):]]
    return ["aclnnInplace" + api[len("aclnn"):]] if api.startswith("aclnn") else []


def rank_ops_for_api(db, framework: str, api: str) -> list[tuple[tuple, object, str]]:
    """(sort key, mapping, how) for every primary mapping of `api` in `framework`, best
    first: adapter evidence before curated/derived; ops of the framework's catalog
    before provider-only custom ops; ops the API's name relates to; forward ops;
    in-place ops only for in-place APIs; shorter names."""
    from opdb.roles import is_backward_op, related

    out = []
    inplace_api = api.startswith("aclnnInplace")
    for m in db.mappings(framework=framework, aclnn=api):
        if not m.is_primary:
            continue
        in_catalog = db.framework_op(framework, m.op) is not None
        base = m.op.split("::")[-1].split(".")[0]
        overload = m.op.split("::")[-1].partition(".")[2]
        is_out = overload.endswith("out") or base.endswith("_out")
        n_primary = len({x.aclnn for x in db.mappings(framework=framework, op=m.op)
                         if x.is_primary and x.evidence == m.evidence})
        key = (EVIDENCE_RANK.get(m.evidence, 9), not in_catalog, not related(m.op, api),
               is_backward_op(m.op), base.endswith("_") != inplace_api, is_out, -m.confidence,
               n_primary, len(m.op), m.op)
        out.append((key, m, f"{m.evidence} mapping, role {m.role} (confidence {m.confidence:.2f})"))
    return sorted(out, key=lambda t: t[0])


def _direct_composite_ops(db, framework: str, api: str) -> list:
    """torch ops whose op-plugin adapter calls `api` itself (EXEC_NPU_CMD in the op's own
    function, `named by the adapter`) among other APIs, so the mapping's role is
    `composite`: `aten::eq.Tensor` runs aclnnEqTensor, or aclnnEqScalar for a CPU scalar
    `other` (EqKernelNpuOpApi.cpp). `_best_op_for_api` prefers them to a guessed primary
    (aclnnEqTensor's was `aten::equal`, from PaddleCustomDevice's `equal` kernel, while
    op-plugin's EqualKernelNpuOpApi.cpp calls aclnnEqual). Ranked as primaries are, an
    in-place op only for an in-place API; ops reached only through another op (`isin`
    through `eq`) are not taken. torch only (op-plugin adapters)."""
    from opdb.ingest.op_plugin import CONF_DIRECT
    from opdb.roles import is_backward_op, related

    if framework != "torch":
        return []
    inplace_api = api.startswith("aclnnInplace")
    out = []
    for m in db.mappings(framework=framework, aclnn=api):
        base = m.op.split("::")[-1].split(".")[0]
        if m.is_primary or m.evidence != "adapter" or m.role != "composite" \
                or m.confidence < CONF_DIRECT or base.endswith("_") != inplace_api:
            continue
        overload = m.op.split("::")[-1].partition(".")[2]
        is_out = overload.endswith("out") or base.endswith("_out")
        key = (db.framework_op(framework, m.op) is None, not related(m.op, api),
               is_backward_op(m.op), base.endswith("_") != inplace_api, is_out, len(m.op), m.op)
        out.append((key, m))
    return [m for _, m in sorted(out, key=lambda t: t[0])]


def _best_op_for_api_by_mapping(db, framework: str, api: AclnnApi) -> tuple[FrameworkOp | None, str]:
    for name, via in [(api.name, "")] + [(s, f" via its sibling {s}") for s in sibling_apis(api.name)]:
        ranked = rank_ops_for_api(db, framework, name)
        if name == api.name and ranked and ranked[0][1].evidence in GUESSED_EVIDENCE:
            # the op whose own adapter calls the API beats a guess
            for m in _direct_composite_ops(db, framework, name):
                op = db.framework_op(framework, m.op) or op_from_adapter(db, framework, m.op)
                if op is not None:
                    return op, (f"adapter mapping, role composite (the op's adapter calls "
                                f"{name} itself among other APIs; preferred to the "
                                f"{ranked[0][1].evidence} guess {ranked[0][1].op})")
        for _, m, how in ranked:
            op = db.framework_op(framework, m.op) or op_from_adapter(db, framework, m.op)
            if op is not None:
                return op, how + via
    # no mapping: a framework op whose normalized name equals the API's
    key = norm_aclnn(api.name)
    hits = [op for op in db.framework_ops(framework) if norm_op(op.name) == key]
    if hits:
        hits.sort(key=lambda o: (o.kind != "forward", len(o.name), o.name))
        return hits[0], "normalized name match"
    return None, ""


def _best_op_for_api(db, framework: str, api: AclnnApi) -> tuple[FrameworkOp | None, str]:
    """`_best_op_for_api_by_mapping`, with a paddle kernel's signature from upstream's
    registration when the installed Paddle declares none (`_adapter_signature`)."""
    op, how = _best_op_for_api_by_mapping(db, framework, api)
    if op is None:
        return op, how
    return _adapter_signature(db, framework, op, how)


def _returns_view(op: FrameworkOp) -> bool:
    """A torch op whose return aliases an input it does not write (`Tensor(a) self ... ->
    Tensor(a)`, not `(a!)`): a view, which torch_npu computes in torch, with no kernel."""
    from codegen.kinds import parse_torch_schema

    try:
        schema = parse_torch_schema(op.schema or "", op.name)
    except Exception:  # noqa: BLE001 - an unparsable schema is judged elsewhere
        return False
    read_only = {a.alias for a in schema.args if a.alias and not a.alias.endswith("!")}
    return any(r.alias and r.alias in read_only for r in schema.returns)


def _unview(db, framework: str, fw_op: FrameworkOp, op_how: str) -> tuple[FrameworkOp, str]:
    """A view op is adapted as its `_copy` variant (functionalization's `permute_copy`,
    `transpose_copy.int`): the values an aclnn API computes for it, in a fresh tensor.
    Writing through a view must reach its input, which an adapter's output cannot do."""
    if framework != "torch" or not _returns_view(fw_op):
        return fw_op, op_how
    ns, _, rest = fw_op.name.rpartition("::")
    base, dot, overload = rest.partition(".")
    copy = db.framework_op(framework, f"{ns}::{base}_copy{dot}{overload}")
    if copy is None:  # (flatten.using_ints, real): kept, said in the header
        return fw_op, (f"{op_how}; note: {fw_op.name} returns a view of its input (torch_npu "
                       "computes views in torch) and has no `_copy` variant; review the result")
    return copy, (f"{op_how}; {fw_op.name} returns a view of its input (torch_npu computes "
                  f"views in torch, with no kernel), so its copy variant {copy.name} is adapted")


def resolve(db, text: str, framework: str, op: str | None = None,
            pick: int | None = None) -> Resolution:
    api, via_op, how, alternatives = resolve_api(db, text, framework, pick)
    if op:
        fw_op = _fw_op(db, framework, op)
        if fw_op is None:
            names = [o.name for o in db.framework_ops(framework)]
            import difflib
            close = difflib.get_close_matches(op, names, n=5, cutoff=0.5)
            raise NotFound(f"no {framework} op {op!r} in opdb",
                           hint=f"closest: {', '.join(close)}" if close else
                           "torch ops are `aten::name.overload`, paddle ops phi kernel names")
        fw_op, op_how = _unview(db, framework, fw_op, "--op")
        fw_op, op_how = _adapter_signature(db, framework, fw_op, op_how)
        if framework == "paddle":  # a step of upstream's composite -> the one-call API
            from codegen.paddle_routing import one_call_route
            route = one_call_route(db, framework, api.name, fw_op)
            if route is not None:
                how = f"{how}; {route.note(api.name, fw_op.name)}"
                alternatives = [api.name] + [a for a in alternatives if a != route.api]
                api = db.aclnn_api(route.api)
        return Resolution(api, fw_op, how, op_how, alternatives)
    if via_op is not None:
        fw_op, op_how = _unview(db, framework, via_op, "the name given")
        fw_op, op_how = _adapter_signature(db, framework, fw_op, op_how)
        return Resolution(api, fw_op, how, op_how, alternatives)
    fw_op, op_how = _best_op_for_api(db, framework, api)
    if fw_op is None:
        raise NotFound(f"cannot infer the {framework} op to adapt for {api.name}",
                       hint="name it with --op (e.g. --op aten::add.Tensor or --op add)")
    fw_op, op_how = _unview(db, framework, fw_op, op_how)
    return Resolution(api, fw_op, how, op_how, alternatives)


def _adapter_signature(db, framework: str, op: FrameworkOp, how: str
                       ) -> tuple[FrameworkOp, str]:
    """(paddle) A kernel the installed Paddle registers but declares in no phi header (a
    kernel kept for older programs: `one_hot_raw`) has no signature to render from.
    PaddleCustomDevice's registration of it names its C++ function and parameters (opdb's
    adapters; develop first, else the newest release branch): that signature is used, and
    `how` says where it came from. Every other op is returned as it is."""
    if framework != "paddle" or op.params or op.function:
        return op, how
    regs = [a for a in db.adapters("paddle", op=op.name)
            if a.provider == "PaddleCustomDevice" and a.signature and a.function]
    if not regs:
        return op, how
    reg = sorted(regs, key=lambda a: (a.version != "develop", [-int(x) for x in
                                      re.findall(r"\d+", a.version)], a.version))[0]
    schema = (f"void {reg.function}(const Context& dev_ctx, "
              + ", ".join(f"{p.ctype} {p.name}" for p in reg.signature) + ")")
    where = f"PaddleCustomDevice {reg.version} {reg.source.path}:{reg.source.line}"
    from dataclasses import replace
    op = replace(op, params=reg.signature, function=reg.function, schema=schema,
                 notes=op.notes + (f"signature from {where}",))
    return op, (f"{how}; signature from {where} (the installed Paddle declares no "
                f"`{op.name}` kernel)")


def backward_api(db, api: AclnnApi) -> AclnnApi | None:
    """`aclnnFoo` -> `aclnnFooBackward` / `aclnnFooGrad` when opdb has it."""
    for suffix in ("Backward", "Grad"):
        cand = db.aclnn_api(api.name + suffix)
        if cand is not None:
            return cand
    return None
