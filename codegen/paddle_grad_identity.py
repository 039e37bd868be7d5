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
Since batch N's round (branch ws/h9p14): an entry may carry a generalized-ufunc signature
(aclnnMatmul: broadcast batch dims summed, 1-d operands promoted) and the form of each
gradient for an input the forward reads transposed (`transpose_x`); an entry may be keyed
by the forward phi op when it has no aclnn API (tile); and a grad kernel asked for with an
API its own adapter calls (opdb) that is no step still gets the whole identity.
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

from codegen.paddle_callsite import transposed_view_lines

IDENTITIES = Path(__file__).resolve().parent.parent / "opdb" / "sources" / "grad_identities.yaml"
REDUCE_API = "aclnnReduceSum"  # the step that sums a broadcast gradient back
GRAD_NAMES = ("{}_grad", "d{}", "d_{}")  # Paddle's grad spellings: x_grad, dx, d_x


# host steps over a forward attribute (a lower-case call in an expression), each with the
# kind of attribute it reads: the gradient of aclnnRoll rolls back by the negated shifts
# (an int list), that of aclnnPowTensorScalar raises to the exponent less one (a Scalar);
# `inverse_count(dim)`: 1 / the element count of the forward's input over the reduced dims
# (every dim when the list is empty or the grad kernel's `reduce_all` is set), a Scalar
HOST_STEPS = {"negated": "int_array", "decremented": "scalar", "inverse_count": "int_array",
              "complement": "number"}
# `complement(epsilon)`: 1 - a float or Scalar attribute (label_smooth's gradient scale)
NUMBER_KINDS = ("scalar", "float")  # what a `number` host step reads
# what each host step gives: a value of that kind
HOST_RESULT = {"negated": "int_array", "decremented": "scalar", "inverse_count": "scalar",
               "complement": "scalar"}
# shape-changing tensor steps (lower-case, several arguments of these kinds), each giving a
# tensor: `unreduced(grad, dim)`, a view of a reduction's incoming gradient with the
# reduced dims of the forward's input kept as 1 (so that a multiplication broadcasts it
# back); `filled(self, value)`, a tensor shaped like `self` filled with a Scalar
# (aclnnInplaceFillScalar)
TENSOR_STEPS = {"unreduced": ("tensor", "int_array"), "filled": ("tensor", "scalar"),
                "sliced": ("tensor", "tensor_list", "scalar"), "transposed": ("tensor",),
                "unrepeated": ("tensor", "int_array"), "per_last_dim": ("number", "tensor")}
