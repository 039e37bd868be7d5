"""Join the suspects of a comparison with opscan's classification for the target.

An op that falls back to the CPU, runs through a dtype cast, is decomposed or carries a
known failure in opdb is a likelier cause of a precision gap than one adapted natively, so
suspects are ranked: the op the descent named first, then by how the verdict reads.

For Paddle, the guide's last resort (blacklist the suspect kernel and retry) is offered
only as `opscan blacklist` judges it (analyzer.blacklist.suggest_blacklist on the suspect's
kernel and the dtype side B ran it in): the runtime names per execution mode, and a refusal
when the installed Paddle has no CPU kernel for that dtype (the run would stop instead of
falling back). The first suspect that is not refused gets the trial; refused ones say why.
"""
from __future__ import annotations

from analyzer.align.compare import AlignReport, Suspect

# lower is more suspicious (the verdict itself explains a numerical difference)
SEVERITY = {"needs-ascendc": 0, "cann-available": 0, "dtype-gap": 1, "decomposable": 2,
            "signature-drift": 3, "supported": 5, "not-a-kernel": 6, "unknown": 4}
MAX_SUSPECTS = 8


def op_for_opdb(framework: str, name: str) -> str:
    """gelu.default -> aten::gelu, add.Tensor -> aten::add.Tensor; Paddle names unchanged."""
    if framework != "torch":
        return name
    base, _, overload = name.partition(".")
    return f"aten::{base}" + (f".{overload}" if overload and overload != "default" else "")


def suspects(rep: AlignReport, framework: str, target: str | None = None, soc: str | None = None,
             classify=None, blacklist=None) -> list[Suspect]:
    """Failing own ops of the diverging module (the named op first), each with its verdict.

    classify: (op, dtypes) -> dict, for tests; default: opscan's classify_op on opdb.
    blacklist: (kernel, dtype) -> analyzer.blacklist.Blacklist, for tests; default:
    `blacklist_trial` on opdb and the installed Paddle's kernel registry."""
    if rep.origin is None:
        return []
    parent = rep.origin.key
    rows = [r for r in rep.rows if r.kind == "op" and r.parent == parent and r.failed and r.phase == "forward"]
    if not rows and rep.op is not None:
        rows = [rep.op]
    if classify is None:
        classify = _opdb_classifier(framework, target, soc, rep.notes)
    out = []
    for r in rows[:MAX_SUSPECTS]:
        op = op_for_opdb(framework, r.name)
        dtypes = tuple(sorted({d for d in (r.dtype_b, r.dtype_a) if d}))
        out.append(Suspect(op=op, key=r.key, parent=r.parent, err=r.err, threshold=r.threshold,
                           verdict=classify(op, dtypes)))
    named = rep.op.key if rep.op is not None else None
    order = {s.key: i for i, s in enumerate(out)}
    out.sort(key=lambda s: (s.key != named, SEVERITY.get(s.verdict.get("category", "unknown"), 4), order[s.key]))
    for i, s in enumerate(out, 1):
        s.rank = i
    if framework == "paddle" and out:
        if blacklist is None:
            blacklist = _blacklist_checker(target, soc, rep.notes)
        _blacklist_trials(rep, out, rows, blacklist)
    return out


def _context(framework, target, soc):
    from analyzer.classify import ClassifyContext
    from opdb.query import OpDB

    return ClassifyContext.create(OpDB.open(), framework, target, soc)


def _opdb_classifier(framework, target, soc, notes: list):
    from analyzer.classify import classify_op

    try:
        ctx = _context(framework, target, soc)
    except Exception as e:  # no opdb snapshot, unknown target: suspects stay unclassified
        notes.append(f"suspects not classified: {e}")
        return lambda op, dtypes: {"category": "unknown", "action": ""}

    def classify(op, dtypes):
        try:
            v = classify_op(ctx, op, dtypes)
        except Exception as e:  # an op opdb cannot name is "unknown", never "supported"
            return {"category": "unknown", "action": "", "evidence": [str(e)]}
        return {"category": v.category, "action": v.action, "target": str(ctx.target),
                "soc": ctx.soc, "evidence": list(v.evidence[:3]), "cast_to": v.cast_to,
                "decomposes_into": list(v.decomposes_into[:6]),
                "known_failures": list(v.known_failures[:3])}
    return classify


