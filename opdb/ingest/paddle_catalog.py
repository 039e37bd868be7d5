"""The installed Paddle's phi kernel catalog as opdb FrameworkOps.

Sources, all from the installed wheel (paddlepaddle 3.3.1 here):
- the live registry `paddle.base.core._get_registered_phi_kernels("function")`
  (kernel -> `(backend, layout, dtype)` keys, see `paddle_live`);
- the C++ kernel declarations in the wheel's
  `paddle/include/paddle/phi/kernels/{,fusion/,legacy/,selected_rows/,sparse/,strings/}*.h`
  (`template <typename T, typename Context> void AdamDenseKernel(const Context& dev_ctx, ...);`);
- the op YAML (`paddle_yaml`) for kind and aliases.

Kernel name -> C++ function, first rule that matches (recorded in the op's notes):
1. `name+header`: CamelCase(kernel)+`Kernel` declared in `<kernel>_kernel.h`;
2. `camelcase`: CamelCase(kernel)+`Kernel` declared in any header (kernels/ first);
3. `case-insensitive`: the same, ignoring case and underscores (`conv2d_grad` ->
   `Conv2dGradKernel` or `Conv2DGradKernel`);
4. `header`: `<kernel>_kernel.h` declares exactly one kernel whose name starts with
   CamelCase(kernel) (`adam` -> adam_kernel.h -> `AdamDenseKernel`), or exactly one kernel.
Kernels the CPU wheel registers for the `CUSTOM` backend (shared by every plugin
device: `feed`, `reshape`, `flatten`, collectives, ...) also become
`Adapter(provider="paddle (all custom devices)")`.

`signature_drift()` compares an adapter's kernel parameters with the framework's.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from opdb.errors import OpscanError
from opdb.ingest.paddle_custom_device import (_pp_directives, line_of, mask_cpp, match_close,
                                              param_role, parse_cpp_params, split_top_level,
                                              structure_text)
from opdb.ingest.paddle_live import (REGISTRY_CALL, dtypes_of, keys_by_backend, layouts_of,
                                     parse_kernel_key)
from opdb.ingest.paddle_yaml import PaddleOpYaml, load_yaml_dir
from opdb.model import Adapter, FrameworkOp, IngestResult, Param, ProvenanceRecord, Source

ALL_CUSTOM_PROVIDER = "paddle (all custom devices)"
HEADER_SUBDIRS = ("", "fusion", "legacy", "selected_rows", "sparse", "strings")
# Registrations whose function does not follow the naming convention (checked against
# Paddle's PD_REGISTER_KERNEL calls, e.g. `conv2d_double_grad` -> phi::ConvGradGradKernel).
IRREGULAR = {
    "conv2d": "ConvKernel", "conv2d_grad": "ConvGradKernel",
    "conv2d_double_grad": "ConvGradGradKernel", "depthwise_conv2d": "DepthwiseConvKernel",
    "depthwise_conv2d_grad": "DepthwiseConvGradKernel",
}
_DECL_RE = re.compile(r"\bvoid\s+([A-Z]\w*Kernel)\s*\(")


@dataclass(frozen=True)
class KernelDecl:
    """One `void XxxKernel(const Context& dev_ctx, ...)` declaration in a phi header."""
    function: str
    header: str          # path relative to the include dir
    line: int
    params: tuple[Param, ...]   # after dev_ctx
    schema: str


def camel(kernel: str) -> str:
    """`adam_dense_param_sparse_grad` -> `AdamDenseParamSparseGrad`."""
    return "".join(p[:1].upper() + p[1:] for p in kernel.split("_") if p)


def find_include_dir() -> Path:
    """`<site-packages>/paddle/include` of the installed wheel, without importing paddle."""
    spec = importlib.util.find_spec("paddle")
    if spec is None or not spec.origin:
        raise OpscanError("paddle is not installed", "pip install paddlepaddle==3.3.1")
    inc = Path(spec.origin).parent / "include"
    if not (inc / "paddle" / "phi" / "kernels").is_dir():
        raise OpscanError(f"{inc} has no paddle/phi/kernels headers",
                          "install a paddlepaddle wheel that ships its C++ headers")
    return inc


_DEFINE_RE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\(([^)]*)\)\s*(.*)$", re.S)


def _macro_expansions(masked: str, flat: str) -> list[tuple[str, int]]:
    """(expanded text, invocation line) for same-header declaration macros such as
    `DECLARE_ACTIVATION_KERNEL(Relu)` -> `void ReluKernel(const Context& dev_ctx, ...);`."""
    out = []
    for start, end, _line, kind, _arg in _pp_directives(masked):
        if kind != "define":
            continue
        m = _DEFINE_RE.match(masked[start:end].replace("\\\n", " "))
        if not m or not re.search(r"\bvoid\s+[\w#]*Kernel\s*\(", m.group(3)):
            continue
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        for inv in re.finditer(r"\b" + m.group(1) + r"\s*\(", flat):
            close = match_close(flat, inv.end() - 1)
            if close < 0:
                continue
            args = [a.strip() for _, a in split_top_level(flat[inv.end():close])]
            if len(args) != len(params):
                continue
            mapping = dict(zip(params, args))
            body = re.sub(r"\b(" + "|".join(map(re.escape, params)) + r")\b",
                          lambda mm: mapping[mm.group(1)], m.group(3)) if params else m.group(3)
            out.append((re.sub(r"\s*##\s*", "", body), line_of(flat, inv.start())))
    return out


def parse_header(path: Path, rel: str) -> list[KernelDecl]:
    return parse_header_text(path.read_text(encoding="utf-8", errors="replace"), rel)


def parse_header_text(text: str, rel: str) -> list[KernelDecl]:
    """Kernel declarations (`void XKernel(const Context& dev_ctx, ...)`) of one phi header."""
    _, masked = mask_cpp(text)
    flat, _ = structure_text(masked)
    decls = _decls_in(flat, rel, None)
    for body, line in _macro_expansions(masked, flat):
        decls += _decls_in(body, rel, line)
    return decls


def _decls_in(flat: str, rel: str, line_override: int | None) -> list[KernelDecl]:
    decls = []
    for m in _DECL_RE.finditer(flat):
        close = match_close(flat, m.end() - 1)
        if close < 0:
            continue
        after = flat[close + 1:close + 40].lstrip()
        if not after.startswith((";", "{")):
            continue
        try:
            params = parse_cpp_params(flat[m.end():close])
        except ValueError:
            continue
        if not params or "Context" not in params[0].ctype:
            continue
        sig = tuple(Param(p.name, p.ctype, param_role(p.ctype), default=p.default)
                    for p in params[1:])
        schema = f"void {m.group(1)}(" + ", ".join(
            f"{p.ctype} {p.name}".strip() for p in params) + ")"
        line = line_override or line_of(flat, m.start())
        decls.append(KernelDecl(m.group(1), rel, line, sig, schema))
    return decls


def parse_phi_headers(include_dir: str | os.PathLike) -> list[KernelDecl]:
    """Every kernel declaration of `paddle/phi/kernels/{,fusion/,...}*.h`, sorted by path."""
    root = Path(include_dir)
    kdir = root / "paddle" / "phi" / "kernels"
    decls: list[KernelDecl] = []
    for sub in HEADER_SUBDIRS:
        d = kdir / sub if sub else kdir
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.h")):
            decls += parse_header(path, path.relative_to(root).as_posix())
    return decls


class DeclIndex:
    """Kernel name -> declaration, by the rules in the module docstring."""

    def __init__(self, decls: list[KernelDecl]):
        self.by_func: dict[str, list[KernelDecl]] = {}
        self.by_header: dict[str, list[KernelDecl]] = {}
        self.by_folded: dict[str, list[KernelDecl]] = {}
        for d in decls:
            self.by_func.setdefault(d.function, []).append(d)
            self.by_header.setdefault(d.header, []).append(d)
            self.by_folded.setdefault(d.function.lower(), []).append(d)

    @staticmethod
    def _top_first(cands: list[KernelDecl]) -> KernelDecl:
        return sorted(cands, key=lambda d: (d.header.count("/"), d.header, d.line))[0]

    def match(self, kernel: str) -> tuple[KernelDecl | None, str]:
        want = camel(kernel) + "Kernel"
        header = f"paddle/phi/kernels/{kernel}_kernel.h"
        exact = self.by_func.get(want, [])
        in_header = [d for d in exact if d.header == header]
        if in_header:
            return in_header[0], f"matched {want} by name in {header}"
        if exact:
            d = self._top_first(exact)
            return d, f"matched {want} by CamelCase name in {d.header}"
        folded = self.by_folded.get(kernel.replace("_", "").lower() + "kernel", [])
        if folded:
            d = self._top_first(folded)
            return d, f"matched {d.function} case-insensitively in {d.header}"
        dense = self.by_folded.get(kernel.replace("_", "").lower() + "densekernel", [])
        if dense:
            d = self._top_first(dense)
            return d, f"matched the dense variant {d.function} in {d.header}"
        if kernel in IRREGULAR and IRREGULAR[kernel] in self.by_func:
            d = self._top_first(self.by_func[IRREGULAR[kernel]])
            return d, f"matched {d.function} from the irregular-name table in {d.header}"
        in_file = self.by_header.get(header, [])
        starts = [d for d in in_file if d.function.lower().startswith(kernel.replace("_", ""))]
        funcs = {d.function for d in starts} or {d.function for d in in_file}
        if len(funcs) == 1:
            d = (starts or in_file)[0]
            return d, f"matched {d.function} by header file name {header}"
        return None, "no C++ declaration found in the installed phi headers"


def _registry_notes(keys: list) -> list[str]:
    by_backend: dict[str, set[str]] = {}
    for k in keys:
        by_backend.setdefault(k.backend, set()).add(k.dtype)
    return [f"registered {b}: {', '.join(sorted(v))}" for b, v in sorted(by_backend.items())]


def _aliases(yaml_cat: PaddleOpYaml | None, kernel: str) -> tuple[str, ...]:
    if yaml_cat is None:
        return ()
    names: list[str] = []
    ops = [o for o in yaml_cat.ops_for_kernel(kernel) if o != kernel]
    names += ops
    for name in [kernel] + list(yaml_cat.ops_for_kernel(kernel)):
        names += [a for a in yaml_cat.fluid_aliases(name) if a != kernel]
    return tuple(dict.fromkeys(names))


def _sha256_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _live_registry() -> tuple[dict[str, list[str]], str]:
    try:
        import paddle  # lazy: heavy
    except ImportError as exc:
        raise OpscanError(f"cannot import paddle ({exc})", "pip install paddlepaddle==3.3.1") \
            from None
    return paddle.base.core._get_registered_phi_kernels("function"), paddle.__version__


def load_paddle_catalog(yaml_dir: str | os.PathLike | None,
                        registry: dict[str, list[str]] | None = None,
                        include_dir: str | os.PathLike | None = None,
                        version: str | None = None) -> IngestResult:
    """FrameworkOps of every registered phi kernel, plus all-custom-device adapters.

    registry/include_dir/version default to the installed Paddle (imported lazily);
    tests pass a registry captured in the real format."""
    if registry is None:
        registry, live_version = _live_registry()
        version = version or live_version
    if not version:
        raise OpscanError("the Paddle version is unknown", "pass version= with a registry")
    inc = Path(include_dir) if include_dir else find_include_dir()
    decls = parse_phi_headers(inc)
    index = DeclIndex(decls)
    yaml_cat = load_yaml_dir(yaml_dir) if yaml_dir else None

    result = IngestResult()
    used_headers: set[str] = set()
    for kernel in sorted(registry):
        keys = sorted({parse_kernel_key(k) for k in registry[kernel]})
        decl, how = index.match(kernel)
        if decl:
            used_headers.add(decl.header)
        if yaml_cat is not None:
            kind = yaml_cat.kind(kernel)
        else:
            kind = "backward" if re.search(r"_grad(_|$)", kernel) else "forward"
        notes = [how] + _registry_notes(keys)
        result.framework_ops.append(FrameworkOp(
            framework="paddle", name=kernel,
            source=Source("paddle-wheel", version, decl.header if decl else "",
                          decl.line if decl else None),
            schema=decl.schema if decl else "", kind=kind,
            params=decl.params if decl else (), aliases=_aliases(yaml_cat, kernel),
            function=decl.function if decl else "", notes=tuple(notes)))
    for kernel, keys in keys_by_backend(registry, "CUSTOM").items():
        decl, how = index.match(kernel)
        result.adapters.append(Adapter(
            framework="paddle", provider=ALL_CUSTOM_PROVIDER, version=version, op=kernel,
            source=Source("paddle-wheel", version, REGISTRY_CALL), dtypes=dtypes_of(keys),
            signature=decl.params if decl else (), function=decl.function if decl else "",
            notes=(f"layouts: {', '.join(layouts_of(keys))}",
                   "registered by the paddle wheel for the CUSTOM backend: every plugin "
                   "device (npu included) gets it", how)))
    result.provenance.append(ProvenanceRecord(
        source="paddle-wheel", kind="kernel-registry", version=version, path=REGISTRY_CALL,
        description=f"phi kernel registry of paddle {version}", rows=len(registry)))
    header_paths = [inc / h for h in sorted(used_headers)]
    result.provenance.append(ProvenanceRecord(
        source="paddle-wheel", kind="kernel-headers", version=version,
        path="paddle/include/paddle/phi/kernels", sha256=_sha256_files(header_paths),
        description=f"{len(decls)} kernel declarations parsed; sha256 over the "
                    f"{len(header_paths)} headers matched to registered kernels",
        rows=sum(1 for op in result.framework_ops if op.function)))
    if yaml_cat is not None:
        for path in yaml_cat.files:
            result.provenance.append(ProvenanceRecord(
                source="paddle-yaml", kind="op-yaml", version=version, path=path.name,
                sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                description="Paddle op YAML used for kinds and aliases"))
    return result


# ---------------------------------------------------------------- signature drift

_RENAME_SUFFIXES = (("_in", ""), ("_outs", "_out"), ("_t", ""))


def _norm_name(name: str) -> str:
    for suf, rep in _RENAME_SUFFIXES:
        if name.endswith(suf) and len(name) > len(suf) + 1:
            return name[: -len(suf)] + rep
    return name


def _norm_type(ctype: str) -> str:
    t = re.sub(r"(?<![\w:])::", "", ctype)
    t = re.sub(r"\bphi::(?:dtype::)?", "", t)
    return re.sub(r"\s+", " ", t).strip()


def signature_drift(adapter_params, framework_params) -> list[str]:
    """Differences between an adapter kernel's params and the framework kernel's.

    Params are aligned by name, with the known renames folded (`beta1_pow_in` <->
    `beta1_pow`, `epsilon_in` <-> `epsilon`, `master_param_outs` <-> `master_param_out`,
    `strides_t` <-> `strides`). Types compare without the `phi::` namespace.
    Returns, in framework order: `added: <name> (<type>) at <i>` (the framework has
    it, the adapter does not), `removed: <name> (<type>)`, `retyped: <name> (<a> ->
    <b>)` and `moved: <name> (<i> -> <j>)` for params whose position shifted."""
    a_list = list(adapter_params)
    f_list = list(framework_params)
    a_idx = {_norm_name(p.name): (i, p) for i, p in enumerate(a_list)}
    f_idx = {_norm_name(p.name): (i, p) for i, p in enumerate(f_list)}
    out: list[str] = []
    for j, p in enumerate(f_list):
        key = _norm_name(p.name)
        if key not in a_idx:
            out.append(f"added: {p.name} ({p.ctype}) at {j}")
            continue
        i, ap = a_idx[key]
        if _norm_type(ap.ctype) != _norm_type(p.ctype):
            out.append(f"retyped: {p.name} ({ap.ctype} -> {p.ctype})")
        if i != j:
            out.append(f"moved: {p.name} ({i} -> {j})")
    for i, p in enumerate(a_list):
        if _norm_name(p.name) not in f_idx:
            out.append(f"removed: {p.name} ({p.ctype})")
    return out