# `per_last_dim(epsilon, label)`: a float or Scalar attribute over the last dim's extent of a
# tensor, a Scalar (label_smooth's epsilon / num_classes)
STEP_RESULT = {"per_last_dim": "scalar"}
# `transposed(t)`: a view of `t` with its last two dims and their strides swapped (no copy;
# a tensor of fewer dims as it is). `unrepeated(grad, repeats)`: the gradient of a repeat
# (phi's tile): the incoming gradient viewed as [repeat, extent] pairs of the forward
# input's dims (both lists padded with leading 1s to one rank) summed over the repeats
# (aclnnReduceSum, keepDims false), a copy when every repeat is 1; the whole gradient only
COPY_API = "aclnnInplaceCopy"
FILL_API = "aclnnInplaceFillScalar"  # the call of `filled`
# `sliced(grad, tensors, dim)`: the gradient of each member of a tensor list the forward
# joined along `dim`, the incoming gradient sliced at the running offset of the members'
# extents (members with no elements get none and take no room)
SLICE_API = "aclnnSliceV2"
LIST_KINDS = ("tensor", "tensor_list")
# the kinds of phi attribute a leaf may bind to: an int list, a phi::Scalar
ATTR_KINDS = ("int_array", "scalar", "float")


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
    # a generalized-ufunc signature (aclnnMatmul's): each input's (phi name, core dims),
    # the output's core dims; the dims before a core broadcast
    core: tuple = ()
    out_core: tuple = ()
    alt: tuple[tuple[str, Node], ...] = ()  # (grad output, its form when transposed)
    flags: tuple[tuple[str, str], ...] = ()  # (phi input, the bool that transposes it)
    asked: str = ""
    step: bool = True  # the API asked for is a step of the identity
    owners: tuple[tuple[str, str], ...] = ()  # (grad output, the phi input it is of)

    def note(self, requested: str, op: str) -> str:
        what = (f"{requested} is one step of the gradient of {self.forward_api}"
                if self.step else f"upstream's `{op}` calls {requested} (opdb), which is no "
                f"step of the gradient of {self.forward_api}")
        return (f"{what} (the forward of `{op}`); the kernel computes the whole identity "
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
        if isinstance(e, dict) and "op" in e and "api" not in e:
            name = f"{where}: identities[{i}] (op {e.get('op')})"
        if not isinstance(e, dict) or set(e) - {"api", "op", "requires", "grads", "evidence",
                                                "transposed", "signature", "broadcast"}:
            raise OpscanError(f"{name}: unknown keys",
                              hint="an entry has api (or op), grads, evidence and optional "
                                   "requires, transposed, signature, broadcast")
        if ("api" in e) == ("op" in e) or not e.get("evidence"):
            raise OpscanError(f"{name}: needs an aclnn `api` or a phi `op`, and `evidence`")
        if "api" in e and not str(e["api"]).startswith("aclnn"):
            raise OpscanError(f"{name}: `api` names an aclnn API")
        key = e["api"] if "api" in e else f"op:{e['op']}"
        if key in out:
            raise OpscanError(f"{name}: {key} is listed twice")
        grads = e.get("grads")
        if not isinstance(grads, dict) or not grads:
            raise OpscanError(f"{name}: `grads` maps each tensor input to its gradient")
        trans = e.get("transposed") or {}
        if not isinstance(trans, dict) or set(trans) - set(grads):
            raise OpscanError(f"{name}: `transposed` maps inputs of `grads` to the gradient "
                              "of a transposed view of them")
        if not isinstance(e.get("broadcast", False), bool):
            raise OpscanError(f"{name}: `broadcast` is true or false")
        try:
            parsed = {k: parse_expr(str(v)) for k, v in grads.items()}
            parsed_t = {k: parse_expr(str(v)) for k, v in trans.items()}
            sig = parse_signature(str(e["signature"])) if "signature" in e else None
        except ValueError as exc:
            raise OpscanError(f"{name}: {exc}") from None
        if sig is not None and len(sig[0]) > len(grads):
            raise OpscanError(f"{name}: `signature` has one core per input of `grads` "
                              "(the first ones; the rest are element-wise with the output)")
        out[key] = {"requires": dict(e.get("requires") or {}), "grads": parsed,
                    "transposed": parsed_t, "signature": sig,
                    "broadcast": e.get("broadcast", len(grads) > 1 or sig is not None),
                    "evidence": e["evidence"]}
    return out


def parse_signature(text: str) -> tuple[tuple, tuple]:
    """A NumPy generalized-ufunc signature with optional core dims, `(n?,k),(k,m?)->(n?,m?)`
    (numpy.matmul's): (the inputs' cores, the output's core), each core a tuple of (dim,
    optional). An input of fewer dims than its core lacks its optional dims (a 1-d matmul
    operand), which are then 1 in it and in the output; the dims before a core broadcast."""
    m = re.fullmatch(r"\s*(\(.*\))\s*->\s*(\([^()]*\))\s*", text)
    if m is None:
        raise ValueError(f"bad signature {text!r} (e.g. `(n?,k),(k,m?)->(n?,m?)`)")

    def core(part: str) -> tuple:
        dims = tuple((d.strip().rstrip("?"), d.strip().endswith("?"))
                     for d in part.split(",") if d.strip())
        if any(not re.fullmatch(r"[a-z]\w*", d) for d, _ in dims):
            raise ValueError(f"bad signature {text!r}")
        return dims
    ins = tuple(core(c) for c in re.findall(r"\(([^()]*)\)", m.group(1)))
    if re.sub(r"\([^()]*\)", "", m.group(1)).replace(",", "").strip() or not ins:
        raise ValueError(f"bad signature {text!r}")
    out = core(m.group(2)[1:-1])
    for d, opt in out:
        owners = [c for c in ins if (d, True) in c]
        if opt and len(owners) != 1:
            raise ValueError(f"bad signature {text!r}: optional `{d}` in one input only")
    return ins, out


def _calls(n: Node) -> list[str]:
    own = ([n.api] if n.api else [FILL_API] if n.host == "filled"
           else [SLICE_API] if n.host == "sliced"
           else [REDUCE_API, COPY_API] if n.host == "unrepeated" else [])
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
        if p is None or p.rule is None:  # a rule may read a tensor it needs (beta 1
            return False                 # with aclnnGemm's `C` <- bias) and give a constant
        lines = dict(p.rule.code).get("paddle", ())
        if not any(re.search(rf"=\s*{re.escape(str(value))}(\.0)?f?;", ln) for ln in lines):
            return False
    return True


def grad_identity(db, api, op) -> GradIdentity | None:
    """The identity to render for the grad kernel `op` asked for with `api`, or None."""
    from codegen.argmap import map_args
    from codegen.paddle_callsite import _TRANSPOSE_ATTR
    from codegen.paddle_target import fw_params
    from codegen.resolve import _fw_op, _top_mapped

    if re.search(r"(Backward|Grad)(V\d+)?$", api.name):
        return None
    # the forward op from the backward YAML; a kernel opdb knows only from
    # PaddleCustomDevice's registration (class 14: fused_gemm_epilogue_grad, filed as a
    # forward there) is a grad kernel when the YAML says so
    if op.kind != "backward" and db.framework_op("paddle", op.name) is not None:
        return None  # a forward op of the catalog
    fwd = _forward_of(op.name)
    fop = _fw_op(db, "paddle", fwd) if fwd else None
    if fop is None:
        return None
    table = identities()
    fwp = fw_params(fop)
    fapi_name = next((a for a in _top_mapped(db, "paddle", fop) if a in table), None)
    if fapi_name is not None:
        fapi = db.aclnn_api(fapi_name)
        if fapi is None:
            return None
        ent = table[fapi_name]
        amap = map_args(fapi, fwp, "paddle")
        if not _requires_met(amap, ent["requires"]):
            return None
        bind = {p.aclnn.name: p.fw.name for p in amap.params
                if p.fw is not None and p.fw.kind in LIST_KINDS}
        # the forward's int-list and Scalar attributes (aclnnRoll's shifts, dims;
        # aclnnPowTensorScalar's exponent) bind to the grad kernel's attributes of the
        # same phi name and kind
        attrs = {p.aclnn.name: p.fw.name for p in amap.params
                 if p.fw is not None and p.fw.kind in ATTR_KINDS and p.rule is None}
        outs = [p.aclnn.name for p in amap.params if p.aclnn.role == "output"]
        order = [p.aclnn.name for p in amap.params
                 if p.aclnn.role == "input" and p.fw is not None and p.fw.kind in LIST_KINDS]
        spare = [u.name for u in amap.unused if u.kind == "bool"]
        fkind = {p.fw.name: p.fw.kind for p in amap.params if p.fw is not None}
        key = fapi_name
    else:
        # a forward with no aclnn API in opdb (phi's tile): an entry keyed by the forward
        # phi op, its leaves the forward kernel's own parameter names
        key = f"op:{fop.name}"
        ent = table.get(key)
        if ent is None or ent["requires"]:
            return None
        bind = {f.name: f.name for f in fwp if f.kind in LIST_KINDS}
        attrs = {f.name: f.name for f in fwp if f.kind in ATTR_KINDS and not f.is_output}
        outs = [f.name for f in fwp if f.is_output]
        order = [f.name for f in fwp if not f.is_output and f.kind in LIST_KINDS]
        spare = [f.name for f in fwp if f.kind == "bool" and not f.is_output]
        fkind = {f.name: f.kind for f in fwp}
    gp = {f.name: f for f in fw_params(op)}
    ins = {n for n, f in gp.items() if not f.is_output and f.kind in LIST_KINDS}
    gouts = {n for n, f in gp.items() if f.is_output and f.kind in LIST_KINDS}
    yaml_outs = _yaml_outputs(op.name, [n for n, f in gp.items() if f.is_output])
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
    renamed = _attr_names(fop.name, fwp, op.name, list(gp.values()))
    attr_leaves = {}
    for a, n in attrs.items():
        g = n if n in gp else renamed.get(n, "")
        if g in gp and not gp[g].is_output and gp[g].kind == fkind[n]:
            attr_leaves[a] = g
    leaf_map.update(attr_leaves)
    kinds = {**lists, **{n: gp[n].kind for n in attr_leaves.values()}}
    # a bool `transpose_<t>` of the forward that its API has no parameter for: the forward
    # passes `<t>` as a transposed view (codegen.paddle_callsite.transpose_views), so the
    # gradient of `<t>` is the transpose of the view's: the entry's `transposed` form
    flags = {}
    for f in spare:
        m = _TRANSPOSE_ATTR.match(f)
        a = next((a for a, n in bind.items() if m and n == m.group(1) and a in ent["grads"]),
                 None)
        if a is None:
            continue
        if a not in ent["transposed"] or f not in gp or gp[f].kind != "bool":
            return None  # a transposed operand the entry or the grad kernel cannot express
        flags[a] = f
    grads, alt, owners = [], [], []
    for a, expr in ent["grads"].items():
        if a not in bind:
            return None
        g = _grad_of(bind[a], gouts) or yaml_outs.get(_grad_of(bind[a], set(yaml_outs)) or "")
        if g is None:
            return None
        owners.append((g, bind[a]))
        forms = [expr] + ([ent["transposed"][a]] if a in flags else [])
        if any(x not in leaf_map for e in forms for x in _leaves(e)):
            return None
        try:
            grads.append((g, _rebind(expr, leaf_map, kinds)))
            if a in flags:
                alt.append((g, _rebind(ent["transposed"][a], leaf_map, kinds)))
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
    broadcast = ent["broadcast"]
    sig = ent["signature"]
    core = ()
    if sig is not None:
        if [a for a in order if a in ent["grads"]] != list(ent["grads"]) or any(
                sum(not o for _, o in c) == 0 for c in sig[0]):
            return None  # the cores follow the API's tensor inputs, each with a fixed dim
        core = tuple((bind[a], c) for a, c in zip(ent["grads"], sig[0]))
    cored = {n for n, _ in core}
    steps = sorted({c for _, e in grads + alt for c in _calls(e)}
                   | ({REDUCE_API} if broadcast else set())
                   | ({COPY_API} if broadcast and (not sig or any(
                       dict(owners)[g] not in cored and not (e.api or e.host)
                       for g, e in grads)) else set()))
    asked = api.name.replace("Inplace", "", 1) if api.name.startswith("aclnnInplace") else api.name
    if asked not in steps and api.name in steps and api.name != COPY_API:
        asked = api.name  # an in-place step of the identity itself (aclnnInplaceFillScalar)
    if asked == COPY_API or (asked not in steps and api.name not in _adapter_apis(db, op)):
        return None  # not a step of this identity: the caller asked for something else
    step_apis = []
    for s in steps:
        sa = db.aclnn_api(s)
        if sa is None or any(c == s and not _kinds_fit(k, _input_kinds(sa))
                             for c, k in _every_call(grads + alt)):
            return None
        step_apis.append(sa)
    axis = "axis" if "axis" in gp and gp["axis"].kind in ("int", "scalar") else ""
    read = ({incoming} | {x for _, e in grads + alt for x in _leaves(e)}
            | {g for g, _ in grads} | set(flags.values()))
    if axis:
        read.add("axis")
    # a reduction's steps read the grad kernel's `reduce_all` (every dim when set, as
    # codegen.paddle_callsite.reduce_all_dims for the forward)
    shape = any(_shape_steps(e) for _, e in grads)
    reduce_all = ("reduce_all" if shape and "reduce_all" in gp
                  and gp["reduce_all"].kind == "bool" else "")
    if reduce_all:
        read.add(reduce_all)
    if any(_host_steps(e) & {"unrepeated"} for _, e in grads):
        read.add(next(iter(bind[a] for a in ent["grads"])))  # its dims shape the sum
    return GradIdentity(fop.name, fapi_name or fop.name, incoming, tuple(grads), axis,
                        broadcast, tuple(steps), ent["evidence"].split(":")[0],
                        tuple(sorted(read)),
                        tuple(sorted({bind[a] for a in ent["grads"]})), tuple(step_apis),
                        reduce_all, tuple(sorted((n, gp[n].kind) for n in attr_leaves.values())),
                        core=core, out_core=sig[1] if sig else (), alt=tuple(alt),
                        flags=tuple((bind[a], f) for a, f in flags.items()), asked=api.name,
                        step=asked in steps, owners=tuple(owners))


def _adapter_apis(db, op) -> set[str]:
    """The aclnn APIs opdb's adapters of the grad kernel `op` call (PaddleCustomDevice's
    tile_grad: aclnnSliceV2, on its bool path): asked for one of them, the kernel is still
    the whole gradient, where the API is no step of the identity."""
    return {m.aclnn for m in db.mappings(framework="paddle", op=op.name)
            if m.evidence == "adapter"}


def _yaml_outputs(kernel: str, outs: list[str]) -> dict[str, str]:
    """The backward YAML's output names -> the grad kernel's, by position (expand_grad's
    YAML `x_grad` is the kernel's `in_grad`), when both have as many outputs."""
    from codegen.testspec import _catalog
    cat = _catalog()
    ops = [cat.op(n) for n in cat.ops_for_kernel(kernel)]
    ops = [o for o in ops if o is not None]
    if len(ops) != 1 or len(ops[0].outputs) != len(outs):
        return {}
    return {o.name: k for o, k in zip(ops[0].outputs, outs)}


def _kinds_fit(kinds: tuple[str, ...], api_kinds: tuple[str, ...]) -> bool:
    """A call's argument kinds against the API's inputs: a number written in the table
    (`number`) also fits a plain C number parameter (aclnnMatmul's int8_t `cubeMathType`),
    a float attribute an aclScalar (passed as a phi::Scalar of it)."""
    return len(kinds) == len(api_kinds) and all(
        k == a or (k == "number" and a in ("scalar", *NUMBER_CTYPES))
        or (k == "float" and a == "scalar") for k, a in zip(kinds, api_kinds))


def _every_call(pairs) -> list[tuple[str, tuple[str, ...]]]:
    """(API, argument kinds) of every call, each call once (`_arity_checked` keeps one
    per API name)."""
    out = []

    def walk(n: Node) -> None:
        if n.api:
            out.append((n.api, tuple("number" if c.const else c.attr or "tensor"
                                     for c in n.args)))
        for c in n.args:
            walk(c)
    for _, e in pairs:
        walk(e)
    return out


NUMBER_CTYPES = ("int8_t", "int32_t", "int64_t", "double", "float", "bool")


def _host_steps(n: Node) -> set[str]:
    return ({n.host} if n.host else set()) | {h for c in n.args for h in _host_steps(c)}


def _shape_steps(n: Node) -> bool:
    """Whether `n` has a step over a reduction's dims (`unreduced`, `inverse_count`)."""
    return n.host in ("unreduced", "inverse_count") or any(_shape_steps(c) for c in n.args)


def _input_kinds(api) -> tuple[str, ...]:
    """An API's inputs as the identity spells them: `tensor`, `scalar` or `int_array`."""
    return tuple("scalar" if "Scalar" in p.ctype else "tensor" if "Tensor" in p.ctype
                 else "int_array" if "IntArray" in p.ctype
                 else p.ctype for p in api.params if p.role == "input")


def _arity_checked(grads, consts: bool = False) -> dict[str, tuple[str, ...]]:
    """Every call's argument kinds (`tensor`/`scalar`), to check against the API
    (`consts`: a number written in the table is `number`, see `_kinds_fit`)."""
    out: dict[str, tuple[str, ...]] = {}

    def walk(n: Node) -> None:
        if n.api:
            out[n.api] = tuple(("number" if consts else "scalar") if c.const
                               else c.attr or "tensor" for c in n.args)
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
            if (c.attr or "tensor") != kind and not (kind == "scalar" and c.const) and not (
                    kind == "number" and c.attr in NUMBER_KINDS):
                raise KeyError(n.host)  # an argument of another kind: no identity
        return Node(host=n.host, args=args, attr=STEP_RESULT.get(n.host, ""))
    if n.host and any(c.attr != HOST_STEPS[n.host] and not (
            HOST_STEPS[n.host] == "number" and c.attr in NUMBER_KINDS) for c in args):
        raise KeyError(n.host)  # a host step over a tensor or another kind: no identity
    return Node(api=n.api, host=n.host, args=args, attr=HOST_RESULT.get(n.host, ""))


def body_lines(gi: GradIdentity, views: dict[str, str] | None = None) -> list[str]:
    """The kernel body: every gradient Paddle asks for (nullptr when not), computed at the
    incoming gradient's shape and summed back over the broadcast axes."""
    if gi.core:
        return _core_body(gi)
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
        if not (expr.api or expr.host):  # the gradient is a tensor itself: a copy, or its sum
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
                          red=red, ctypes=_ctypes(gi))[1]
            if gi.broadcast:
                body += [f"if (!{g}_same) {{"] + ["  " + x for x in
                                                   _reduce(g, d, full, gi.axis)] + ["}"]
        lines += ["  " + x for x in body] + ["}"]
    return lines


