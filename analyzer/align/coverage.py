"""Join the suspects of a comparison with opscan's classification for the target.

An op that falls back to the CPU, runs through a dtype cast, is decomposed or carries a
known failure in opdb is a likelier cause of a precision gap than one adapted natively, so
suspects are ranked: the op the descent named first, then by how the verdict reads.
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
             classify=None) -> list[Suspect]:
    """Failing own ops of the diverging module (the named op first), each with its verdict.

    classify: (op, dtypes) -> dict, for tests; default: opscan's classify_op on opdb."""
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
        kernels = ",".join(dict.fromkeys(s.op for s in out[:1]))
        rep.next_steps.append(
            f'blacklist trial on the device: export CUSTOM_DEVICE_BLACK_LIST="{kernels}" (runs '
            f"{kernels} on the CPU) and dump side B again; if the module then passes, the NPU kernel is the cause")
    return out


def _opdb_classifier(framework, target, soc, notes: list):
    try:
        from analyzer.classify import ClassifyContext, classify_op
        from opdb.query import OpDB

        ctx = ClassifyContext.create(OpDB.open(), framework, target, soc)
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
