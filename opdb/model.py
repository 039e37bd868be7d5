"""opdb's data model: frozen dataclasses for every fact the database holds.

Every record carries a `Source` saying where it came from (source id, version or
commit, file, line). Ingesters produce these records; the store writes them to the
snapshot's JSONL tables and to SQLite; queries give them back. Nothing else in the
project passes raw dicts for these entities.

Serialization: `to_row()` gives a JSON-ready dict with a stable key order;
`from_row()` is its exact inverse (a round trip is lossless, tested).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")

FRAMEWORKS = ("torch", "paddle")
ROLES = ("input", "output", "inout")
EVIDENCE_KINDS = ("adapter", "cross-framework", "name", "curated")
OP_KINDS = ("forward", "backward", "optimizer", "other")


@dataclass(frozen=True, order=True)
class Source:
    """Where one fact came from.

    source: short id of the source (`cann:hicann/ops-nn`, `torch_npu-wheel`,
    `op-plugin`, `PaddleCustomDevice`, `paddle-wheel`, `paddle-yaml`, `torch`,
    `cann-install`, `curated`).
    version: release or commit of that source (`2.13.0`, `77090b64...`).
    path: file inside the source; line: 1-based line in that file, when known.
    date: commit or release date (ISO), when known.
    """

    source: str
    version: str = ""
    path: str = ""
    line: int | None = None
    date: str = ""

    def where(self) -> str:
        """`path:line@version` for error messages and report rows."""
        loc = self.path or self.source
        if self.line:
            loc += f":{self.line}"
        if self.version:
            loc += f"@{self.version[:12]}"
        return loc


@dataclass(frozen=True)
class Param:
    """One parameter of a C/C++ function or of a framework op schema.

    ctype: the C/C++ type text, whitespace-normalized, `*`/`&` attached
    (`const aclTensor*`, `const phi::DenseTensor&`, `Tensor?` for torch schemas).
    role: `input`, `output` or `inout`.
    dtypes: normalized dtype names (see opdb.dtypes) the param accepts; empty = unknown.
    default: default value text, when the signature has one.
    """

    name: str
    ctype: str
    role: str = "input"
    dtypes: tuple[str, ...] = ()
    default: str | None = None


@dataclass(frozen=True)
class AclnnApi:
    """One aclnn two-phase API entry point (`aclnnAdd`, `aclnnInplaceAdd`, `aclnnAddV3`).

    params: ordered params of `<name>GetWorkspaceSize`, without the trailing
    `uint64_t* workspaceSize, aclOpExecutor** executor`.
    products: product names as the docs write them; None when unknown (no
    products section), () when the section marks nothing supported.
    """

    name: str
    params: tuple[Param, ...]
    source: Source
    products: tuple[str, ...] | None = None
    category: str = ""
    op_dir: str = ""
    deprecated: bool = False
    experimental: bool = False
    internal: bool = False
    notes: tuple[str, ...] = ()

    table: ClassVar[str] = "aclnn_apis"

    def key(self) -> tuple:
        return (self.name,)

    def workspace_signature(self) -> str:
        """The exact C prototype of `<name>GetWorkspaceSize`."""
        params = [f"{p.ctype} {p.name}" for p in self.params]
        params += ["uint64_t* workspaceSize", "aclOpExecutor** executor"]
        return f"aclnnStatus {self.name}GetWorkspaceSize({', '.join(params)})"

    def run_signature(self) -> str:
        return (f"aclnnStatus {self.name}(void* workspace, uint64_t workspaceSize, "
                f"aclOpExecutor* executor, aclrtStream stream)")


@dataclass(frozen=True)
class FrameworkOp:
    """One operator of a framework catalog.

    torch: `name` is the ATen overload (`aten::add.Tensor`), `schema` its schema
    string, `params` the parsed schema arguments (ctype = schema type text).
    paddle: `name` is the phi kernel name (`adam`, `conv2d_grad`), `schema` the C++
    kernel function signature of the installed Paddle, `params` its parameters after
    `const Context& dev_ctx`; `aliases` holds the fluid op names (`matmul_v2`) and
    the YAML op names (`adam_`) that refer to the same kernel.
    kind: forward / backward / optimizer / other.
    """

    framework: str
    name: str
    source: Source
    schema: str = ""
    kind: str = "forward"
    params: tuple[Param, ...] = ()
    composite_implicit: bool = False
    has_decomposition: bool = False
    aliases: tuple[str, ...] = ()
    function: str = ""
    notes: tuple[str, ...] = ()

    table: ClassVar[str] = "framework_ops"

    def key(self) -> tuple:
        return (self.framework, self.name)


@dataclass(frozen=True)
class Adapter:
    """A framework adapter of one op for the NPU, in one provider release.

    provider: `torch_npu`, `PaddleCustomDevice`, `paddle (all custom devices)`.
    version: `2.13.0`, `develop`, `release-2.6`, `3.3.1`, or `local` for syncs.
    dtypes: registered dtypes (paddle); None when the adapter does not register per
    dtype (torch_npu: dtype support then comes from the aclnn APIs it calls).
    aclnn: aclnn APIs the adapter may call; legacy_ops: legacy CANN op types
    (OpCommand / NpuOpRunner).
    signature: the C++ kernel function's params (paddle), `schema`: torch schema.
    roles: the role of each API of `aclnn`, in the same order (see opdb.roles):
    `primary`, `composite` or `helper:<kind>`; empty until opdb.derive assigns them.
    """

    framework: str
    provider: str
    version: str
    op: str
    source: Source
    dtypes: tuple[str, ...] | None = None
    aclnn: tuple[str, ...] = ()
    legacy_ops: tuple[str, ...] = ()
    signature: tuple[Param, ...] = ()
    function: str = ""
    schema: str = ""
    notes: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()

    table: ClassVar[str] = "adapters"

    def apis_with_role(self, role: str) -> tuple[str, ...]:
        """APIs of `aclnn` whose role is `role` (`primary`, `helper`, `composite`)."""
        return tuple(a for a, r in zip(self.aclnn, self.roles) if r.split(":")[0] == role)

    def key(self) -> tuple:
        return (self.framework, self.provider, self.version, self.op)

    @property
    def target(self) -> str:
        return format_target(self.provider, self.version)


@dataclass(frozen=True)
class OpAclnnMapping:
    """Evidence that framework op `op` can run on aclnn API `aclnn`.

    evidence: `adapter` (an adapter of this op calls it), `cross-framework` (the
    other framework's adapter of the equivalent op calls it), `name` (normalized
    name match), `curated` (reviewed table shipped in opdb).
    confidence: 0..1.
    role: for `adapter` evidence, what the call does in the adapter (opdb.roles):
    `primary` (computes the op's outputs on the main path), `composite` (one of several
    compute calls none of which is the op by itself), `helper:<kind>` (zero-fill,
    cast, copy, broadcast, mask, layout, auxiliary). Only primary calls mean "op X is
    implemented by API Y"; derived evidence (cross-framework, name, curated) is primary.
    """

    framework: str
    op: str
    aclnn: str
    evidence: str
    confidence: float
    source: Source
    detail: str = ""
    role: str = "primary"

    @property
    def is_primary(self) -> bool:
        return self.role == "primary"

    table: ClassVar[str] = "op_aclnn_map"

    def key(self) -> tuple:
        return (self.framework, self.op, self.aclnn, self.evidence, self.source.source,
                self.source.version)


@dataclass(frozen=True)
class KnownFailure:
    """A dtype for which a provider's own test-suite skips an op on the NPU."""

    framework: str
    op: str
    test: str
    dtypes: tuple[str, ...]
    source: Source

    table: ClassVar[str] = "known_failures"

    def key(self) -> tuple:
        return (self.framework, self.op, self.test)