def _emit(n: Node, root: str, g: str, d: str, views: dict, counter: list,
          top: bool = False, shaped: set[str] = frozenset(),
          red: tuple[str, str] = ("", ""), ctypes: dict | None = None
          ) -> tuple[str, list[str]]:
    """The calls of `n` into `root` (`top`) or a scratch tensor. A scratch is shaped like
    the incoming gradient `d`, except where every tensor it is computed from is one
    forward input of `shaped` (the inputs of a broadcasting forward), whose shape it then
    has: `Subs(exponent, 1, 1)` of elementwise_pow_grad is y - 1 at y's shape (upstream
    allocates it as y), which a scratch at dout's shape would not accept. `red`: the
    forward input a reduction's steps are shaped by, and the grad kernel's `reduce_all`."""
    ref, lines, _ = _emit_shaped(n, root, g, d, views, counter, top, shaped, red, ctypes)
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
                 top: bool, shaped: set[str], red: tuple[str, str] = ("", ""),
                 ctypes: dict | None = None) -> tuple[str, list[str], str | None]:
    """(reference, lines, the forward input whose shape the value has, or None: d's).
    `ctypes`: each step API's input C types, for numbers passed to plain C parameters."""
    ref, reduce_all = red
    if n.host in ("inverse_count", "unreduced", "unrepeated") and not ref:
        raise ValueError(f"{n.host} needs the forward's one input")
    if n.host == "transposed":  # a view with the last two dims (and strides) swapped
        src, lines, sh = _emit_shaped(n.args[0], root, g, d, views, counter, False, shaped,
                                      red, ctypes)
        counter[0] += 1
        v = f"{g}_v{counter[0]}"
        return v, lines + [
            f"phi::DenseTensor {v}({src});  // `{n.args[0].leaf or src}` transposed (a view)",
            *transposed_view_lines(v, f"{v}.dims().size() >= 2")], sh
    if n.host == "unrepeated":  # the gradient of a repeat: a sum over the repeat axes
        if not top:
            raise ValueError("unrepeated gives a whole gradient")
        counter[0] += 1
        h = f"{g}_r{counter[0]}"
        t, reps = n.args[0].leaf, n.args[1].leaf
        src = views.get(t, t)
        return root, [
            f"std::vector<int64_t> {h}_rep = phi::IntArray({reps}).GetData();",
            f"std::vector<int64_t> {h}_dims = phi::vectorize({ref}.dims());",
            f"if ({h}_rep.size() < {h}_dims.size()) {{  // both lists at one rank, "
            "leading 1s",
            f"  {h}_rep.insert({h}_rep.begin(), {h}_dims.size() - {h}_rep.size(), 1);",
            "} else {",
            f"  {h}_dims.insert({h}_dims.begin(), {h}_rep.size() - {h}_dims.size(), 1);",
            "}",
            f"std::vector<int64_t> {h}_pairs, {h}_axes;  // `{t}` as [repeat, extent] pairs",
            f"bool {h}_copy = true;",
            f"for (size_t i = 0; i < {h}_rep.size(); ++i) {{",
            f"  {h}_axes.push_back({h}_pairs.size());",
            f"  {h}_pairs.push_back({h}_rep[i]);",
            f"  {h}_pairs.push_back({h}_dims[i]);",
            f"  {h}_copy = {h}_copy && {h}_rep[i] == 1;",
            "}",
            f"phi::DenseTensor {h}_out({root});",
            f"{h}_out.Resize(phi::make_ddim({h}_dims));",
            f"if ({h}_copy) {{  // every repeat 1: `{t}` itself",
            f"  EXEC_NPU_CMD({COPY_API}, dev_ctx, {h}_out, {src});",
            "} else {  // summed over the repeats",
            f"  phi::DenseTensor {h}_in({src});",
            f"  {h}_in.Resize(phi::make_ddim({h}_pairs));",
            f"  bool {h}_keep_dims = false;",
            f"  aclDataType {h}_dtype = ConvertToNpuDtype({h}_out.dtype());",
            f"  EXEC_NPU_CMD({REDUCE_API}, dev_ctx, {h}_in, {h}_axes, {h}_keep_dims, "
            f"{h}_dtype, {h}_out);",
            "}"], None
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
    if n.host == "per_last_dim":  # an attribute over a tensor's last extent, on the host
        counter[0] += 1
        h = f"{g}_h{counter[0]}"
        a, t = n.args
        val = (f"{a.leaf}.to<double>()" if a.attr == "scalar"
               else f"static_cast<double>({a.leaf})")
        ref = views.get(t.leaf, t.leaf)
        return h, [f"phi::Scalar {h}({val} / static_cast<double>({ref}.dims()[{ref}.dims()."
                   f"size() - 1]));  // {a.leaf} / the last dim of `{t.leaf}`"], ""
    if n.host == "complement":  # 1 - a float or Scalar attribute, on the host
        counter[0] += 1
        h = f"{g}_h{counter[0]}"
        a = n.args[0]
        val = (f"{a.leaf}.to<double>()" if a.attr == "scalar"
               else f"static_cast<double>({a.leaf})")
        return h, [f"phi::Scalar {h}(1.0 - {val});  // 1 - {a.leaf}"], ""
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
    order = (ctypes or {}).get(n.api, ())
    want = [c for c in order if c != "out"]
    for i, c in enumerate(n.args):
        if c.attr == "float" and not (c.api or c.host) and i < len(want) and (
                "Scalar" in want[i]):
            counter[0] += 1  # a float attribute for an aclScalar: a phi::Scalar of it
            refs.append(f"{g}_s{counter[0]}")
            lines += [f"phi::Scalar {g}_s{counter[0]}({c.leaf});"]
            continue
        if c.const and i < len(want) and want[i] in NUMBER_CTYPES:
            counter[0] += 1  # a number for a plain C parameter (int8_t cubeMathType)
            c_ref = f"{g}_c{counter[0]}"
            num = c.const if want[i] in ("double", "float") else str(int(float(c.const)))
            refs.append(c_ref)
            lines += [f"{want[i]} {c_ref} = {num};"]
            continue
        # a top-level call whose first argument is a fill of its own shape fills the
        # result itself and computes in place (upstream's MeanGradKernel: x_grad filled
        # with 1 / n, then multiplied by the gradient view into x_grad)
        into = top and i == 0 and c.host == "filled" and c.args[0].leaf in shaped | {ref}
        r, ls, sh = _emit_shaped(c, root, g, d, views, counter, into, shaped, red, ctypes)
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
    at = order.index("out") if "out" in order and order.index("out") < len(refs) else len(refs)
    lines += [f"EXEC_NPU_CMD({n.api}, dev_ctx, {', '.join(refs[:at] + [dst] + refs[at:])});"]
    return dst, lines, own


