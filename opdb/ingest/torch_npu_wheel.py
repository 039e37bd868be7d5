"""torch_npu adapters read from a wheel, an installed tree, or committed extracted files.

torch_npu registers its NPU kernels from `torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`
(torch_npu's own `npu_native_functions.yaml` merged at build time with op-plugin's
`op_plugin_functions.yaml` filtered for the release's torch version). Every entry of
that file is one adapter of the release. The package is never imported (that needs
CANN); the yaml is read from the wheel zip, an installed directory, or the copy
committed under `opdb/sources/torch_npu/<version>/`.

Sections and how they become op names:
- `supported` (ATen overloads): `aten::<base>` for the default overload, else
  `aten::<base>.<overload>`. Entries are `- func: <schema>` dicts, or only a name
  (`- squeeze.dim`, `- func: clone`) for kernels torch_npu writes by hand. torchgen
  (and torchnpugen after it) matches such a name to exactly ONE overload, the one
  with that overload name (`squeeze` = the default overload, not all `squeeze.*`),
  so a bare name is not expanded. Its schema is taken from the installed torch's
  ATen registry when the release targets the same torch minor version as the
  installed torch, otherwise left empty with a note. A bare `supported` name that is
  also a `custom` entry of the same file (`empty_with_format`, `copy_memory_`) is the
  NPU kernel of that custom op and is not emitted twice.
- `custom`: `npu::<name>[.<overload>]` (torch_npu registers them in the `npu` namespace).
- `quant`, `autograd`: ATen overloads like `supported`.
- `symint`: repeats entries of the other sections (their C++ name gets `_symint`);
  it adds a `symint` note to the adapter and never a new adapter.

Top-level scalars (`backend`, `cpp_namespace`) are checked; an unknown list section
is a ParseError so a format change is loud.
"""
from __future__ import annotations

import hashlib
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import yaml

from opdb.errors import OpscanError, ParseError
from opdb.model import Adapter, IngestResult, ProvenanceRecord, Source

CODEGEN_YAML = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
VERSION_PY = "torch_npu/version.py"
SOURCE_ID = "torch_npu-wheel"

ATEN_SECTIONS = ("supported", "quant", "autograd")
KNOWN_SECTIONS = ATEN_SECTIONS + ("custom", "symint")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?")


class WheelError(OpscanError):
    """A torch_npu wheel or directory lacks the files opdb reads."""


@dataclass(frozen=True)
class WheelEntry:
    """One entry of npu_native_functions_by_codegen.yaml, with its location."""

    section: str
    name: str            # `<base>[.<overload>]`, no namespace
    schema: str          # `func:` text when it has an argument list, else ""
    line: int
    attrs: tuple[tuple[str, str], ...] = ()

    @property
    def op(self) -> str:
        ns = "npu" if self.section == "custom" else "aten"
        return f"{ns}::{self.name}"


def torch_minor(release: str) -> str:
    """`2.1.0.post17` -> `2.1`; `2.13.0` -> `2.13`; `2.13.0+cpu` -> `2.13`."""
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m:
        raise OpscanError(f"not a torch/torch_npu version: {release!r}",
                          hint="use a version like 2.13.0 or 2.1.0.post17")
    return f"{m.group(1)}.{m.group(2)}"


def parse_version_py(text: str, path: str = VERSION_PY) -> tuple[str, str]:
    """(`__version__`, `git_version`) from torch_npu/version.py, read as text."""
    found = dict(re.findall(r"^(__version__|git_version)\s*=\s*['\"]([^'\"]*)['\"]",
                            text, re.MULTILINE))
    if "__version__" not in found:
        raise ParseError(path, None, "no __version__ assignment",
                         hint="is this torch_npu/version.py from a torch_npu wheel?")
    return found["__version__"], found.get("git_version", "")


def _scalar_text(node) -> str:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    if isinstance(node, yaml.SequenceNode):
        return ", ".join(_scalar_text(n) for n in node.value)
    if isinstance(node, yaml.MappingNode):
        return "{" + ", ".join(f"{_scalar_text(k)}: {_scalar_text(v)}" for k, v in node.value) + "}"
    return ""


