"""`opdb diff A B`: what changed between two provider releases of one framework.

    opdb diff torch_npu==2.13.0 torch_npu==2.14.0
    opdb diff PaddleCustomDevice@release-2.6 PaddleCustomDevice@develop --json

Compared per op (adapter row): ops added, ops removed, and for ops in both: changed
schema (torch) or kernel signature (paddle), changed aclnn APIs, changed legacy CANN
ops, changed registered dtypes (paddle; torch_npu adapters register no dtype list, so
for them the dtypes that changed are those of the aclnn APIs they call). A torch schema
known on one side only (name-only entries of a release built for another torch than the
installed one) is unknown, not changed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from opdb.errors import OpscanError
from opdb.model import Adapter


@dataclass
class OpChange:
    op: str
    field: str          # schema | signature | aclnn | legacy_ops | dtypes
    before: list[str]
    after: list[str]

    def line(self) -> str:
        if self.field in ("schema", "signature"):
            return f"{self.op}: {self.field} {self.before[0] if self.before else '-'} -> " \
                   f"{self.after[0] if self.after else '-'}"
        gone = [x for x in self.before if x not in self.after]
        new = [x for x in self.after if x not in self.before]
        parts = [f"+{x}" for x in new] + [f"-{x}" for x in gone]
        return f"{self.op}: {self.field} {' '.join(parts)}"


@dataclass
class ReleaseDiff:
    framework: str
    a: str
    b: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[OpChange] = field(default_factory=list)
    unchanged: int = 0

    def counts(self) -> dict[str, int]:
        out = {"added": len(self.added), "removed": len(self.removed), "unchanged": self.unchanged}
        for c in self.changed:
            out[f"changed {c.field}"] = out.get(f"changed {c.field}", 0) + 1
        return out

    def summary(self) -> str:
        c = self.counts()
        changed = ", ".join(f"{k.split(' ', 1)[1]} {v}" for k, v in sorted(c.items())
                            if k.startswith("changed "))
        return (f"{self.a} -> {self.b}: {c['added']} ops added, {c['removed']} removed, "
                f"changed: {changed or 'none'}; {c['unchanged']} unchanged")

    def to_json(self) -> dict:
        return {"framework": self.framework, "from": self.a, "to": self.b,
                "counts": self.counts(), "added": self.added, "removed": self.removed,
                "changed": [c.__dict__ for c in self.changed]}

    def render_text(self) -> str:
        out = [self.summary()]
        if self.added:
            out += ["", f"added ({len(self.added)}):"] + [f"  + {op}" for op in self.added]
        if self.removed:
            out += ["", f"removed ({len(self.removed)}):"] + [f"  - {op}" for op in self.removed]
        if self.changed:
            out += ["", f"changed ({len(self.changed)}):"] + [f"  {c.line()}" for c in self.changed]
        return "\n".join(out) + "\n"


def _sig(a: Adapter) -> str:
    return "(" + ", ".join(f"{p.ctype} {p.name}" for p in a.signature) + ")"


def _api_dtypes(db, apis) -> list[str]:
    out = set()
    for name in apis:
        api = db.aclnn_api(name)
        if api is not None:
            for p in api.params:
                out.update(p.dtypes)
    return sorted(out)


def diff_releases(db, a_text: str, b_text: str) -> ReleaseDiff:
    """The diff of two targets (text as `--target` takes it) of the same framework."""
    fws = []
    for text in (a_text, b_text):
        fw = "torch" if text.strip().lower().startswith("torch_npu") else \
             "paddle" if text.strip().lower().startswith("paddlecustomdevice") else None
        if fw is None:
            raise OpscanError(f"cannot tell the framework of {text!r}",
                              hint="write torch_npu==VERSION or PaddleCustomDevice@BRANCH")
        fws.append(fw)
    if fws[0] != fws[1]:
        raise OpscanError(f"{a_text} and {b_text} belong to different frameworks",
                          hint="diff two torch_npu releases or two PaddleCustomDevice branches")
    fw = fws[0]
    ta, tb = db.parse_target(fw, a_text), db.parse_target(fw, b_text)
    A = {x.op: x for x in db.adapters(fw, target=ta) if x.provider == ta.provider}
    B = {x.op: x for x in db.adapters(fw, target=tb) if x.provider == tb.provider}
    d = ReleaseDiff(fw, str(ta), str(tb), sorted(set(B) - set(A)), sorted(set(A) - set(B)))
    dtype_cache: dict[tuple, list[str]] = {}
    for op in sorted(set(A) & set(B)):
        x, y = A[op], B[op]
        changes = []
        if fw == "torch" and x.schema and y.schema and x.schema != y.schema:  # "" = not known
            changes.append(OpChange(op, "schema", [x.schema], [y.schema]))
        if fw == "paddle" and _sig(x) != _sig(y):
            changes.append(OpChange(op, "signature", [_sig(x)], [_sig(y)]))
        if x.aclnn != y.aclnn:
            changes.append(OpChange(op, "aclnn", list(x.aclnn), list(y.aclnn)))
        if x.legacy_ops != y.legacy_ops:
            changes.append(OpChange(op, "legacy_ops", list(x.legacy_ops), list(y.legacy_ops)))
        if fw == "paddle":
            if (x.dtypes or ()) != (y.dtypes or ()):
                changes.append(OpChange(op, "dtypes", sorted(x.dtypes or ()), sorted(y.dtypes or ())))
        elif x.aclnn != y.aclnn:
            for apis in (x.aclnn, y.aclnn):
                if apis not in dtype_cache:
                    dtype_cache[apis] = _api_dtypes(db, apis)
            if dtype_cache[x.aclnn] != dtype_cache[y.aclnn]:
                changes.append(OpChange(op, "dtypes", dtype_cache[x.aclnn], dtype_cache[y.aclnn]))
        if changes:
            d.changed += changes
        else:
            d.unchanged += 1
    return d