def _ctypes(gi: GradIdentity) -> dict[str, tuple[str, ...]]:
    """Each step API's inputs' C types, and `out` where its output goes among them
    (aclnnMatmul's `out` comes before `cubeMathType`)."""
    return {a.name: tuple("out" if p.role == "output" else p.ctype.strip()
                          for p in a.params if p.role in ("input", "output"))
            for a in gi.step_apis}


def _promote(v: str, src: str, core: tuple, lacks: str, dims: str = "") -> list[str]:
    """`v`: a view of `src` with the optional core dims it lacks (`lacks`, a C++ bool)
    inserted as 1, right to left at their places from the end (numpy.matmul: a 1-d first
    operand is [1, k], a 1-d second [k, 1], and the output lacks the same dims)."""
    out = [f"phi::DenseTensor {v}({src});"]
    ins = [(len(core) - 1 - j, f"{v}_d.insert({v}_d.end() - {len(core) - 1 - j}, 1);")
           for j, (_, opt) in enumerate(core) if opt]
    if not ins:
        return out
    out += [f"if ({lacks}) {{  // lacks its optional core dims: 1 in their places",
            f"  std::vector<int64_t> {v}_d = phi::vectorize({dims or src + '.dims()'});"]
    out += ["  " + x for _, x in sorted(ins)]
    return out + [f"  {v}.Resize(phi::make_ddim({v}_d));", "}"]