# ---------------------------------------------------------------- Paddle blacklist trial

def blacklist_trial(ctx, kernel: str, dtype: str, framework_version: str = "", registry=None):
    """`opscan blacklist`'s judgement of listing one suspect: a one-call trace of `kernel`
    (a phi kernel, fluid or API name) in `dtype`, classified for ctx's target, through
    analyzer.blacklist.suggest_blacklist with the kernel as a precision suspect.
    registry: the Paddle kernel registry (default: the installed Paddle's).
    None when the name is not a kernel of that registry (a composite API: nothing to list)."""
    from analyzer.blacklist import is_kernel, suggest_blacklist
    from analyzer.classify import classify_trace
    from analyzer.model import OpCall, TensorMeta, Trace
    from analyzer.trace.paddle.names import kernel_for
    from opdb.dtypes import normalize_dtype

    if not framework_version:
        try:
            import paddle
            framework_version = paddle.__version__
        except ImportError:
            framework_version = ""
    k = kernel_for(kernel)
    if is_kernel(k, registry) is False:
        return None
    dt = normalize_dtype(dtype.replace("torch.", "").replace("paddle.", "")) if dtype else ""
    call = OpCall(index=0, op=k, overload="", phase="forward",
                  inputs=[TensorMeta(0, dt, ())] if dt else [], module="", source="opscan align")
    trace = Trace(framework="paddle", mode="real", model="opscan align suspect", calls=[call],
                  framework_version=framework_version)
    verdicts = classify_trace(ctx, trace)
    return suggest_blacklist(ctx, verdicts, trace, None, suspects=(k,),
                             framework_version=framework_version, registry=registry)


def _blacklist_checker(target, soc, notes: list):
    try:
        ctx = _context("paddle", target, soc)
    except Exception as e:  # no opdb: the trial cannot be checked, so it is not offered
        notes.append(f"blacklist trial not checked (opdb: {e})")
        return None
    return lambda kernel, dtype: blacklist_trial(ctx, kernel, dtype)


def _blacklist_trials(rep: AlignReport, out: list[Suspect], rows, check) -> None:
    """Judge each suspect's listing; the first accepted one becomes the next step."""
    from analyzer.trace.paddle.names import kernel_for

    dtype_of = {r.key: (r.dtype_b or r.dtype_a or "") for r in rows}
    if rep.op is not None:
        dtype_of.setdefault(rep.op.key, rep.op.dtype_b or rep.op.dtype_a or "")
    offered = False
    if check is None:
        rep.next_steps.append("no blacklist trial offered: opscan blacklist's checks need opdb (see notes)")
    for s in out:
        if check is None:
            s.blacklist = {"status": "unchecked", "export": "", "reason": "opdb not available"}
            continue
        kernel = kernel_for(s.op)
        bl = check(s.op, dtype_of.get(s.key, ""))
        if bl is None:  # not a kernel: no runtime name matches it
            s.blacklist = {"status": "not-a-kernel", "export": "", "reason":
                           f"{s.op} is a Paddle API that is not a phi kernel of this Paddle: no "
                           "CUSTOM_DEVICE_BLACK_LIST name matches it (blacklist the kernels it runs)"}
            rep.next_steps.append(f"no blacklist trial for {s.op} ({s.key}): {s.blacklist['reason']}")
            continue
        refused = next((e for e in bl.refused if e.kernel == kernel), None)
        entry = next((e for e in bl.entries if e.kernel == kernel), None)
        if refused is not None:
            s.blacklist = {"status": "refused", "export": "", "reason": refused.refusal}
            rep.next_steps.append(f"no blacklist trial for {kernel} ({s.key}): {refused.refusal}")
        elif entry is not None and bl.export:
            modes = "; ".join(f"{n.name}: {' + '.join(n.modes)}" for n in entry.names)
            s.blacklist = {"status": "trial", "export": bl.export, "reason": modes}
            if not offered:
                offered = True
                note = f"; {bl.notes[0]}" if bl.notes else ""
                rep.next_steps.append(
                    f"blacklist trial on the device (checked by opscan blacklist; {modes}): "
                    f"{bl.export} runs {kernel} on the CPU; dump side B again: if the module "
                    f"then passes, the NPU kernel is the cause{note}")
        else:
            s.blacklist = {"status": "unchecked", "export": "", "reason": bl.summary}