@dataclass(frozen=True)
class ProvenanceRecord:
    """One source the snapshot was built from: what, which version, which file."""

    source: str
    kind: str
    version: str
    path: str
    sha256: str = ""
    date: str = ""
    description: str = ""
    rows: int = 0

    table: ClassVar[str] = "provenance"

    def key(self) -> tuple:
        return (self.source, self.version, self.path)


RECORD_TYPES: tuple[type, ...] = (AclnnApi, FrameworkOp, Adapter, OpAclnnMapping,
                                  KnownFailure, ProvenanceRecord)
TABLES: dict[str, type] = {t.table: t for t in RECORD_TYPES}


@dataclass
class IngestResult:
    """What one ingester produced. Ingesters return this; the store persists it."""

    apis: list[AclnnApi] = field(default_factory=list)
    framework_ops: list[FrameworkOp] = field(default_factory=list)
    adapters: list[Adapter] = field(default_factory=list)
    mappings: list[OpAclnnMapping] = field(default_factory=list)
    known_failures: list[KnownFailure] = field(default_factory=list)
    provenance: list[ProvenanceRecord] = field(default_factory=list)

    def extend(self, other: "IngestResult") -> "IngestResult":
        for f in dataclasses.fields(self):
            getattr(self, f.name).extend(getattr(other, f.name))
        return self

    def records(self):
        """All records, table by table."""
        for f in dataclasses.fields(self):
            yield from getattr(self, f.name)


def format_target(provider: str, version: str) -> str:
    """`torch_npu==2.13.0`, `PaddleCustomDevice@develop`."""
    sep = "==" if provider == "torch_npu" else "@"
    return f"{provider}{sep}{version}"


# ---------------------------------------------------------------- serialization

def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return to_row(value)
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


def to_row(record) -> dict:
    """A JSON-ready dict in field order; None and empty defaults are kept explicit."""
    return {f.name: _encode(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _decode(tp: str, value: Any):
    if value is None:
        return None
    if tp.startswith("Source"):
        return Source(**value)
    if "tuple[Param" in tp:
        return tuple(Param(**{**p, "dtypes": tuple(p.get("dtypes", ()))}) for p in value)
    if tp.startswith("tuple[str"):
        return tuple(value)
    return value


def _decoder(tp: str):
    """`_decode` for one field type, chosen once per field (None: the JSON value as is)."""
    if tp.startswith("Source") or "tuple[Param" in tp or tp.startswith("tuple[str"):
        return lambda value: _decode(tp, value)
    return None


_DECODERS: dict[type, dict] = {}  # cls -> field name -> decoder (None: as is)


def _field_decoders(cls: type) -> dict:
    if cls not in _DECODERS:
        _DECODERS[cls] = {f.name: _decoder(str(f.type)) for f in dataclasses.fields(cls)}
    return _DECODERS[cls]


def from_row(cls: type[T], row: dict) -> T:
    """Inverse of `to_row`. Unknown keys are an error (a schema drift must be loud)."""
    decoders = _field_decoders(cls)
    if not decoders.keys() >= row.keys():
        extra = set(row) - set(decoders)
        raise ValueError(f"{cls.__name__}: unexpected keys {sorted(extra)}")
    kwargs = {k: v if v is None or decoders[k] is None else decoders[k](v)
              for k, v in row.items()}
    return cls(**kwargs)
