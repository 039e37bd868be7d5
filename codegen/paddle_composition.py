"""paddle target: a forward kernel that upstream composes of several aclnn calls, asked for
with one of them, is rendered as the whole composition (a reviewed table keyed by the phi
op, `opdb/sources/forward_compositions.yaml`).

Batch N scored `label_smooth` 0: asked for with aclnnAdd (one of the three APIs upstream's
`LabelSmoothKernel` calls), opgen rendered label + prior_dist. Paddle's label_smooth is
(1 - epsilon) * label + epsilon * prior_dist, or + epsilon / num_classes without
`prior_dist`; no aclnn API computes it, so opdb has no primary API for the op and no
argument mapping can give it. The table states, per phi op, each output as nested aclnn
calls over the forward kernel's own parameter names (the expression language of
`codegen.paddle_grad_identity`: numbers, host steps over attributes, scratches shaped like
the input they are computed from), with another form for when an optional input is not
given (`absent`), with the upstream kernel and Paddle's documented formula as evidence. It
applies when the API asked for is one of the composition's calls or one the op's adapter
calls (opdb), and every leaf binds; else the kernel renders as before.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from codegen.paddle_grad_identity import (Node, _calls, _emit, _every_call, _input_kinds,
                                          _kinds_fit, _leaves, _rebind, parse_expr)

COMPOSITIONS = (Path(__file__).resolve().parent.parent / "opdb" / "sources"
                / "forward_compositions.yaml")
ATTR_KINDS = ("int_array", "scalar", "float", "int", "bool")


@dataclass(frozen=True)
class Composition:
    forward_api: str                        # the phi op (named like an identity's forward)
    outs: tuple[tuple[str, Node], ...]      # (output, its expression over phi names)
    absent: tuple[tuple[str, tuple], ...]   # (optional input, its forms when not given)
    inputs: tuple[str, ...]                 # the kernel's tensor inputs
    evidence: str
    read: tuple[str, ...] = ()
    step_apis: tuple = field(default=(), compare=False)
    step: bool = True                       # the API asked for is one of the calls

    def note(self, requested: str, op: str) -> str:
        what = (f"{requested} is one call of `{op}`'s composition" if self.step else
                f"upstream's `{op}` calls {requested} (opdb), which is no call of its "
                "composition")
        return (f"{what}; the kernel computes all of it "
                f"(opdb/sources/forward_compositions.yaml: {self.evidence})")

    def body_lines(self) -> list[str]:
        """Each output allocated, then the composition; an optional input's branch first
        when it is given (bound to a local reference), its `absent` forms else."""
        ctypes = {a.name: tuple("out" if p.role == "output" else p.ctype.strip()
                                for p in a.params if p.role in ("input", "output"))
                  for a in self.step_apis}
        lines = [f"opgen_alloc<T>(dev_ctx, {o});" for o, _ in self.outs]
        opt = dict(self.absent)
        if not opt:
            return lines + self._forms(self.outs, {}, ctypes)
        (name, forms), = opt.items()
        ref = f"{name}_v"
        lines += [f"if ({name}) {{  // given",
                  f"  const phi::DenseTensor& {ref} = *{name}.get_ptr();"]
        lines += ["  " + x for x in self._forms(self.outs, {name: ref}, ctypes)]
        lines += ["} else {"]
        lines += ["  " + x for x in self._forms(forms, {}, ctypes)]
        return lines + ["}"]

    def _forms(self, outs, views: dict, ctypes: dict) -> list[str]:
        lines: list[str] = []
        counter = [0]
        for o, expr in outs:
            lines += _emit(expr, f"*{o}", o, f"(*{o})", dict(views), counter, top=True,
                           shaped=set(self.inputs), ctypes=ctypes)[1]
        return lines


@functools.lru_cache(maxsize=1)
def compositions() -> dict[str, dict]:
    return load_compositions(COMPOSITIONS.read_text(), COMPOSITIONS.name)


def load_compositions(text: str, where: str = "forward_compositions.yaml") -> dict[str, dict]:
    """The table, validated: a malformed entry is a one-line error naming it."""
    from opdb.errors import OpscanError
    data = yaml.safe_load(text) or {}
    out = {}
    for i, e in enumerate(data.get("compositions") or []):
        name = f"{where}: compositions[{i}] ({e.get('op') if isinstance(e, dict) else e})"
        if not isinstance(e, dict) or set(e) - {"op", "outs", "absent", "evidence"}:
            raise OpscanError(f"{name}: unknown keys",
                              hint="an entry has op, outs, evidence and optional absent")
        if not e.get("op") or not e.get("evidence") or e["op"] in out:
            raise OpscanError(f"{name}: needs a phi `op` (once) and `evidence`")
        outs, absent = e.get("outs"), e.get("absent") or {}
        if not isinstance(outs, dict) or not outs or not isinstance(absent, dict) or len(
                absent) > 1 or any(not isinstance(v, dict) or set(v) != set(outs)
                                   for v in absent.values()):
            raise OpscanError(f"{name}: `outs` maps each output to its expression; `absent` "
                              "one optional input to the same outputs' forms without it")
        try:
            parsed = {k: parse_expr(str(v)) for k, v in outs.items()}
            forms = {k: {o: parse_expr(str(x)) for o, x in v.items()}
                     for k, v in absent.items()}
        except ValueError as exc:
            raise OpscanError(f"{name}: {exc}") from None
        out[e["op"]] = {"outs": parsed, "absent": forms, "evidence": e["evidence"]}
    return out


def forward_composition(db, api, op) -> Composition | None:
    """The composition to render for the forward kernel `op` asked for with `api`, or None."""
    from codegen.paddle_target import fw_params

    ent = compositions().get(op.name)
    if ent is None or op.kind == "backward":
        return None
    fp = {f.name: f for f in fw_params(op)}
    kinds = {n: f.kind for n, f in fp.items() if f.kind in ATTR_KINDS and not f.is_output}
    ins = [n for n, f in fp.items() if f.kind == "tensor" and not f.is_output]
    outs = {n for n, f in fp.items() if f.kind == "tensor" and f.is_output}
    if set(ent["outs"]) != outs:
        return None
    forms = [ent["outs"]] + list(ent["absent"].values())
    for opt in ent["absent"]:
        if opt not in fp or not fp[opt].optional:
            return None  # `absent` names an optional input of the kernel
    known = set(ins) | set(kinds)
    try:
        bound = [{o: _rebind(x, {v: v for v in _leaves(x)}, kinds) for o, x in f.items()}
                 for f in forms]
    except KeyError:
        return None
    if any(not set(_leaves(x)) <= known for f in bound for x in f.values()):
        return None
    # an optional input is read in its branch only
    optional = {n for n in ins if fp[n].optional}
    if any(set(_leaves(x)) & (optional - set(ent["absent"])) for f in bound
           for x in f.values()) or any(set(_leaves(x)) & set(ent["absent"])
                                       for f in bound[1:] for x in f.values()):
        return None
    pairs = [(o, x) for f in bound for o, x in f.items()]
    steps = sorted({c for _, x in pairs for c in _calls(x)})
    adapter = {m.aclnn for m in db.mappings(framework="paddle", op=op.name)
               if m.evidence == "adapter"}
    if api.name not in steps and api.name not in adapter:
        return None
    step_apis = []
    for s in steps:
        sa = db.aclnn_api(s)
        if sa is None or any(c == s and not _kinds_fit(k, _input_kinds(sa))
                             for c, k in _every_call(pairs)):
            return None
        step_apis.append(sa)
    read = {x for _, e in pairs for x in _leaves(e)} | outs | set(ent["absent"])
    return Composition(op.name, tuple(sorted(bound[0].items())),
                       tuple((k, tuple(sorted(f.items())))
                             for k, f in zip(ent["absent"], bound[1:])),
                       tuple(ins), ent["evidence"].split(":")[0], tuple(sorted(read)),
                       tuple(step_apis), api.name in steps)
