"""Paddle's operator-definition YAML (`paddle/phi/ops/yaml/*.yaml`) as dataclasses.

Reads `ops.yaml`, `backward.yaml`, `fused_ops.yaml`, the `inconsistent_*.yaml`
files and `op_compat.yaml`. Each op keeps its Location (file, line). Answers the
questions opdb asks about a Paddle name:
- `kernel_names("adam_")` -> `("adam", "adam_dense_param_sparse_grad")`: the phi
  kernels of a YAML op / API name (fluid names and inplace `x_` APIs resolve too);
- `kind(name)`: `backward` (a `backward_op`, or a `*_grad` kernel), `optimizer`, or
  `forward`. OPTIMIZER RULE: a forward op is an optimizer when its args hold a tensor
  named `param`/`params` and one named `learning_rate`/`lr`, and its outputs hold
  `param_out`/`params_out` (every update-in-place optimizer: adam_, adamw_, sgd_,
  momentum_, lamb_, merged_adam_, fused_adam_, ftrl, lars_momentum_, ...); a kernel is
  an optimizer kernel when an optimizer op lists it;
- `fluid_aliases(name)`: the fluid (legacy) names from op_compat (`matmul` -> `matmul_v2`).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from opdb.errors import OpscanError, ParseError

# Files in lookup priority order (an op name defined twice resolves to the first).
OP_FILES = ("ops.yaml", "fused_ops.yaml", "inconsistent_dygraph_ops.yaml",
            "inconsistent_static_ops.yaml")
BACKWARD_FILES = ("backward.yaml", "inconsistent_dygraph_backward.yaml")
COMPAT_FILE = "op_compat.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: same result


@dataclass(frozen=True)
class Location:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class YamlArg:
    """`Scalar beta1 = 0.9f` -> YamlArg("beta1", "Scalar", "0.9f")."""
    name: str
    type: str
    default: str | None = None
    optional: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.type.startswith("Tensor")


@dataclass(frozen=True)
class YamlOutput:
    """`Tensor[](out){x.size()}` -> YamlOutput("out", "Tensor[]", size="x.size()")."""
    name: str
    type: str
    size: str | None = None
    optional: bool = False
    intermediate: bool = False


@dataclass(frozen=True)
class KernelFunc:
    """One entry of `kernel: func:` (`adam {dense, ... -> dense, ...}`)."""
    name: str
    tensor_types: str = ""


@dataclass(frozen=True)
class YamlOp:
    name: str
    entry: str                  # "op" or "backward_op"
    location: Location
    args: tuple[YamlArg, ...]
    outputs: tuple[YamlOutput, ...]
    kernels: tuple[KernelFunc, ...] = ()
    kernel_data_type: str = ""
    inplace: tuple[tuple[str, str], ...] = ()
    backward: tuple[str, ...] = ()
    forward: str = ""           # backward ops: the forward op name
    invoke: str = ""
    composite: str = ""
    fields: tuple[str, ...] = ()
    no_need_buffer: tuple[str, ...] = ()  # backward ops: inputs whose data is not kept

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kernels)

    @property
    def is_optimizer(self) -> bool:
        if self.entry != "op":
            return False
        tensors = {a.name for a in self.args if a.is_tensor}
        outs = {o.name for o in self.outputs}
        return (bool(tensors & {"param", "params"}) and bool(tensors & {"learning_rate", "lr"})
                and bool(outs & {"param_out", "params_out"}))


@dataclass(frozen=True)
class CompatEntry:
    """One `op_compat.yaml` entry: `op : matmul (matmul_v2)` with its renames."""
    phi_name: str
    fluid_name: str
    location: Location
    backward: tuple[tuple[str, str], ...] = ()   # (phi, fluid) pairs
    inputs: tuple[tuple[str, str], ...] = ()     # (phi arg, fluid arg)
    outputs: tuple[tuple[str, str], ...] = ()
    attrs: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------- field parsers

def _split(text: str) -> list[str]:
    """Split at commas outside (), [], {}, <> and quotes."""
    out, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p.strip() for p in out if p.strip()]


_ARG_RE = re.compile(r"^(?P<type>[A-Za-z_][\w:]*(?:\([\w:]+\))?(?:\[\])?(?:\?)?)\s+"
                     r"(?P<name>[A-Za-z_]\w*)\s*(?:=\s*(?P<default>.+))?$", re.S)


def parse_args(text: str, where: Location) -> tuple[YamlArg, ...]:
    """`(Tensor x, Scalar beta1 = 0.9f, int[] axis = {})` -> YamlArgs."""
    t = (text or "").strip()
    if not (t.startswith("(") and t.endswith(")")):
        raise ParseError(where.file, where.line, f"args must be '(...)', got {t[:60]!r}")
    args = []
    for piece in _split(t[1:-1]):
        m = _ARG_RE.match(piece)
        if not m:
            raise ParseError(where.file, where.line, f"cannot parse argument {piece!r}",
                             "expected '<type> <name> [= default]'")
        default = m.group("default").strip() if m.group("default") else None
        args.append(YamlArg(m.group("name"), m.group("type"), default))
    return tuple(args)


_OUT_RE = re.compile(r"^(?P<type>Tensor(?:\[\])?)\s*(?:\(\s*(?P<name>\w+)\s*\))?\s*"
                     r"(?:\{(?P<size>.*)\})?$", re.S)


def parse_outputs(text: str | None, where: Location) -> tuple[YamlOutput, ...]:
    if text is None or not str(text).strip():
        return ()
    outs = []
    pieces = _split(str(text))
    for piece in pieces:
        m = _OUT_RE.match(piece)
        if not m:
            raise ParseError(where.file, where.line, f"cannot parse output {piece!r}",
                             "expected 'Tensor(name)' or 'Tensor[](name){size}'")
        name = m.group("name") or ("out" if len(pieces) == 1 else "")
        if not name:
            raise ParseError(where.file, where.line, f"unnamed output {piece!r} among several")
        outs.append(YamlOutput(name, m.group("type"),
                               m.group("size").strip() if m.group("size") else None))
    return tuple(outs)


_KFUNC_RE = re.compile(r"\s*([A-Za-z_]\w*)\s*(\{[^{}]*\})?\s*,?")


def parse_kernel_funcs(text: str, where: Location) -> tuple[KernelFunc, ...]:
    """`adam {dense, ... -> dense}, adam_dense_param_sparse_grad {...}` -> KernelFuncs."""
    funcs, pos, t = [], 0, str(text).strip()
    while pos < len(t):
        m = _KFUNC_RE.match(t, pos)
        if not m or m.end() == pos:
            raise ParseError(where.file, where.line, f"cannot parse kernel func near "
                             f"{t[pos:pos + 40]!r}", "expected 'name [{types -> types}]'")
        funcs.append(KernelFunc(m.group(1), re.sub(r"\s+", " ", m.group(2) or "")))
        pos = m.end()
    if not funcs:
        raise ParseError(where.file, where.line, "empty kernel func")
    return tuple(funcs)


def _names(text) -> list[str]:
    return [p.strip() for p in str(text or "").split(",") if p.strip()]


_INPLACE_GROUP = re.compile(r"\(([^()]*)\)")
_INPLACE_PAIR = re.compile(r"^\s*(\w+)\s*->\s*(\w+)\s*$")


def _parse_inplace(text: str, where: Location) -> tuple[tuple[str, str], ...]:
    """`(x -> out), (a -> b, c -> d)` -> (("x", "out"), ("a", "b"), ("c", "d"))."""
    text = str(text)
    pairs = []
    for group in _INPLACE_GROUP.findall(text):
        for piece in group.split(","):
            m = _INPLACE_PAIR.match(piece)
            if not m:
                raise ParseError(where.file, where.line, f"cannot parse inplace pair {piece!r}",
                                 "expected '(in -> out), ...'")
            pairs.append((m.group(1), m.group(2)))
    rest = _INPLACE_GROUP.sub("", text).replace(",", "").strip()
    if rest or not pairs:
        raise ParseError(where.file, where.line, f"cannot parse inplace {text!r}",
                         "expected '(in -> out), ...'")
    return tuple(pairs)


# ---------------------------------------------------------------- file loading

def _load_entries(path: Path) -> list[tuple[dict, dict, int]]:
    """(entry, {key: line}, line) for every entry of a YAML list file."""
    text = path.read_text(encoding="utf-8")
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        # the context mark is where the broken construct starts (the line to fix);
        # libyaml puts the problem mark on the line after it
        mark = exc.context_mark or exc.problem_mark
        msg = f"invalid YAML: {exc.problem or exc.context}"
        if exc.context and exc.problem_mark:
            msg += f" ({exc.context}; detected at line {exc.problem_mark.line + 1})"
        raise ParseError(path, mark.line + 1 if mark else None, msg) from None
    except yaml.YAMLError as exc:
        raise ParseError(path, None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    if data is None:
        return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise ParseError(path, 1, "expected a YAML list of op entries")
    out = []
    for item, entry_node in zip(data, node.value):
        line = entry_node.start_mark.line + 1
        if not isinstance(item, dict) or not isinstance(entry_node, yaml.MappingNode):
            raise ParseError(path, line, "an entry must be a mapping ('- op : name ...')")
        lines = {k.value: v.start_mark.line + 1 for k, v in entry_node.value}
        out.append((item, lines, line))
    return out


def load_op_file(path: str | os.PathLike, entry: str | None = None) -> list[YamlOp]:
    """Ops of one `ops.yaml`-style (`- op :`) or `backward.yaml`-style file."""
    path = Path(path)
    ops: list[YamlOp] = []
    seen: dict[str, int] = {}
    for item, lines, line in _load_entries(path):
        kind = entry or ("backward_op" if "backward_op" in item else "op")
        if kind not in item or not isinstance(item[kind], str) or not item[kind].strip():
            raise ParseError(path, line, f"entry has no '{kind}' name")
        name = item[kind].strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ParseError(path, line, f"op name {name!r} is not an identifier")
        if name in seen:
            raise ParseError(path, line, f"op {name!r} already defined at line {seen[name]}")
        seen[name] = line

        def at(key: str) -> Location:
            return Location(path.name, lines.get(key, line))

        if "args" not in item:
            raise ParseError(path, line, f"op {name!r} has no 'args'")
        if "output" not in item:
            raise ParseError(path, line, f"op {name!r} has no 'output'")
        args = parse_args(item["args"], at("args"))
        outputs = parse_outputs(item["output"], at("output"))
        optional = set(_names(item.get("optional")))
        intermediate = set(_names(item.get("intermediate")))
        args = tuple(YamlArg(a.name, a.type, a.default, a.name in optional) for a in args)
        outputs = tuple(YamlOutput(o.name, o.type, o.size, o.name in optional,
                                   o.name in intermediate) for o in outputs)
        kernels: tuple[KernelFunc, ...] = ()
        data_type = ""
        if "kernel" in item:
            kern = item["kernel"]
            if not isinstance(kern, dict) or "func" not in kern:
                raise ParseError(path, lines.get("kernel", line),
                                 f"op {name!r}: 'kernel' needs a 'func'")
            kernels = parse_kernel_funcs(kern["func"], at("kernel"))
            data_type = str(kern.get("data_type") or "")
        inplace = _parse_inplace(item["inplace"], at("inplace")) if item.get("inplace") else ()
        forward = ""
        if kind == "backward_op":
            fwd = str(item.get("forward") or "").strip()
            forward = re.split(r"[\s(]", fwd, maxsplit=1)[0] if fwd else ""
        ops.append(YamlOp(
            name=name, entry=kind, location=Location(path.name, line), args=args,
            outputs=outputs, kernels=kernels, kernel_data_type=data_type, inplace=inplace,
            backward=tuple(_names(item.get("backward"))), forward=forward,
            invoke=str(item.get("invoke") or ""), composite=str(item.get("composite") or ""),
            fields=tuple(item), no_need_buffer=tuple(_names(item.get("no_need_buffer")))))
    return ops


_COMPAT_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\(\s*([A-Za-z_]\w*)\s*\))?\s*$")


def _compat_pairs(value, where: Location, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ParseError(where.file, where.line, f"'{what}' must be a mapping")
    return tuple((str(k), str(v)) for k, v in value.items())


def load_op_compat(path: str | os.PathLike) -> list[CompatEntry]:
    path = Path(path)
    entries = []
    seen: dict[str, int] = {}
    for item, lines, line in _load_entries(path):
        m = _COMPAT_NAME.match(str(item.get("op") or ""))
        if not m:
            raise ParseError(path, line, f"cannot parse op name {item.get('op')!r}",
                             "expected 'phi_name' or 'phi_name (fluid_name)'")
        phi, fluid = m.group(1), m.group(2) or m.group(1)
        if phi in seen and fluid != entries[seen[phi]].fluid_name:
            raise ParseError(path, line, f"op {phi!r} maps to {fluid!r} here and to "
                             f"{entries[seen[phi]].fluid_name!r} at line "
                             f"{entries[seen[phi]].location.line}")
        back = []
        for piece in _names(item.get("backward")):
            bm = _COMPAT_NAME.match(piece)
            if not bm:
                raise ParseError(path, lines.get("backward", line),
                                 f"cannot parse backward {piece!r}")
            back.append((bm.group(1), bm.group(2) or bm.group(1)))

        def at(key: str) -> Location:
            return Location(path.name, lines.get(key, line))

        entry = CompatEntry(
            phi, fluid, Location(path.name, line), tuple(back),
            _compat_pairs(item.get("inputs"), at("inputs"), "inputs"),
            _compat_pairs(item.get("outputs"), at("outputs"), "outputs"),
            _compat_pairs(item.get("attrs"), at("attrs"), "attrs"))
        if phi in seen:
            # The real file repeats a few ops (repeat_interleave, shape, dgc, ...);
            # merge them like Paddle's generator does: later pairs win.
            first = entries[seen[phi]]
            entries[seen[phi]] = CompatEntry(
                phi, fluid, first.location,
                tuple(dict(first.backward + entry.backward).items()),
                tuple(dict(first.inputs + entry.inputs).items()),
                tuple(dict(first.outputs + entry.outputs).items()),
                tuple(dict(first.attrs + entry.attrs).items()))
            continue
        seen[phi] = len(entries)
        entries.append(entry)
    return entries


# ---------------------------------------------------------------- the catalog

@dataclass
class PaddleOpYaml:
    """All YAML ops of one Paddle commit, indexed for name questions."""
    ops: dict[str, list[YamlOp]] = field(default_factory=dict)   # priority order
    compat: dict[str, CompatEntry] = field(default_factory=dict)  # phi name -> entry
    fluid_to_phi: dict[str, str] = field(default_factory=dict)
    files: tuple[Path, ...] = ()

    def add(self, op: YamlOp) -> None:
        self.ops.setdefault(op.name, []).append(op)

    def op(self, name: str) -> YamlOp | None:
        defs = self.ops.get(name)
        return defs[0] if defs else None

    def resolve(self, name: str) -> YamlOp | None:
        """The YAML op for an op/API name: exact, then fluid name, then inplace `x_`."""
        if name in self.ops:
            return self.op(name)
        if name in self.fluid_to_phi and self.fluid_to_phi[name] in self.ops:
            return self.op(self.fluid_to_phi[name])
        if name.endswith("_") and name[:-1] in self.ops:
            base = self.op(name[:-1])
            if base is not None and base.inplace:
                return base
        return None

    def kernel_names(self, name: str) -> tuple[str, ...]:
        """phi kernel names of a YAML op / API name (`adam_` -> adam, adam_dense_param_...)."""
        op = self.resolve(name)
        return op.kernel_names if op else ()

    def ops_for_kernel(self, kernel: str) -> tuple[str, ...]:
        """YAML op names that list `kernel` in `kernel: func:` (sorted)."""
        return tuple(sorted(n for n, defs in self.ops.items()
                            if any(kernel in d.kernel_names for d in defs)))

    def kind(self, name: str) -> str:
        """backward / optimizer / forward for an op, API or kernel name."""
        op = self.resolve(name)
        ops = [op] if op else [self.op(n) for n in self.ops_for_kernel(name)]
        ops = [o for o in ops if o is not None]
        if any(o.entry == "backward_op" for o in ops) or (not ops and re.search(
                r"_grad(_grad)*$|_grad_", name)):
            return "backward"
        if any(o.is_optimizer for o in ops):
            return "optimizer"
        return "forward"

    def fluid_aliases(self, name: str) -> tuple[str, ...]:
        """Fluid names of a phi op or backward name (`matmul` -> `matmul_v2`)."""
        out = []
        entry = self.compat.get(name)
        if entry and entry.fluid_name != name:
            out.append(entry.fluid_name)
        for e in self.compat.values():
            for phi, fluid in e.backward:
                if phi == name and fluid != name:
                    out.append(fluid)
        return tuple(dict.fromkeys(out))

    def phi_name(self, fluid: str) -> str | None:
        return self.fluid_to_phi.get(fluid)

    def arg_renames(self, phi_name: str) -> dict[str, str]:
        """phi argument name -> fluid name (inputs, outputs and attrs)."""
        e = self.compat.get(phi_name)
        if not e:
            return {}
        return dict(e.inputs + e.outputs + e.attrs)


def load_yaml_dir(directory: str | os.PathLike) -> PaddleOpYaml:
    """Every YAML file present of OP_FILES, BACKWARD_FILES and op_compat.yaml."""
    directory = Path(directory)
    if not (directory / "ops.yaml").is_file():
        raise OpscanError(f"{directory} has no ops.yaml",
                          "point at a copy of paddle/phi/ops/yaml (opdb-sources/paddle/yaml)")
    cat = PaddleOpYaml()
    files = []
    for fname in OP_FILES + BACKWARD_FILES:
        path = directory / fname
        if path.is_file():
            files.append(path)
            for op in load_op_file(path, "backward_op" if fname in BACKWARD_FILES else "op"):
                cat.add(op)
    cpath = directory / COMPAT_FILE
    if cpath.is_file():
        files.append(cpath)
        for e in load_op_compat(cpath):
            cat.compat[e.phi_name] = e
            if e.fluid_name != e.phi_name:
                cat.fluid_to_phi.setdefault(e.fluid_name, e.phi_name)
            for phi, fluid in e.backward:
                if fluid != phi:
                    cat.fluid_to_phi.setdefault(fluid, phi)
    cat.files = tuple(files)
    return cat


SHIPPED_DIR = Path(__file__).resolve().parent.parent / "sources" / "paddle" / "yaml"


@functools.lru_cache(maxsize=1)
def shipped() -> PaddleOpYaml:
    """The op YAML shipped in opdb/sources/paddle/yaml (Paddle 3.3.1), loaded once."""
    return load_yaml_dir(SHIPPED_DIR)
