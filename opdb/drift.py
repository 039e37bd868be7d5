"""Signature drift between a device adapter's kernel and the installed framework's kernel.

Paddle binds kernel arguments by position and kind, not by name: the op's inputs,
attributes and outputs are handed to the kernel function in order (tensor inputs,
then attributes of exact C++ types, then outputs). Renaming a parameter is harmless;
inserting one (`moment2_max`), dropping one, or changing an attribute's type
(`int` -> `int64_t`) feeds every later parameter the wrong value. So drift is decided
on the sequence of parameter *kinds*; names only explain it.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from opdb.model import Adapter, FrameworkOp, Param


@dataclass(frozen=True)
class DriftReport:
    """PaddleCustomDevice kernel signature vs the installed Paddle's kernel signature.

    differing: names of params added, removed or retyped; shifted: params only renamed
    (harmless: kernels bind arguments by position and kind)."""

    adapter: str
    adapter_function: str
    adapter_params: tuple[Param, ...]
    framework_function: str
    framework_params: tuple[Param, ...]
    differing: tuple[str, ...]
    shifted: int = 0
    details: tuple[str, ...] = ()


def signature_drift(adapter: Adapter, op: FrameworkOp) -> DriftReport:
    """The drift between an adapter's kernel signature and the installed framework's."""
    d = compare(adapter.signature, op.params)
    return DriftReport(adapter=adapter.target, adapter_function=adapter.function,
                       adapter_params=adapter.signature, framework_function=op.function,
                       framework_params=op.params, differing=tuple(d.names), shifted=d.renamed,
                       details=tuple(d.details))


def arg_kind(ctype: str) -> str:
    """The binding kind of a phi kernel parameter type."""
    t = re.sub(r"\b(phi|paddle|std)::", "", ctype)
    t = re.sub(r"\bconst\b", "", t).replace("&", "").replace(" ", "")
    if t in ("DenseTensor", "TensorBase", "SelectedRows", "SparseCooTensor", "SparseCsrTensor"):
        return "in"
    if t.startswith("optional<") and "Tensor" in t:
        return "in?"
    if t.startswith("vector<") and "Tensor" in t:
        return "in[]" if t.endswith("*>") and "const" in ctype or not t.endswith("*>") else "out[]"
    if t.startswith("optional<vector<") and "Tensor" in t:
        return "in[]?"
    if t.endswith("*") and ("Tensor" in t or "SelectedRows" in t):
        return "out"
    t = t.replace("int64_t", "int64").replace("int32_t", "int")
    return f"attr:{t}"


@dataclass
class Drift:
    """Params added/removed/retyped (by name) and human-readable detail lines."""

    names: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    renamed: int = 0  # same kind at the same aligned position, different name

    def __bool__(self) -> bool:
        return bool(self.names)


def compare(adapter: tuple[Param, ...], framework: tuple[Param, ...]) -> Drift:
    """Align the two parameter lists by kind; report insertions, deletions, retypes."""
    a_kinds = [arg_kind(p.ctype) for p in adapter]
    f_kinds = [arg_kind(p.ctype) for p in framework]
    out = Drift()
    sm = difflib.SequenceMatcher(None, a_kinds, f_kinds, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.renamed += sum(1 for i, j in zip(range(i1, i2), range(j1, j2))
                               if adapter[i].name != framework[j].name)
            continue
        if tag in ("insert", "replace"):
            for j in range(j1, j2):
                p = framework[j]
                i = i1 + (j - j1)
                if tag == "replace" and i < i2:
                    out.names.append(p.name)
                    out.details.append(f"retyped: {adapter[i].name} ({adapter[i].ctype}) -> "
                                       f"{p.name} ({p.ctype}) at {j}")
                else:
                    out.names.append(p.name)
                    out.details.append(f"added: {p.name} ({p.ctype}) at {j}")
        if tag in ("delete", "replace"):
            for i in range(i1 + (j2 - j1 if tag == "replace" else 0), i2):
                out.names.append(adapter[i].name)
                out.details.append(f"removed: {adapter[i].name} ({adapter[i].ctype})")
    _prefer_unmatched_names(out, adapter, framework, a_kinds, f_kinds)
    return out


def _norm_name(name: str) -> str:
    n = re.sub(r"(_in|_t)$", "", name.lower())
    return n[:-1] if n.endswith("s") else n


def _prefer_unmatched_names(out: Drift, adapter, framework, a_kinds, f_kinds) -> None:
    """Kind alignment cannot tell which of several same-kind params was inserted
    (adam's extra output could be any `out`); when names tell exactly, use them."""
    for kind in sorted(set(a_kinds) | set(f_kinds)):
        fa = [p for p, k in zip(framework, f_kinds) if k == kind]
        aa = [p for p, k in zip(adapter, a_kinds) if k == kind]
        if not fa or not aa:  # a pure type change: the positional report is right
            continue
        a_names = {_norm_name(p.name) for p in aa}
        f_names = {_norm_name(p.name) for p in fa}
        for extra, side, other, verb in ((len(fa) - len(aa), fa, a_names, "added"),
                                         (len(aa) - len(fa), aa, f_names, "removed")):
            if extra <= 0:
                continue
            unmatched = [p for p in side if _norm_name(p.name) not in other]
            if len(unmatched) != extra:
                continue
            keep = [(n, d) for n, d in zip(out.names, out.details)
                    if not (d.startswith(verb + ":") and arg_kind(_ctype_of(d)) == kind)]
            out.names = [n for n, _ in keep]
            out.details = [d for _, d in keep]
            for p in unmatched:
                out.names.append(p.name)
                pos = f" at {list(framework).index(p)}" if verb == "added" else ""
                out.details.append(f"{verb}: {p.name} ({p.ctype}){pos}")


def _ctype_of(detail: str) -> str:
    m = re.search(r"\(([^()]*(?:\([^()]*\))?[^()]*)\)", detail)
    return m.group(1) if m else ""
