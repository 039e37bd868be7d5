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

Since branch ws/h9m2 an entry may instead give the kernel's `body` as statements over its
parameter names (`needs`, bound by the phi signature, `a|b` the first one present): for
compositions the expression language cannot say (host reads of seeds and lengths, branches
on bool and string attributes, integer and boolean scratches, TensorArray members: warpctc,
cross_entropy_with_softmax, strided_slice_array, dropout). What stays general: the trigger
(the API asked for is one of the entry's `calls`, or one upstream's adapter of the op calls,
opdb), the binding (every need a parameter of the kernel's phi signature, else no
composition), the calls (each an aclnn API opdb declares, called with its declared number
of arguments: checked when the table is loaded) and the registration (the dtypes every
`dtype_calls` API has on the chip, in opdb; float64 too when the body computes it in
float32, `float64_as_float32`).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from codegen.paddle_grad_identity import (Node, _calls, _emit, _every_call, _input_kinds,
                                          _kinds_fit, _leaves, _rebind, parse_expr)
from opdb.ingest.cpplex import split_top_level

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


@dataclass(frozen=True)
class BodyComposition:
    """A forward kernel as a reviewed body of statements (`body` entries of the table)."""
    forward_api: str                        # the phi op
    lines: tuple[str, ...]                  # the body, bound to the kernel's names
    evidence: str
    read: tuple[str, ...] = ()              # the kernel params the body reads
    step_apis: tuple = field(default=(), compare=False)  # the `dtype_calls`' AclnnApi
    step: bool = True                       # the API asked for is one of the calls
    float64_as_float32: bool = False
    companion: bool = False                 # a grad kernel next to a composed forward
    via: str = ""                           # the forward whose composition answered

    def note(self, requested: str, op: str) -> str:
        if self.via:
            return (f"upstream's `{self.via}` (the forward of `{op}`) calls {requested}, "
                    f"which is no call of `{op}`'s composition; the kernel computes all of "
                    f"it (opdb/sources/forward_compositions.yaml: {self.evidence})")
        if self.companion:
            return (f"`{op}` is rendered next to its forward's composition, so it is its "
                    f"own composition too, not a call of {requested} "
                    f"(opdb/sources/forward_compositions.yaml: {self.evidence})")
        return Composition.note(self, requested, op)

    def body_lines(self) -> list[str]:
        return list(self.lines)


EXEC_CALL = re.compile(r"EXEC_NPU_CMD\(\s*(aclnn\w+)\s*,(.*)\)\s*;")
BODY_KEYS = {"op", "needs", "calls", "dtype_calls", "float64_as_float32", "body", "evidence"}


def _split_args(text: str) -> list[str]:
    """The top-level comma-separated arguments of a call's argument text, stripped (a
    trailing empty one dropped)."""
    parts = [p.strip() for p in split_top_level(text, "([{")]
    return parts[:-1] if parts and not parts[-1] else parts


def body_calls(lines) -> list[tuple[str, int]]:
    """Every `EXEC_NPU_CMD(aclnnX, dev_ctx, ...)` of a body: (API, its argument count)."""
    out = []
    for line in lines:
        for m in EXEC_CALL.finditer(line):
            out.append((m.group(1), len(_split_args(m.group(2))) - 1))  # less dev_ctx
    return out


def _load_body(e: dict, name: str) -> dict:
    from opdb.errors import OpscanError
    if set(e) - BODY_KEYS or not isinstance(e.get("needs"), list) or not e.get("calls") \
            or not isinstance(e.get("body"), list) or not e["body"]:
        raise OpscanError(f"{name}: a body entry has op, needs (a list), calls, body (a list "
                          "of statements), evidence and optional dtype_calls, "
                          "float64_as_float32")
    calls, dcalls = list(e["calls"]), list(e.get("dtype_calls") or [])
    used = body_calls(e["body"])
    if {a for a, _ in used} != set(calls) or not set(dcalls) <= set(calls):
        raise OpscanError(f"{name}: `calls` must list exactly the APIs the body calls "
                          f"({sorted({a for a, _ in used})}), `dtype_calls` some of them")
    return {"needs": [str(n) for n in e["needs"]], "calls": calls, "dtype_calls": dcalls,
            "arity": used, "body": [str(x) for x in e["body"]],
            "f64": bool(e.get("float64_as_float32")), "evidence": e["evidence"]}


def _asked_apis(db, kernel: str, ent: dict) -> dict[str, str]:
    """The APIs a `body` entry answers to, each with the kernel it answers for: its calls
    and those upstream's adapter of the kernel calls (opdb); for a grad kernel (Paddle's
    backward YAML names its forward) also its forward entry's, since upstream may compute
    the gradient in the forward (warpctc calls aclnnCtcLossBackward; warpctc_grad only
    multiplies)."""
    from codegen.paddle_grad_identity import _forward_of
    out: dict[str, str] = {}
    fwd = _forward_of(kernel) if kernel.endswith("_grad") else None
    fent = compositions().get(fwd) if fwd else None
    if fent is not None and "body" in fent:
        out.update(_asked_apis(db, fwd, fent))
    out.update({a: kernel for a in ent["calls"]})
    out.update({m.aclnn: kernel for m in db.mappings(framework="paddle", op=kernel)
                if m.evidence == "adapter"})
    return out


def companion_composition(db, api, gop) -> BodyComposition | None:
    """The grad kernel `gop` rendered next to a forward that got its `body` composition:
    the `body` entry of the grad kernel itself, when the table has one and it binds (the
    forward's composition decided the file; the grad's own API asked is not a call)."""
    ent = compositions().get(gop.name)
    if ent is None or "body" not in ent:
        return None
    return _body_composition(db, api, gop, ent, asked=False)


def _body_composition(db, api, op, ent: dict, asked: bool = True) -> BodyComposition | None:
    """A `body` entry bound to kernel `op`: each need the first of its `a|b` names the
    kernel's signature has (else None); each call declared in opdb with the body's number of
    arguments (else None: opdb and the table disagree, render as before)."""
    names = {p.name for p in op.params}
    bound: dict[str, str] = {}
    for need in ent["needs"]:
        hit = next((n for n in need.split("|") if n in names), None)
        if hit is None:
            return None
        bound[need.split("|")[0]] = hit
    answers = _asked_apis(db, op.name, ent) if asked else {}
    if asked and api.name not in answers:
        return None
    via = answers.get(api.name, op.name)
    apis = {}
    for call, count in ent["arity"]:
        a = apis.get(call) or db.aclnn_api(call)
        if a is None or len(a.params) != count:
            return None
        apis[call] = a
    lines = tuple(x.format(var="acl", **bound) for x in ent["body"])
    return BodyComposition(op.name, lines, ent["evidence"].split(":")[0],
                           tuple(sorted(bound.values())),
                           tuple(apis[c] for c in ent["dtype_calls"]),
                           api.name in ent["calls"], ent["f64"], not asked,
                           via if via != op.name else "")


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
        if isinstance(e, dict) and "body" in e:
            if not e.get("op") or not e.get("evidence") or e["op"] in out:
                raise OpscanError(f"{name}: needs a phi `op` (once) and `evidence`")
            out[e["op"]] = _load_body(e, name)
            continue
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
    if ent is not None and "body" in ent:
        return _body_composition(db, api, op, ent)
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