def _core_body(gi: GradIdentity) -> list[str]:
    """The body of an identity with a generalized-ufunc signature (aclnnMatmul's
    `(n?,k),(k,m?)->(n?,m?)`): every operand and the incoming gradient as views with the
    optional core dims they lack as 1, a transposed operand (`transpose_x`) as a transposed
    view; each gradient computed at the incoming gradient's broadcast dims and its input's
    core dims (the entry's `transposed` form for an input the forward transposed), then
    summed over the broadcast dims into its output (PaddleCustomDevice 77090b64
    matmul_kernel.cc AclnnMatmulBackward: the same views, aclnnMatmul per gradient,
    aclnnReduceSum over the broadcast dims)."""
    d = gi.incoming
    lines: list[str] = []
    views: dict[str, str] = {}
    flags = dict(gi.flags)
    lacks = {}
    for n, core in gi.core:
        fixed = sum(not o for _, o in core)
        if any(o for _, o in core):
            lacks[n] = f"{n}.dims().size() == {fixed}"
    owner = {dim: n for n, core in gi.core for dim, o in core if o}
    for n, core in gi.core:
        lines += _promote(f"{n}_p", n, core, lacks.get(n, "false"))
        views[n] = f"{n}_p"
        if n in flags:
            v = f"{n}_t"
            lines += [f"phi::DenseTensor {v}({n}_p);", *transposed_view_lines(
                v, f"{flags[n]} && {n}.dims().size() >= 2",
                f"{flags[n]}: the forward read `{n}` transposed (a view)")]
            views[n] = v
    # the incoming gradient lacks the output's optional dims its owners lack
    dv = f"{d}_p"
    lines += [f"phi::DenseTensor {dv}({d});", f"std::vector<int64_t> {dv}_d = "
              f"phi::vectorize({d}.dims());"]
    for j in reversed(range(len(gi.out_core))):
        dim, opt = gi.out_core[j]
        if opt:
            lines += [f"if ({lacks[owner[dim]]}) {dv}_d.insert({dv}_d.end() - "
                      f"{len(gi.out_core) - 1 - j}, 1);  // `{owner[dim]}` lacks `{dim}`"]
    lines += [f"{dv}.Resize(phi::make_ddim({dv}_d));"]
    views[d] = dv
    counter = [0]
    ctypes = _ctypes(gi)
    alt = dict(gi.alt)
    cores = dict(gi.core)
    owners = dict(gi.owners)
    for g, expr in gi.grads:
        n = owners[g]
        if n not in cores:  # no core: element-wise with the output (aclnnGemm's `C`)
            lines += [f"if ({g}) {{  // nullptr when Paddle does not need this gradient"]
            lines += ["  " + x for x in _elementwise_grad(g, expr, d, views, counter, ctypes)]
            lines += ["}"]
            continue
        k = len(cores[n])
        gv, full = f"{g}_p", f"{g}_full"
        body = [f"opgen_alloc<T>(dev_ctx, {g});"]
        body += _promote(gv, f"*{g}", cores[n], lacks.get(n, "false"), f"{g}->dims()")
        body += [f"// the gradient at `{d}`'s broadcast dims and `{n}`'s core dims",
                 f"std::vector<int64_t> {full}_d(phi::vectorize({dv}.dims()));",
                 f"{full}_d.resize({dv}.dims().size() - {len(gi.out_core)});",
                 f"for (int64_t ax = {gv}.dims().size() - {k}; ax < {gv}.dims().size(); "
                 "++ax) {",
                 f"  {full}_d.push_back({gv}.dims()[ax]);",
                 "}",
                 f"const bool {g}_same = phi::make_ddim({full}_d) == {gv}.dims();",
                 f"phi::DenseTensor {full};",
                 f"if ({g}_same) {{",
                 f"  {full} = {gv};",
                 "} else {",
                 f"  {full}.set_meta(phi::DenseTensorMeta({gv}.dtype(), "
                 f"phi::make_ddim({full}_d)));",
                 f"  dev_ctx.Alloc(&{full}, {full}.dtype());",
                 "}"]
        forms = [(expr, "")] + ([(alt[g], flags[n])] if g in alt else [])
        if len(forms) == 1:
            body += _emit(expr, full, g, d, views, counter, top=True, ctypes=ctypes)[1]
        else:
            body += [f"if ({flags[n]} && {n}.dims().size() >= 2) {{  // the transpose of the "
                     "view's gradient"]
            body += ["  " + x for x in _emit(alt[g], full, g, d, views, counter, top=True,
                                             ctypes=ctypes)[1]]
            body += ["} else {"]
            body += ["  " + x for x in _emit(expr, full, g, d, views, counter, top=True,
                                             ctypes=ctypes)[1]]
            body += ["}"]
        body += [f"if (!{g}_same) {{"] + ["  " + x for x in
                                          _reduce(g, full, full, "", tgt=gv)] + ["}"]
        lines += [f"if ({g}) {{  // nullptr when Paddle does not need this gradient"]
        lines += ["  " + x for x in body] + ["}"]
    return lines


