"""paddle target: a grad kernel whose forward is an element-wise aclnn API with a known
gradient identity, asked for with one step of that identity, is rendered as the whole
identity (every gradient, summed back over the broadcast axes).

Random draws of PaddleCustomDevice kernels (docs/opgen.md, batches H–K) keep meeting grad
kernels whose upstream adapter composes element-wise calls: `divide_grad` (dout / y and
-out * dout / y, each reduce-summed over the broadcast axes), `add_grad` (a copy or a
ReduceSum of dout), `reciprocal_grad` (-dout * out * out), `abs_grad` (dout * sign(x)).
Asked for one of those steps (`opgen aclnn aclnnNeg --op divide_grad`), opgen used to
render the step alone as the kernel (-x into dx). The facts used here:
- Paddle's backward YAML (`opdb/sources/paddle/yaml`): the grad kernel's forward op;
- opdb: the forward op's primary aclnn API and the phi tensors its parameters take
  (`codegen.argmap.map_args` on the forward kernel's signature: aclnnDiv's self <- x,
  other <- y, out <- out), so the grad kernel's tensors of the same names are bound;
- `opdb/sources/grad_identities.yaml`: per forward aclnn API, the gradient of each tensor
  input as element-wise aclnn calls (reviewed, with Paddle's own grad functors as
  evidence). The identity is keyed by the forward API, never by a kernel name, so every
  grad kernel whose forward maps to that API gets it.
The gradient is summed back to its input's shape over the axes the forward broadcast it
along, aligned at Paddle's `axis` (-1: trailing), by upstream's AddGradKernel rule. An
identity that cannot be bound (a leaf the grad kernel does not take, a grad output it
does not name, a forward constant the identity assumes and the adapter does not pass)
does not apply: the kernel renders as before.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

IDENTITIES = Path(__file__).resolve().parent.parent / "opdb" / "sources" / "grad_identities.yaml"
REDUCE_API = "aclnnReduceSum"  # the step that sums a broadcast gradient back
GRAD_NAMES = ("{}_grad", "d{}", "d_{}")  # Paddle's grad spellings: x_grad, dx, d_x


# host steps over a forward attribute (a lower-case call in an expression), each with the
# kind of attribute it reads: the gradient of aclnnRoll rolls back by the negated shifts
# (an int list), that of aclnnPowTensorScalar raises to the exponent less one (a Scalar);
# `inverse_count(dim)`: 1 / the element count of the forward's input over the reduced dims
# (every dim when the list is empty or the grad kernel's `reduce_all` is set), a Scalar
HOST_STEPS = {"negated": "int_array", "decremented": "scalar", "inverse_count": "int_array"}
# what each host step gives: a value of that kind
HOST_RESULT = {"negated": "int_array", "decremented": "scalar", "inverse_count": "scalar"}
# shape-changing tensor steps (lower-case, several arguments of these kinds), each giving a
# tensor: `unreduced(grad, dim)`, a view of a reduction's incoming gradient with the
# reduced dims of the forward's input kept as 1 (so that a multiplication broadcasts it
# back); `filled(self, value)`, a tensor shaped like `self` filled with a Scalar
# (aclnnInplaceFillScalar)
TENSOR_STEPS = {"unreduced": ("tensor", "int_array"), "filled": ("tensor", "scalar"),
                "sliced": ("tensor", "tensor_list", "scalar")}
FILL_API = "aclnnInplaceFillScalar"  # the call of `filled`
# `sliced(grad, tensors, dim)`: the gradient of each member of a tensor list the forward
# joined along `dim`, the incoming gradient sliced at the running offset of the members'
# extents (members with no elements get none and take no room)
SLICE_API = "aclnnSliceV2"
LIST_KINDS = ("tensor", "tensor_list")
# the kinds of phi attribute a leaf may bind to: an int list, a phi::Scalar
ATTR_KINDS = ("int_array", "scalar")


@dataclass(frozen=True)
class Node:
    """One call of an identity (`api` over `args`) or a leaf (`api` empty, `leaf` set)."""
    api: str = ""
    args: tuple["Node", ...] = ()
    leaf: str = ""
    const: str = ""  # a number passed as an aclScalar (`Muls(out, 2)`)
    host: str = ""   # a host step over an attribute (`negated(shifts)`)
    attr: str = ""   # a leaf (or host step) bound to a forward attribute: its kind
    #                  (`int_array`, `scalar`); empty for a tensor


@dataclass(frozen=True)
class GradIdentity:
    forward_op: str
    forward_api: str
    incoming: str                        # the grad kernel's incoming gradient (dout)
    grads: tuple[tuple[str, Node], ...]  # (grad output, its expression over phi names)
    axis: str                            # the kernel's broadcast `axis` attribute, or ""
    broadcast: bool                      # the forward takes several tensors
    steps: tuple[str, ...]               # every aclnn API the body calls
    evidence: str
    read: tuple[str, ...] = field(default=())  # the kernel params the body reads
    inputs: tuple[str, ...] = ()         # the forward's tensor inputs (may broadcast)
    step_apis: tuple = field(default=(), compare=False)  # the AclnnApi of every step
    reduce_all: str = ""                 # the grad kernel's bool `reduce_all`, or ""
    attr_kinds: tuple = field(default=(), compare=False)  # (attribute, its phi kind)

    def note(self, requested: str, op: str) -> str:
        return (f"{requested} is one step of the gradient of {self.forward_api} (the "
                f"forward of `{op}`); the kernel computes the whole identity "
                f"(opdb/sources/grad_identities.yaml: {self.evidence})")


def parse_expr(text: str) -> Node:
    """`Neg(Mul(grad, out))` -> nested Nodes (call names get the `aclnn` prefix)."""
    toks = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9]+(?:\.[0-9]+)?|[(),]", text)
    if "".join(toks) != re.sub(r"\s+", "", text):
        raise ValueError(f"bad gradient expression {text!r}")
    pos = 0

    def peek() -> str:
        return toks[pos] if pos < len(toks) else ""

    def node() -> Node:
        nonlocal pos
        if re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?", peek()):
            pos += 1
            return Node(const=toks[pos - 1])
        if pos >= len(toks) or not re.match(r"[A-Za-z_]", toks[pos]):
            raise ValueError(f"bad gradient expression {text!r}")
        name = toks[pos]
        pos += 1
        if pos < len(toks) and toks[pos] == "(":
            pos += 1
            args = [node()]
            while peek() == ",":
                pos += 1
                args.append(node())
            if peek() != ")":
                raise ValueError(f"bad gradient expression {text!r}")
            pos += 1
            if name[0].islower() and name in TENSOR_STEPS:
                if len(args) != len(TENSOR_STEPS[name]):
                    raise ValueError(f"bad step {name!r} in {text!r} (takes "
                                     f"{', '.join(TENSOR_STEPS[name])})")
                return Node(host=name, args=tuple(args))
            if name[0].islower():
                if name not in HOST_STEPS or len(args) != 1 or args[0].api or args[0].const:
                    raise ValueError(f"bad host step {name!r} in {text!r} (known: "
                                     f"{', '.join(sorted(HOST_STEPS))}, over one attribute;"
                                     f" {', '.join(sorted(TENSOR_STEPS))})")
                return Node(host=name, args=tuple(args))
            return Node(api="aclnn" + name, args=tuple(args))
        return Node(leaf=name)

    out = node()
    if pos != len(toks):
        raise ValueError(f"bad gradient expression {text!r}")
    return out


@functools.lru_cache(maxsize=1)
def identities() -> dict[str, dict]:
    return load_identities(IDENTITIES.read_text(), IDENTITIES.name)


def load_identities(text: str, where: str = "grad_identities.yaml") -> dict[str, dict]:
    """The table, validated: a malformed entry is a one-line error naming it."""
    from opdb.errors import OpscanError
    data = yaml.safe_load(text) or {}
    out = {}
    for i, e in enumerate(data.get("identities") or []):
        name = f"{where}: identities[{i}] ({e.get('api') if isinstance(e, dict) else e})"
        if not isinstance(e, dict) or set(e) - {"api", "requires", "grads", "evidence"}:
            raise OpscanError(f"{name}: unknown keys",
                              hint="an entry has api, grads, evidence and optional requires")
        if not str(e.get("api", "")).startswith("aclnn") or not e.get("evidence"):
            raise OpscanError(f"{name}: needs an aclnn `api` and `evidence`")
        if e["api"] in out:
            raise OpscanError(f"{name}: {e['api']} is listed twice")
        grads = e.get("grads")
        if not isinstance(grads, dict) or not grads:
            raise OpscanError(f"{name}: `grads` maps each tensor input to its gradient")
        try:
            parsed = {k: parse_expr(str(v)) for k, v in grads.items()}
        except ValueError as exc:
            raise OpscanError(f"{name}: {exc}") from None
        out[e["api"]] = {"requires": dict(e.get("requires") or {}), "grads": parsed,
                         "evidence": e["evidence"]}
    return out


def _calls(n: Node) -> list[str]:
    own = ([n.api] if n.api else [FILL_API] if n.host == "filled"
           else [SLICE_API] if n.host == "sliced" else [])
    return own + [a for c in n.args for a in _calls(c)]


def _leaves(n: Node) -> list[str]:
    if n.const:
        return []
    return [n.leaf] if not (n.api or n.host) else [x for c in n.args for x in _leaves(c)]


def _grad_of(name: str, names: set[str]) -> str | None:
    return next((g.format(name) for g in GRAD_NAMES if g.format(name) in names), None)


def _forward_of(kernel: str) -> str | None:
    from codegen.testspec import _catalog
    cat = _catalog()
    fwd = {cat.op(n).forward for n in cat.ops_for_kernel(kernel)
           if cat.op(n) is not None and cat.op(n).entry == "backward_op"}
    fwd.discard("")
    return fwd.pop() if len(fwd) == 1 else None


def _inplace_targets(kernel: str) -> set[str]:
    from codegen.testspec import _catalog
    cat = _catalog()
    # the YAML spells grads `x_grad`; the kernel may say `dx`: the forward name is kept
    return {re.sub(r"_grad$", "", dst) for n in cat.ops_for_kernel(kernel)
            if cat.op(n) is not None for _, dst in cat.op(n).inplace}


def _attr_names(fwd: str, fwd_params, grad: str, grad_params) -> dict[str, str]:
    """The forward kernel's attribute names -> the grad kernel's, through Paddle's op
    YAML: a kernel's attributes are its op's non-tensor YAML args in order (`mean`'s
    kernel names YAML `axis` `dims`, `mean_grad`'s names it `axes`), so two attributes
    answering to the same YAML arg are one value. Only where both kernels have as many
    attributes as their op has non-tensor args; else empty (same names only)."""
    from codegen.testspec import _catalog
    cat = _catalog()

    def yaml_attrs(name: str) -> list[str] | None:
        ops = [cat.op(n) for n in cat.ops_for_kernel(name)]
        ops = [o for o in ops if o is not None]
        if len(ops) != 1:
            return None
        return [a.name for a in ops[0].args if not a.type.startswith("Tensor")]

    def kernel_attrs(params) -> list[str]:
        return [f.name for f in params
                if not f.is_output and f.kind not in ("tensor", "tensor_list")]

    fy, gy = yaml_attrs(fwd), yaml_attrs(grad)
    fk, gk = kernel_attrs(fwd_params), kernel_attrs(grad_params)
    if fy is None or gy is None or len(fy) != len(fk) or len(gy) != len(gk):
        return {}
    by_yaml = dict(zip(gy, gk))
    return {k: by_yaml[y] for k, y in zip(fk, fy) if y in by_yaml}


def _requires_met(amap, requires: dict) -> bool:
    """aclnnAdd's `alpha` 1: the forward kernel passes that constant (a reviewed rule)."""
    for name, value in requires.items():
        p = next((p for p in amap.params if p.aclnn.name == name), None)
        if p is None or p.fw is not None or p.rule is None:
            return False
        lines = dict(p.rule.code).get("paddle", ())
        if not any(re.search(rf"=\s*{re.escape(str(value))}(\.0)?f?;", ln) for ln in lines):
            return False
    return True


def grad_identity(db, api, op) -> GradIdentity | None:
    """The identity to render for the grad kernel `op` asked for with `api`, or None."""
    from codegen.argmap import map_args
    from codegen.paddle_target import fw_params
    from codegen.resolve import _top_mapped

    if op.kind != "backward" or re.search(r"(Backward|Grad)(V\d+)?$", api.name):
        return None
    fwd = _forward_of(op.name)
    fop = db.framework_op("paddle", fwd) if fwd else None
    if fop is None:
        return None
    table = identities()
    fapi_name = next((a for a in _top_mapped(db, "paddle", fop) if a in table), None)
    fapi = db.aclnn_api(fapi_name) if fapi_name else None
    if fapi is None:
        return None
    ent = table[fapi_name]
    fwp = fw_params(fop)
    amap = map_args(fapi, fwp, "paddle")
    if not _requires_met(amap, ent["requires"]):
        return None
    bind = {p.aclnn.name: p.fw.name for p in amap.params
            if p.fw is not None and p.fw.kind in LIST_KINDS}
    # the forward's int-list and Scalar attributes (aclnnRoll's shifts, dims;
    # aclnnPowTensorScalar's exponent) bind to the grad kernel's attributes of the same
    # phi name and kind
    attrs = {p.aclnn.name: p.fw.name for p in amap.params
             if p.fw is not None and p.fw.kind in ATTR_KINDS and p.rule is None}
    outs = [p.aclnn.name for p in amap.params if p.aclnn.role == "output"]
    gp = {f.name: f for f in fw_params(op)}
    ins = {n for n, f in gp.items() if not f.is_output and f.kind in LIST_KINDS}
    gouts = {n for n, f in gp.items() if f.is_output and f.kind in LIST_KINDS}
    lists = {n: "tensor_list" for n, f in gp.items() if f.kind == "tensor_list"}
    if len(outs) != 1 or outs[0] not in bind:
        return None
    incoming = _grad_of(bind[outs[0]], ins)
    if incoming is None:
        return None
    leaf_map = {"grad": incoming}
    for a, n in bind.items():
        if n in ins:
            leaf_map[a] = n
    fkind = {p.fw.name: p.fw.kind for p in amap.params if p.fw is not None}
    renamed = _attr_names(fop.name, fwp, op.name, list(gp.values()))
    attr_leaves = {}
    for a, n in attrs.items():
        g = n if n in gp else renamed.get(n, "")
        if g in gp and not gp[g].is_output and gp[g].kind == fkind[n]:
            attr_leaves[a] = g
    leaf_map.update(attr_leaves)
    grads = []
    for a, expr in ent["grads"].items():
        if a not in bind:
            return None
        g = _grad_of(bind[a], gouts)
        if g is None:
            return None
        if any(x not in leaf_map for x in _leaves(expr)):
            return None
        try:
            grads.append((g, _rebind(expr, leaf_map,
                                     {**lists, **{n: gp[n].kind for n in attr_leaves.values()}})))
            if (g in lists) != (expr.host == "sliced"):
                return None  # a list gradient is a slice per member, and only it
            if _shape_steps(expr) and len(ent["grads"]) != 1:
                return None  # reduction steps are written for one-input forwards
        except KeyError:
            return None
    if {g for g, _ in grads} != gouts:
        return None  # a gradient the identity does not give
    # a gradient written in place of the incoming one (backward YAML `inplace: (out_grad
    # -> x_grad)`, add_grad) is computed last: the others still read the incoming gradient
    last = {_grad_of(b, gouts) for b in _inplace_targets(op.name)}
    grads.sort(key=lambda ge: ge[0] in last)
    broadcast = len(ent["grads"]) > 1
    steps = sorted({c for _, e in grads for c in _calls(e)}
                   | ({REDUCE_API, "aclnnInplaceCopy"} if broadcast else set()))
    asked = api.name.replace("Inplace", "", 1) if api.name.startswith("aclnnInplace") else api.name
    if asked not in steps and api.name in steps and api.name != "aclnnInplaceCopy":
        asked = api.name  # an in-place step of the identity itself (aclnnInplaceFillScalar)
    if asked not in steps or asked == "aclnnInplaceCopy":
        return None  # not a step of this identity: the caller asked for something else
    arity = _arity_checked(grads)
    step_apis = []
    for s in steps:
        sa = db.aclnn_api(s)
        if sa is None or (s in arity and arity[s] != _input_kinds(sa)):
            return None
        step_apis.append(sa)
    axis = "axis" if "axis" in gp and gp["axis"].kind in ("int", "scalar") else ""
    read = {incoming} | {x for _, e in grads for x in _leaves(e)} | {g for g, _ in grads}
    if axis:
        read.add("axis")
    # a reduction's steps read the grad kernel's `reduce_all` (every dim when set, as
    # codegen.paddle_callsite.reduce_all_dims for the forward)
    shape = any(_shape_steps(e) for _, e in grads)
    reduce_all = ("reduce_all" if shape and "reduce_all" in gp
                  and gp["reduce_all"].kind == "bool" else "")
    if reduce_all:
        read.add(reduce_all)
    return GradIdentity(fop.name, fapi_name, incoming, tuple(grads), axis, broadcast,
                        tuple(steps), ent["evidence"].split(":")[0], tuple(sorted(read)),
                        tuple(sorted({bind[a] for a in ent["grads"]})), tuple(step_apis),
                        reduce_all, tuple(sorted((n, gp[n].kind) for n in attr_leaves.values())))


def _shape_steps(n: Node) -> bool:
    """Whether `n` has a step over a reduction's dims (`unreduced`, `inverse_count`)."""
    return n.host in ("unreduced", "inverse_count") or any(_shape_steps(c) for c in n.args)


def _input_kinds(api) -> tuple[str, ...]:
    """An API's inputs as the identity spells them: `tensor`, `scalar` or `int_array`."""
    return tuple("scalar" if "Scalar" in p.ctype else "tensor" if "Tensor" in p.ctype
                 else "int_array" if "IntArray" in p.ctype
                 else p.ctype for p in api.params if p.role == "input")


def _arity_checked(grads) -> dict[str, tuple[str, ...]]:
    """Every call's argument kinds (`tensor`/`scalar`), to check against the API."""
    out: dict[str, tuple[str, ...]] = {}

    def walk(n: Node) -> None:
        if n.api:
            out[n.api] = tuple("scalar" if c.const else c.attr or "tensor" for c in n.args)
            for c in n.args:
                walk(c)
    for _, e in grads:
        walk(e)
    return out


def _rebind(n: Node, leaf_map: dict[str, str], attrs: dict[str, str] | None = None) -> Node:
    """Leaves renamed to the grad kernel's phi names; `attrs`: phi attribute -> kind."""
    attrs = attrs or {}
    if n.const:
        return n
    if not (n.api or n.host):
        return Node(leaf=leaf_map[n.leaf], attr=attrs.get(leaf_map[n.leaf], ""))
    args = tuple(_rebind(c, leaf_map, attrs) for c in n.args)
    if n.host in TENSOR_STEPS:
        for c, kind in zip(args, TENSOR_STEPS[n.host]):
            if (c.attr or "tensor") != kind and not (kind == "scalar" and c.const):
                raise KeyError(n.host)  # an argument of another kind: no identity
        return Node(host=n.host, args=args)
    if n.host and any(c.attr != HOST_STEPS[n.host] for c in args):
        raise KeyError(n.host)  # a host step over a tensor or another kind: no identity
    return Node(api=n.api, host=n.host, args=args, attr=HOST_RESULT.get(n.host, ""))


def body_lines(gi: GradIdentity, views: dict[str, str] | None = None) -> list[str]:
    """The kernel body: every gradient Paddle asks for (nullptr when not), computed at the
    incoming gradient's shape and summed back over the broadcast axes."""
    d = gi.incoming
    lines: list[str] = []
    views = {}
    used = {x for _, e in gi.grads for x in _leaves(e)} & set(gi.inputs)
    if gi.broadcast and gi.axis:
        for n in sorted(used):
            v = f"{n}_al"
            views[n] = v
            lines += [
                f"phi::DenseTensor {v}({n});  // `axis`: Paddle aligns {n}'s dims at `axis`, "
                "aclnn at the last dim",
                f"if ({n}.dims().size() < {d}.dims().size()) {{",
                f"  const int64_t at = {gi.axis} == -1 ? {d}.dims().size() - {n}.dims().size()"
                f" : {gi.axis};",
                f"  std::vector<int64_t> dims = phi::vectorize({n}.dims());",
                f"  dims.insert(dims.end(), {d}.dims().size() - at - {n}.dims().size(), 1);",
                f"  {v}.Resize(phi::make_ddim(dims));",
                "}"]
    for g, expr in gi.grads:
        if expr.host == "sliced":
            lines += _sliced(g, expr, dict(gi.attr_kinds))
            continue
        lines += [f"if ({g}) {{  // nullptr when Paddle does not need this gradient"]
        body: list[str] = []
        if gi.broadcast:
            body += [f"const bool {g}_same = {g}->dims() == {d}.dims();",
                     f"if (!{g}_same && {g}->IsSharedWith({d})) {{  // in place "
                     f"({d} -> {g}): the other gradients still read {d}",
                     f"  const phi::DDim {g}_dims = {g}->dims();",
                     f"  {g}->clear();",
                     f"  {g}->Resize({g}_dims);",
                     "}"]
        body += [f"opgen_alloc<T>(dev_ctx, {g});"]
        if not expr.api:  # the gradient is a tensor itself: a copy, or its sum
            src = views.get(expr.leaf, expr.leaf)
            if gi.broadcast:
                body += [f"if ({g}_same) {{",
                         f"  EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *{g}, {src});", "} else {"]
                body += ["  " + x for x in _reduce(g, d, src, gi.axis)] + ["}"]
            else:
                body += [f"EXEC_NPU_CMD(aclnnInplaceCopy, dev_ctx, *{g}, {src});"]
        else:
            full = f"{g}_full"
            if gi.broadcast:
                body += [f"phi::DenseTensor {full};  // the gradient at {d}'s shape",
                         f"if ({g}_same) {{", f"  {full} = *{g};", "} else {",
                         f"  {full}.set_meta({d}.meta());",
                         f"  dev_ctx.Alloc(&{full}, {full}.dtype());", "}"]
                root = full
            else:
                root = f"*{g}"
            counter = [0]
            shaped = set(gi.inputs) if gi.broadcast else set()
            red = (gi.inputs[0] if len(gi.inputs) == 1 else "", gi.reduce_all)
            body += _emit(expr, root, g, d, views, counter, top=True, shaped=shaped,
                          red=red)[1]
            if gi.broadcast:
                body += [f"if (!{g}_same) {{"] + ["  " + x for x in
                                                   _reduce(g, d, full, gi.axis)] + ["}"]
        lines += ["  " + x for x in body] + ["}"]
    return lines


def _emit(n: Node, root: str, g: str, d: str, views: dict, counter: list,
          top: bool = False, shaped: set[str] = frozenset(),
          red: tuple[str, str] = ("", "")) -> tuple[str, list[str]]:
    """The calls of `n` into `root` (`top`) or a scratch tensor. A scratch is shaped like
    the incoming gradient `d`, except where every tensor it is computed from is one
    forward input of `shaped` (the inputs of a broadcasting forward), whose shape it then
    has: `Subs(exponent, 1, 1)` of elementwise_pow_grad is y - 1 at y's shape (upstream
    allocates it as y), which a scratch at dout's shape would not accept. `red`: the
    forward input a reduction's steps are shaped by, and the grad kernel's `reduce_all`."""
    ref, lines, _ = _emit_shaped(n, root, g, d, views, counter, top, shaped, red)
    return ref, lines


def _reduced_dims(src: str, ref: str, reduce_all: str, h: str) -> list[str]:
    """`{h}_red`: the dims of `ref` a reduction over the attribute `src` reduced,
    non-negative: every dim when the list is empty or `reduce_all` is set (Paddle's
    reductions: an empty list reduces every dim)."""
    every = f"{h}_red.empty()" + (f" || {reduce_all}" if reduce_all else "")
    return [f"std::vector<int64_t> {h}_red = phi::IntArray({src}).GetData();",
            f"if ({every}) {{  // every dim of `{ref}`",
            f"  {h}_red.clear();",
            f"  for (int64_t ax = 0; ax < {ref}.dims().size(); ++ax) {h}_red.push_back(ax);",
            "}",
            f"for (int64_t& ax : {h}_red) {{",
            f"  if (ax < 0) ax += {ref}.dims().size();",
            "}"]


def _emit_shaped(n: Node, root: str, g: str, d: str, views: dict, counter: list,
                 top: bool, shaped: set[str], red: tuple[str, str] = ("", "")
                 ) -> tuple[str, list[str], str | None]:
    """(reference, lines, the forward input whose shape the value has, or None: d's)."""
    ref, reduce_all = red
    if n.host in ("inverse_count", "unreduced") and not ref:
        raise ValueError(f"{n.host} needs the forward's one input")
    if n.host == "inverse_count":  # 1 / the count of the reduced elements, on the host
        counter[0] += 1
        h = f"{g}_h{counter[0]}"
        src = n.args[0].leaf
        return h, _reduced_dims(src, ref, reduce_all, h) + [
            f"int64_t {h}_n = 1;",
            f"for (int64_t ax : {h}_red) {h}_n *= {ref}.dims()[ax];",
            f"phi::Scalar {h}(1.0 / static_cast<double>({h}_n));  "
            f"// 1 / the elements `{src}` reduces"], ""
    if n.host == "unreduced":  # a view of the reduced gradient, the reduced dims kept
        counter[0] += 1
        v = f"{g}_v{counter[0]}"
        t, src = n.args[0].leaf, n.args[1].leaf
        return v, _reduced_dims(src, ref, reduce_all, v) + [
            f"std::vector<int64_t> {v}_dims = phi::vectorize({ref}.dims());",
            f"for (int64_t ax : {v}_red) {v}_dims[ax] = 1;",
            f"phi::DenseTensor {v}({views.get(t, t)});  // `{t}` with the dims `{src}` "
            "reduced kept as 1: broadcast back by the next call",
            f"{v}.Resize(phi::make_ddim({v}_dims));"], None
    if n.host == "filled":  # a tensor like the first argument, filled with the second
        t = n.args[0].leaf
        val, lines, _ = _emit_shaped(n.args[1], root, g, d, views, counter, False, shaped, red)
        if top:
            dst = root
        else:
            counter[0] += 1
            dst = f"{g}_t{counter[0]}"
            like = views.get(t, t)
            lines += [f"phi::DenseTensor {dst};", f"{dst}.set_meta({like}.meta());",
                      f"dev_ctx.Alloc(&{dst}, {dst}.dtype());"]
        return dst, lines + [f"EXEC_NPU_CMD({FILL_API}, dev_ctx, {dst}, {val});"], None
    if n.const:
        counter[0] += 1
        c = f"{g}_c{counter[0]}"
        return c, [f"phi::Scalar {c}({float(n.const)});"], ""
    if n.host == "decremented":  # a Scalar attribute less one, on the host
        counter[0] += 1
        h = f"{g}_h{counter[0]}"
        src = n.args[0].leaf
        return h, [f"phi::Scalar {h}({src}.to<double>() - 1.0);  // {src} - 1"], ""
    if n.host:  # negated(attr): the attribute's values negated, on the host
        counter[0] += 1
        h = f"{g}_h{counter[0]}"
        src = n.args[0].leaf
        return h, [f"std::vector<int64_t> {h} = phi::IntArray({src}).GetData();",
                   f"for (int64_t& v : {h}) v = -v;  // {src}, negated"], ""
    if not n.api:
        if n.attr:
            return n.leaf, [], ""
        return views.get(n.leaf, n.leaf), [], (n.leaf if n.leaf in shaped else None)
    lines: list[str] = []
    refs = []
    shapes = set()
    for i, c in enumerate(n.args):
        # a top-level call whose first argument is a fill of its own shape fills the
        # result itself and computes in place (upstream's MeanGradKernel: x_grad filled
        # with 1 / n, then multiplied by the gradient view into x_grad)
        into = top and i == 0 and c.host == "filled" and c.args[0].leaf in shaped | {ref}
        r, ls, sh = _emit_shaped(c, root, g, d, views, counter, into, shaped, red)
        refs.append(r)
        lines += ls
        if sh != "":  # a tensor (numbers and attributes have no shape)
            shapes.add(sh)
    own = shapes.pop() if len(shapes) == 1 else None
    if top:
        dst = root
    else:
        counter[0] += 1
        dst = f"{g}_t{counter[0]}"
        like = views.get(own, own) if own else d
        lines += [f"phi::DenseTensor {dst};", f"{dst}.set_meta({like}.meta());",
                  f"dev_ctx.Alloc(&{dst}, {dst}.dtype());"]
    lines += [f"EXEC_NPU_CMD({n.api}, dev_ctx, {', '.join(refs)}, {dst});"]
    return dst, lines, own


def _sliced(g: str, n: Node, kinds: dict[str, str]) -> list[str]:
    """Each member of the list gradient `g`: the incoming gradient sliced along the dim
    at the running offset of the forward members' extents (PaddleCustomDevice 77090b64
    concat_kernel.cc ConcatGradKernel: aclnnSliceV2 per non-empty output, steps 1)."""
    d, xs, dim = (c.leaf for c in n.args)
    at = (f"{dim}.to<int64_t>()" if kinds.get(dim) == "scalar"
          else f"static_cast<int64_t>({dim})")
    return [f"{{  // each `{g}` member: `{d}` sliced along `{dim}` at the running offset",
            f"  int64_t {g}_dim = {at};",
            f"  if ({g}_dim < 0) {g}_dim += {xs}[0]->dims().size();",
            f"  std::vector<int64_t> {g}_axes = {{{g}_dim}};",
            f"  std::vector<int64_t> {g}_steps = {{1}};",
            f"  int64_t {g}_offset = 0;",
            f"  for (size_t j = 0; j < {g}.size(); ++j) {{",
            f"    if ({g}[j] && {g}[j]->numel() != 0) {{  // nullptr: not needed",
            f"      opgen_alloc<T>(dev_ctx, {g}[j]);",
            f"      std::vector<int64_t> {g}_starts = {{{g}_offset}};",
            f"      std::vector<int64_t> {g}_ends = {{{g}_offset + {xs}[j]->dims()[{g}_dim]}};",
            f"      EXEC_NPU_CMD({SLICE_API}, dev_ctx, {d}, {g}_starts, {g}_ends, {g}_axes, "
            f"{g}_steps, *{g}[j]);",
            "    }",
            f"    if ({xs}[j]->numel() != 0) {g}_offset += {xs}[j]->dims()[{g}_dim];",
            "  }",
            "}"]


def _reduce(g: str, d: str, src: str, axis: str) -> list[str]:
    """Sum `src` (at `d`'s shape) over the axes `d` broadcast `*g` along, into `*g`:
    PaddleCustomDevice elementwise_add_kernel.cc AddGradKernel's rule (an axis outside
    g's aligned dims, or where g has 1 and d more), keepDims false into a view of g."""
    at = (f"({axis} == -1 ? {d}.dims().size() - {g}_rank : {axis})" if axis
          else f"{d}.dims().size() - {g}_rank")
    return [f"// sum the gradient over the axes the forward broadcast `{g}` along",
            f"const int64_t {g}_rank = {g}->dims().size();",
            f"const int64_t {g}_at = {g}_rank < {d}.dims().size() ? {at} : 0;",
            f"std::vector<int64_t> {g}_axes, {g}_kept;",
            f"for (int64_t ax = 0; ax < {d}.dims().size(); ++ax) {{",
            f"  if (ax < {g}_at || ax >= {g}_at + {g}_rank ||",
            f"      ({d}.dims()[ax] > 1 && {g}->dims()[ax - {g}_at] == 1)) {{",
            f"    {g}_axes.push_back(ax);",
            "  } else {",
            f"    {g}_kept.push_back({d}.dims()[ax]);",
            "  }",
            "}",
            f"phi::DenseTensor {g}_view(*{g});",
            f"{g}_view.Resize(phi::make_ddim({g}_kept));",
            f"bool {g}_keep_dims = false;",
            f"aclDataType {g}_dtype = ConvertToNpuDtype({g}->dtype());",
            f"EXEC_NPU_CMD({REDUCE_API}, dev_ctx, {src}, {g}_axes, {g}_keep_dims, {g}_dtype, "
            f"{g}_view);"]