def yaml_parse_error(path, exc: yaml.YAMLError, hint: str = "") -> ParseError:
    """ParseError at the line PyYAML reports, naming where the broken construct began."""
    mark = getattr(exc, "problem_mark", None)
    msg = f"invalid YAML: {getattr(exc, 'problem', None) or exc}"
    ctx, ctx_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if ctx and ctx_mark is not None:
        msg += f" ({ctx} started at line {ctx_mark.line + 1})"
    return ParseError(path, mark.line + 1 if mark else None, msg, hint)


def parse_codegen_yaml(text: str, path: str = CODEGEN_YAML) -> list[WheelEntry]:
    """Entries of npu_native_functions_by_codegen.yaml in file order, with 1-based lines."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise yaml_parse_error(path, exc,
                               "re-extract the file with `python -m opdb.sources.torch_npu.fetch`")
    if not isinstance(root, yaml.MappingNode):
        raise ParseError(path, 1, "top level is not a mapping of sections",
                         hint="expected keys like backend, supported, custom")
    entries: list[WheelEntry] = []
    for key_node, value in root.value:
        section = key_node.value
        line = key_node.start_mark.line + 1
        if section in ("backend", "cpp_namespace"):
            if not isinstance(value, yaml.ScalarNode):
                raise ParseError(path, line, f"`{section}` must be a scalar")
            continue
        if section not in KNOWN_SECTIONS:
            raise ParseError(path, line, f"unknown section `{section}`",
                             hint=f"known sections: {', '.join(KNOWN_SECTIONS)}")
        if isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null"):
            continue  # empty section
        if not isinstance(value, yaml.SequenceNode):
            raise ParseError(path, line, f"section `{section}` is not a list")
        for item in value.value:
            entries.append(_parse_entry(section, item, path))
    return entries


def _parse_entry(section: str, item, path: str) -> WheelEntry:
    line = item.start_mark.line + 1
    attrs: dict[str, str] = {}
    if isinstance(item, yaml.ScalarNode):
        func = str(item.value).strip()
    elif isinstance(item, yaml.MappingNode):
        for k, v in item.value:
            attrs[str(k.value)] = _scalar_text(v)
        if "func" not in attrs:
            raise ParseError(path, line, f"entry in `{section}` has no `func:` key",
                             hint="every dict entry needs `func: <schema or name>`")
        func = attrs.pop("func").strip()
    else:
        raise ParseError(path, line, f"entry in `{section}` is neither a name nor a mapping")
    name = func.split("(", 1)[0].strip()
    if not _NAME_RE.fullmatch(name):
        raise ParseError(path, line, f"bad operator name {name!r} in `{section}`",
                         hint="expected `<base>[.<overload>]` or a full schema")
    schema = ""
    if "(" in func:
        from opdb.ingest.torch_catalog import SchemaError, parse_schema
        try:
            parse_schema(func)
        except SchemaError as exc:
            raise ParseError(path, line, str(exc)) from None
        schema = func
    return WheelEntry(section=section, name=name, schema=schema, line=line,
                      attrs=tuple(sorted(attrs.items())))


def entries_to_adapters(entries: Iterable[WheelEntry], version: str,
                        path: str = CODEGEN_YAML,
                        aten_schemas: dict[str, str] | None = None,
                        schema_torch: str = "") -> list[Adapter]:
    """Adapters of one release. `aten_schemas` (`aten::x.y` -> schema) fills bare names
    when given; `schema_torch` names the torch version it came from (for the note)."""
    entries = list(entries)
    custom_names = {e.name for e in entries if e.section == "custom"}
    symint = {e.name for e in entries if e.section == "symint"}
    seen: dict[tuple[str, str], WheelEntry] = {}
    also: dict[str, list[str]] = {}
    kept: list[WheelEntry] = []
    for e in entries:
        if e.section == "symint":
            continue
        if e.section in ATEN_SECTIONS and not e.schema and e.name in custom_names:
            continue  # NPU kernel of a custom op listed by name in `supported`
        if (e.section, e.op) in seen:
            first = seen[(e.section, e.op)].line
            raise ParseError(path, e.line, f"{e.op} listed twice in `{e.section}` "
                             f"(first at line {first})", hint="remove the duplicate entry")
        seen[(e.section, e.op)] = e
        if e.op in also:  # e.g. `_thnn_fused_gru_cell` in both `autograd` and `supported`
            also[e.op].append(f"also in section={e.section} (line {e.line})")
            continue
        also[e.op] = []
        kept.append(e)
    adapters: list[Adapter] = []
    for e in kept:
        notes = [f"section={e.section}"] + also[e.op]
        notes += [f"{k}={v}" for k, v in e.attrs]
        schema = e.schema
        if not schema:
            notes.append("name-only entry (torch_npu-native kernel)")
            if aten_schemas is not None and e.op in aten_schemas:
                schema = aten_schemas[e.op]
                notes.append(f"schema from torch {schema_torch} ATen registry")
            else:
                notes.append("schema not in the wheel")
        if e.name in symint:
            notes.append("symint")
        adapters.append(Adapter(
            framework="torch", provider="torch_npu", version=version, op=e.op,
            source=Source(SOURCE_ID, version, path, e.line), schema=schema,
            notes=tuple(notes)))
    adapters.sort(key=lambda a: a.op)
    return adapters


def _installed_aten_schemas(release: str) -> tuple[dict[str, str] | None, str]:
    """The installed torch's schemas when it has the release's torch minor version."""
    try:
        import torch  # lazy: heavy, optional
    except ImportError:
        return None, ""
    if torch_minor(torch.__version__) != torch_minor(release):
        return None, ""
    from opdb.ingest.torch_catalog import aten_schemas
    return aten_schemas(), torch.__version__.split("+")[0]


def requires_torch_spec(metadata: str) -> str:
    """The torch requirement of a wheel's METADATA (`Requires-Dist: torch==2.13.0.*` ->
    `==2.13.0.*`; `torch (==2.1.0+cpu)` -> `==2.1.0+cpu`), or "" when it names none."""
    for line in metadata.splitlines():
        m = re.match(r"Requires-Dist:\s*torch\s*\(?\s*([^;)]*?)\s*\)?\s*(?:;.*)?$", line)
        if m:
            return m.group(1).replace(" ", "")
    return ""


def describe_release(version: str, git_version: str, requires_torch: str) -> str:
    """The provenance description of one torch_npu release (names the torch it is built for)."""
    desc = f"torch_npu {version} (Ascend/pytorch {git_version or 'unknown commit'})"
    if requires_torch:
        desc += f"; requires torch{requires_torch}"
    return desc


def _result(text: str, version: str, git_version: str, origin: str, sha256: str,
            resolve_schemas: bool, requires_torch: str = "") -> IngestResult:
    entries = parse_codegen_yaml(text, CODEGEN_YAML if not origin else origin)
    schemas, schema_torch = _installed_aten_schemas(version) if resolve_schemas else (None, "")
    adapters = entries_to_adapters(entries, version, CODEGEN_YAML, schemas, schema_torch)
    desc = describe_release(version, git_version, requires_torch)
    return IngestResult(adapters=adapters, provenance=[ProvenanceRecord(
        source=SOURCE_ID, kind="adapter-list", version=version, path=CODEGEN_YAML,
        sha256=sha256, description=desc, rows=len(adapters))])


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_wheel(path: str | Path, resolve_schemas: bool = True) -> IngestResult:
    """Adapters of a torch_npu wheel file (read with zipfile, never imported)."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            for need in (CODEGEN_YAML, VERSION_PY):
                if need not in names:
                    raise WheelError(f"{path}: no {need} inside",
                                     hint="is this a torch_npu wheel (2.1 or newer)?")
            data = zf.read(CODEGEN_YAML)
            version, git = parse_version_py(zf.read(VERSION_PY).decode("utf-8"),
                                            f"{path}!{VERSION_PY}")
            meta = sorted(n for n in names if n.endswith(".dist-info/METADATA"))
            requires = requires_torch_spec(zf.read(meta[0]).decode("utf-8", "replace")) if meta else ""
    except (zipfile.BadZipFile, FileNotFoundError, IsADirectoryError) as exc:
        raise WheelError(f"{path}: cannot read wheel: {exc}",
                         hint="pass a .whl file from `pip download --no-deps torch-npu==X`") from None
    return _result(data.decode("utf-8"), version, git, f"{path}!{CODEGEN_YAML}", _sha(data),
                   resolve_schemas, requires)