def _elementwise_grad(g: str, expr: Node, d: str, views: dict, counter: list,
                      ctypes: dict) -> list[str]:
    """The gradient `expr` of an input broadcast element-wise to the output (a bias),
    computed at the incoming gradient's shape and summed back over the broadcast axes."""
    body = [f"opgen_alloc<T>(dev_ctx, {g});",
            f"const bool {g}_same = {g}->dims() == {d}.dims();"]
    if not (expr.api or expr.host):
        src = expr.leaf
        body += [f"if ({g}_same) {{", f"  EXEC_NPU_CMD({COPY_API}, dev_ctx, *{g}, {src});",
                 "} else {"]
        return body + ["  " + x for x in _reduce(g, d, src, "")] + ["}"]
    full = f"{g}_full"
    body += [f"phi::DenseTensor {full};  // the gradient at {d}'s shape",
             f"if ({g}_same) {{", f"  {full} = *{g};", "} else {",
             f"  {full}.set_meta({d}.meta());",
             f"  dev_ctx.Alloc(&{full}, {full}.dtype());", "}"]
    body += _emit(expr, full, g, d, views, counter, top=True, ctypes=ctypes)[1]
    return body + [f"if (!{g}_same) {{"] + ["  " + x for x in _reduce(g, d, full, "")] + ["}"]


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


def _reduce(g: str, d: str, src: str, axis: str, tgt: str = "") -> list[str]:
    """Sum `src` (at `d`'s shape) over the axes `d` broadcast `*g` along, into `*g`:
    PaddleCustomDevice elementwise_add_kernel.cc AddGradKernel's rule (an axis outside
    g's aligned dims, or where g has 1 and d more), keepDims false into a view of g.
    `tgt`: a view to sum into instead of `*g` (a promoted matmul gradient)."""
    at = (f"({axis} == -1 ? {d}.dims().size() - {g}_rank : {axis})" if axis
          else f"{d}.dims().size() - {g}_rank")
    dims, ref = (f"{tgt}.dims()", tgt) if tgt else (f"{g}->dims()", f"*{g}")
    dt = f"{tgt}.dtype()" if tgt else f"{g}->dtype()"
    return [f"// sum the gradient over the axes the forward broadcast `{g}` along",
            f"const int64_t {g}_rank = {dims}.size();",
            f"const int64_t {g}_at = {g}_rank < {d}.dims().size() ? {at} : 0;",
            f"std::vector<int64_t> {g}_axes, {g}_kept;",
            f"for (int64_t ax = 0; ax < {d}.dims().size(); ++ax) {{",
            f"  if (ax < {g}_at || ax >= {g}_at + {g}_rank ||",
            f"      ({d}.dims()[ax] > 1 && {dims}[ax - {g}_at] == 1)) {{",
            f"    {g}_axes.push_back(ax);",
            "  } else {",
            f"    {g}_kept.push_back({d}.dims()[ax]);",
            "  }",
            "}",
            f"phi::DenseTensor {g}_view({ref});",
            f"{g}_view.Resize(phi::make_ddim({g}_kept));",
            f"bool {g}_keep_dims = false;",
            f"aclDataType {g}_dtype = ConvertToNpuDtype({dt});",
            f"EXEC_NPU_CMD({REDUCE_API}, dev_ctx, {src}, {g}_axes, {g}_keep_dims, {g}_dtype, "
            f"{g}_view);"]