def load_installed(root: str | Path, resolve_schemas: bool = True) -> IngestResult:
    """Adapters of an installed torch_npu: `root` is site-packages or the torch_npu dir."""
    root = Path(root)
    if root.name == "torch_npu":
        root = root.parent
    yaml_path, ver_path = root / CODEGEN_YAML, root / VERSION_PY
    for p in (yaml_path, ver_path):
        if not p.is_file():
            raise WheelError(f"{p} not found", hint="point at site-packages or its torch_npu dir")
    data = yaml_path.read_bytes()
    version, git = parse_version_py(ver_path.read_text(encoding="utf-8"), str(ver_path))
    requires = ""
    for meta in sorted(root.glob("torch_npu-*.dist-info/METADATA")):
        requires = requires_torch_spec(meta.read_text(encoding="utf-8", errors="replace"))
    return _result(data.decode("utf-8"), version, git, str(yaml_path), _sha(data),
                   resolve_schemas, requires)


def load_release_dir(directory: str | Path, resolve_schemas: bool = True) -> IngestResult:
    """Adapters of one committed release dir `opdb/sources/torch_npu/<version>/`.

    The dir holds the extracted `npu_native_functions_by_codegen.yaml`; version and
    git_version come from the sibling provenance.json written by the fetch script.
    """
    import json

    directory = Path(directory)
    yaml_path = directory / Path(CODEGEN_YAML).name
    if not yaml_path.is_file():
        raise WheelError(f"{yaml_path} not found",
                         hint="run `python -m opdb.sources.torch_npu.fetch` to extract it")
    version, git, requires = directory.name, "", ""
    prov_path = directory.parent / "provenance.json"
    if prov_path.is_file():
        try:
            prov = json.loads(prov_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ParseError(prov_path, exc.lineno, f"invalid JSON: {exc.msg}") from None
        rel = prov.get("releases", {}).get(directory.name)
        if rel:
            version, git = rel["pypi_version"], rel.get("git_version", "")
            requires = rel.get("requires_torch", "")
    data = yaml_path.read_bytes()
    return _result(data.decode("utf-8"), version, git, str(yaml_path), _sha(data),
                   resolve_schemas, requires)


def default_sources_dir() -> Path:
    """`opdb/sources/torch_npu` of this checkout / installed package."""
    return Path(__file__).resolve().parent.parent / "sources" / "torch_npu"


def load_committed_releases(versions: Iterable[str] | None = None,
                            resolve_schemas: bool = True) -> IngestResult:
    """All (or the named) committed releases under opdb/sources/torch_npu/, sorted."""
    base = default_sources_dir()
    dirs = sorted(p for p in base.iterdir() if (p / Path(CODEGEN_YAML).name).is_file())
    if versions is not None:
        wanted = set(versions)
        missing = wanted - {d.name for d in dirs}
        if missing:
            raise WheelError(f"no committed torch_npu release {sorted(missing)} under {base}",
                             hint=f"available: {', '.join(d.name for d in dirs)}")
        dirs = [d for d in dirs if d.name in wanted]
    result = IngestResult()
    for d in dirs:
        result.extend(load_release_dir(d, resolve_schemas))
    return result


def adapted_ops(result: IngestResult, version: str) -> set[str]:
    """Op names (`aten::x.y`, `npu::z`) torch_npu `version` has an adapter for."""
    ops = {a.op for a in result.adapters if a.provider == "torch_npu" and a.version == version}
    if not ops:
        have = sorted({a.version for a in result.adapters if a.provider == "torch_npu"})
        raise OpscanError(f"no torch_npu {version} adapters in this result",
                          hint=f"versions present: {', '.join(have) or 'none'}")
    return ops

