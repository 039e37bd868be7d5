"""op-plugin facts: which aclnn APIs each torch_npu adapter calls, and known dtype gaps.

op-plugin (Ascend/op-plugin) holds the ATen adapters of torch_npu. Three readers:

(a) `load_aclnn_map(path, release_versions)` reads the shared extraction
    `op_plugin_aclnn_map.jsonl` (one record per `func:` entry of op-plugin's
    `op_plugin_functions.yaml` at one commit) and attaches to every torch_npu release
    adapter (an op present in that release's wheel yaml) the aclnn APIs and legacy
    ACL op types of the matching record, and emits `OpAclnnMapping`s. A record counts
    for a release only when the release's torch version (`v2.13` for torch_npu
    2.13.0) is in one of its `versions` lists (`acl_op`, `op_api`, `sparse`: what
    torchnpugen keeps); a record whose lists exclude it is not an adapter of that
    release. aclnn APIs of a release: none when `op_api` excludes its torch version
    (legacy acl_op path only); for the extraction's target version (`v2.13`)
    `aclnn_target` (definitions compiled for it); else `aclnn` (all definitions).
    Mapping confidence: 0.9 for `aclnn` (the adapter's own code names the API),
    0.6 for `aclnn_indirect` (reached through another op entry point).
(b) `load_unsupported_info(path)` reads op-plugin's `test/unsupported_ops_info_base.yaml`
    (OpInfo name -> test -> dtypes skipped on NPU) into `KnownFailure`s, keyed by the
    OpInfo name as written; `opinfo_names_for(aten_op)` gives OpInfo name candidates.
(c) `read_checkout(dir)` parses an op-plugin checkout itself: the yaml, the
    `op_plugin/ops/opapi/*.cpp` kernels, the legacy `op_plugin/ops/aclops/*.cpp` kernels and
    the `op_plugin/utils` helpers, with a lexical C++ reader (limits below).
    `checkout_records` turns it into records of the jsonl's schema and `load_checkout_map`
    attaches them to release adapters with the same `attach_records` as (a): that is
    `opdb sync op-plugin`. `scan_checkout(dir)` gives one adapter per yaml op without a
    wheel (for inspection and the parser agreement).

Lexical C++ reader limits (scan_checkout): comments, string literals and preprocessor
lines are masked, then functions are found as `name(...) [const] {` at namespace
scope inside `namespace op_api`; classes, structs and lambdas are not separate
functions (their tokens count for the enclosing function). aclnn names are taken
from `EXEC_*(aclnnX, ...)` (executed), `DO_*COMPATIBILITY(aclnnX[, aclnnY], ...)`
(probed) and string literals `"aclnnX"` (`check_aclnn_kernel_available`,
`GetOpApiFuncAddr`), plus those of helpers called by name (transitively; the same file first,
else `op_plugin/utils/*.cpp` and `op_plugin/utils/custom_functions/<opapi|aclops>/*.cpp`; also
`op_plugin::...::x(...)`; the overloads taking as many parameters as the call passes). Legacy
ACL op types: `.Name("X")` literals in the `acl_op` definition matched like op_api's, its
helpers, and `acl_op::x(...)` calls into the same file (names built at run time are not seen).
`#if VERSION_BETWEEN(...)` guards are ignored (all branches count). Overloads that
share a C++ name are told apart by their full schema (the binding kind of every
parameter: Tensor, Tensor?, Scalar, Scalar[], int[], ...; `match=signature`), else by
parameter count; when several remain, all are merged (`match=arity-ambiguous`).
Calls through `op_api::x(...)` are followed: into the same file, transitively (their
APIs count as the adapter's own, `aclnn`), and into other opapi files one level
(`aclnn_indirect`: the called kernel's own APIs, as op-plugin's extraction records them);
a call reaches the overloads of `x` taking as
many parameters as it passes arguments (all when none does). `at::x(...)` calls and tensor
methods `t.x(...)` dispatch to the NPU kernel op_api::x registers: their APIs are
`aclnn_indirect` too. `custom_ops::x(...)` calls and kernels generated from the yaml (`gen_opapi`) count as
targets too. From op_api code, `acl_op::x` (the legacy path) is not followed. An entry not built
through op_api for the chosen torch version has no C++ function name. Generated kernels (`gen_opapi`) take their API from the yaml (`exec`,
`cpu_scalar_op`, `structured_inherit`).
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

import yaml

from opdb.dtypes import normalize_dtypes
from opdb.errors import OpscanError, ParseError
from opdb.ingest.cpplex import LineIndex, lex, split_top_level
from opdb.ingest.torch_catalog import SchemaError, is_out_variant, parse_schema, split_op_name
from opdb.ingest.torch_npu_wheel import yaml_parse_error
from opdb.model import (Adapter, IngestResult, KnownFailure, OpAclnnMapping,
                        ProvenanceRecord, Source)

SOURCE_ID = "op-plugin"
# Commit of Ascend/op-plugin the shared extraction was made from (its README).
SHARED_COMMIT = "517f2e7d0f202f38b76310706cb977ca2388ad21"
SHARED_TARGET = "v2.13"
FUNCTIONS_YAML = "op_plugin/config/op_plugin_functions.yaml"
UNSUPPORTED_YAML = "test/unsupported_ops_info_base.yaml"
CONF_DIRECT, CONF_INDIRECT, CONF_PROBED = 0.9, 0.6, 0.7
YAML_SECTIONS = ("official", "autograd", "custom", "symint", "quant")
_REQUIRED = ("op", "schema", "section", "versions", "aclnn", "aclnn_target",
             "aclnn_indirect", "built_for_target", "aclop_kernels", "source_paths",
             "op_api_source_lines", "cpp_function", "op_api_impl", "match")


# Names the shared extraction lists as aclnn APIs that are op-plugin C++ functions
# (docs/opdb-sources-errata.md): op_api::aclnnNotFound / aclnnNotFoundV2 are the fallbacks
# `DO_COMPATIBILITY(aclnnSilentCheck[V2], aclnnNotFound[V2](val))` calls
# (op_plugin/ops/opapi/SilentCheckV2KernelNpuOpApi.cpp:23, SilentCheckV3KernelNpuOpApi.cpp:23
# at 517f2e7d0f20). No CANN header or doc declares them.
NOT_APIS = frozenset({"aclnnNotFound", "aclnnNotFoundV2",
                      # a single-phase CANN config call (`GetOpApiFuncAddr("aclnnSetPytorchRandom")`
                      # in op_plugin/utils/RandomUtil.h), out of the catalog's two-phase scope
                      "aclnnSetPytorchRandom"})


def torch_version_tag(release: str) -> str:
    """torch_npu release -> op-plugin version tag: `2.1.0.post17` -> `v2.1`."""
    from opdb.ingest.torch_npu_wheel import torch_minor

    return "v" + torch_minor(release)


def _vkey(version: str) -> tuple:
    """Sort key for release versions: 2.1.0.post17 < 2.6.0.post5 < 2.13.0 (PEP 440)."""
    from opdb.versions import version_key

    return version_key(version)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------ (a) the shared jsonl


def read_aclnn_map(path: str | Path) -> list[tuple[int, dict]]:
    """(line, record) for every record of op_plugin_aclnn_map.jsonl, strictly checked."""
    path = Path(path)
    if not path.is_file():
        raise OpscanError(f"{path} not found",
                          hint="pass opdb/sources/torch/op_plugin_aclnn_map.jsonl")
    records: list[tuple[int, dict]] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ParseError(path, lineno, f"invalid JSON: {exc.msg}") from None
            if not isinstance(rec, dict):
                raise ParseError(path, lineno, "record is not a JSON object")
            missing = [k for k in _REQUIRED if k not in rec]
            if missing:
                raise ParseError(path, lineno, f"record lacks {', '.join(missing)}",
                                 hint="expected the op_plugin_aclnn_map.jsonl schema (README)")
            if not re.fullmatch(r"(aten|npu)::[A-Za-z_]\w*(\.\w+)?", str(rec["op"])):
                raise ParseError(path, lineno, f"bad op name {rec['op']!r}",
                                 hint="expected aten::<base>[.<overload>] or npu::<name>")
            if not isinstance(rec["versions"], dict):
                raise ParseError(path, lineno, "`versions` is not an object")
            records.append((lineno, rec))
    return records


FIXES = "op_plugin_fixes.json"


def apply_fixes(records: list[tuple[int, dict]], fixes_path: Path) -> list[tuple[int, dict]]:
    """Records with the extraction's false `calls_ops` (op_plugin_fixes.json, each with its
    evidence) removed, and the APIs only those calls gave dropped from `aclnn_indirect`
    (an API the record also names itself stays); legacy op types the extraction missed
    (`missing_aclop_kernels`) added to `aclop_kernels`. No fixes file: records unchanged."""
    if not fixes_path.is_file():
        return records
    try:
        doc = json.loads(fixes_path.read_text(encoding="utf-8"))
        false = {}
        for fix in doc["false_calls"]:
            for e in fix["entries"]:
                false.setdefault((e["op"], e["schema"]), []).append(
                    (fix["call"], set(fix["drop_indirect"])))
        legacy = {}
        for fix in doc.get("missing_aclop_kernels", ()):
            legacy.setdefault((fix["op"], fix["schema"]), set()).update(fix["add"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ParseError(fixes_path, None, f"not an op-plugin fixes file: {exc}",
                         hint="expected {false_calls: [{call, drop_indirect, evidence, entries}]}") from None
    out = []
    for lineno, rec in records:
        fixes = false.get((rec["op"], rec["schema"]))
        if fixes:
            calls = {c for c, _ in fixes}
            drop = set().union(*(d for _, d in fixes)) - set(rec["aclnn"])
            rec = {**rec, "aclnn_indirect": [x for x in rec["aclnn_indirect"] if x not in drop],
                   "calls_ops": [c for c in rec.get("calls_ops", ()) if c not in calls]}
        add = legacy.get((rec["op"], rec["schema"]))
        if add:
            rec = {**rec, "aclop_kernels": sorted(set(rec["aclop_kernels"]) | add)}
        out.append((lineno, rec))
    return out


def _builds(rec: dict, tag: str) -> bool:
    v = rec["versions"]
    return any(tag in v.get(k, ()) for k in ("acl_op", "op_api", "sparse"))


def _yaml_func_lines(yaml_path: Path | None) -> dict[str, int]:
    """`func:` text -> line in op_plugin_functions.yaml (first occurrence)."""
    if yaml_path is None or not yaml_path.is_file():
        return {}
    lines: dict[str, int] = {}
    for lineno, line in enumerate(yaml_path.read_text(encoding="utf-8").splitlines(), 1):
        m = re.match(r"\s*-\s*func:\s*(.+?)\s*$", line)
        if m:
            lines.setdefault(m.group(1), lineno)
    return lines


def _mapping_source(rec: dict, func_lines: dict[str, int], commit: str = SHARED_COMMIT) -> Source:
    for at in rec["op_api_source_lines"]:
        p, _, ln = at.rpartition(":")
        if p and ln.isdigit():
            return Source(SOURCE_ID, commit, p, int(ln))
    path = rec["source_paths"][0] if rec["source_paths"] else FUNCTIONS_YAML
    line = func_lines.get(rec["schema"]) if path == FUNCTIONS_YAML else None
    return Source(SOURCE_ID, commit, path, line)


def _pick_record(candidates: list[tuple[int, dict]], schema: str, tag: str):
    built = [c for c in candidates if _builds(c[1], tag)]
    if not built:
        return None
    same = [c for c in built if c[1]["schema"] == schema]
    return (same or built)[0]


def load_aclnn_map(path: str | Path, release_versions: Iterable[str],
                   wheel: IngestResult | None = None) -> IngestResult:
    """Release adapters enriched with op-plugin's aclnn facts, plus mappings.

    `release_versions`: torch_npu releases (`2.13.0`, `2.6.0.post5`, ...). `wheel`:
    their adapters from torch_npu_wheel (default: the committed releases under
    opdb/sources/torch_npu). Returns the adapters of those releases (wheel adapters
    with `aclnn`, `legacy_ops`, `function` and notes filled in where a record applies;
    adapters of torch_npu-native kernels unchanged), one OpAclnnMapping per
    (op, aclnn API), and a provenance record for the jsonl.
    """
    path = Path(path)
    records = apply_fixes(read_aclnn_map(path), path.parent / FIXES)
    result = attach_records(
        records, release_versions, wheel, commit=SHARED_COMMIT, origin=path.name,
        target=SHARED_TARGET,
        func_lines=_yaml_func_lines(path.parent / "op_plugin" / "op_plugin_functions.yaml"))
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="aclnn-map", version=SHARED_COMMIT, path=path.name,
        sha256=_sha256(path), description="op-plugin op -> aclnn extraction (Ascend/op-plugin)",
        rows=len(records)))
    return result


def attach_records(records: list[tuple[int, dict]], release_versions: Iterable[str],
                   wheel: IngestResult | None, *, commit: str, origin: str,
                   target: str | None, func_lines: dict[str, int]) -> IngestResult:
    """The attachment `load_aclnn_map` and a checkout sync share: each release's wheel
    adapters get the aclnn APIs, legacy op types and C++ name of the record built for the
    release's torch version, plus one OpAclnnMapping per (op, API). `records`: (line,
    record) in the jsonl schema; `origin`: the file `line` is in (for the notes);
    `target`: the torch version whose `aclnn_target` counts (None: `aclnn` everywhere)."""
    from opdb.ingest import torch_npu_wheel

    releases = list(dict.fromkeys(release_versions))
    if wheel is None:
        wheel = torch_npu_wheel.load_committed_releases(releases)
    by_op: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for lineno, rec in records:
        by_op[rec["op"]].append((lineno, rec))

    result = IngestResult()
    # (op, aclnn) -> [confidence, source, detail parts, releases]
    maps: dict[tuple[str, str], dict] = {}
    for release in releases:
        tag = torch_version_tag(release)
        adapters = [a for a in wheel.adapters if a.provider == "torch_npu" and a.version == release]
        if not adapters:
            raise OpscanError(f"no torch_npu {release} adapters to attach op-plugin facts to",
                              hint="ingest that release's wheel first (torch_npu_wheel)")
        for adapter in adapters:
            candidates = by_op.get(adapter.op, [])
            picked = _pick_record(candidates, adapter.schema, tag)
            if picked is None:
                note = ("op-plugin@%s builds no entry of this op for %s" % (commit[:12], tag)
                        if candidates else "not in op-plugin (torch_npu-native kernel)")
                result.adapters.append(replace(adapter, notes=adapter.notes + (note,)))
                continue
            lineno, rec = picked
            versions = rec["versions"]
            has_op_api = tag in versions.get("op_api", ())
            if not has_op_api:
                direct: list[str] = []
            elif tag == target and rec["built_for_target"]:
                direct = [x for x in rec["aclnn_target"] if x not in NOT_APIS]
            else:
                direct = [x for x in rec["aclnn"] if x not in NOT_APIS]
            indirect = [x for x in rec["aclnn_indirect"] if x not in direct and x not in NOT_APIS] \
                if has_op_api else []
            legacy = list(rec["aclop_kernels"]) if tag in versions.get("acl_op", ()) else []
            impl = [k for k in ("acl_op", "op_api", "sparse") if tag in versions.get(k, ())]
            notes = [f"op-plugin@{commit[:12]} {origin}:{lineno}",
                     f"impl_ns({tag})={','.join(impl)}"]
            if rec["schema"] != adapter.schema and adapter.schema:
                notes.append("op-plugin schema differs from the wheel's")
            if indirect:
                notes.append("aclnn_indirect=" + ",".join(indirect))
            result.adapters.append(replace(
                adapter, aclnn=tuple(sorted(set(direct))), legacy_ops=tuple(sorted(set(legacy))),
                function=rec["cpp_function"] or adapter.function,
                notes=adapter.notes + tuple(notes)))
            src = _mapping_source(rec, func_lines, commit)
            how = f"{rec['op_api_impl']} op_api::{rec['cpp_function']} (match={rec['match']})"
            for api, conf, kind in [(a, CONF_DIRECT, "named by the adapter") for a in direct] + \
                                   [(a, CONF_INDIRECT, "via another op") for a in indirect]:
                m = maps.setdefault((adapter.op, api), {
                    "conf": conf, "source": src, "detail": f"{how}; {kind}", "releases": set()})
                if conf > m["conf"]:
                    m.update(conf=conf, source=src, detail=f"{how}; {kind}")
                m["releases"].add(release)
    for (op, api), m in sorted(maps.items()):
        result.mappings.append(OpAclnnMapping(
            framework="torch", op=op, aclnn=api, evidence="adapter", confidence=m["conf"],
            source=m["source"],
            detail=f"{m['detail']}; torch_npu {', '.join(sorted(m['releases'], key=_vkey))}"))
    result.adapters.sort(key=lambda a: (a.version, a.op))
    return result


# ----------------------------------------------------- (b) unsupported_ops_info


def load_unsupported_info(path: str | Path, commit: str = SHARED_COMMIT,
                          repo_path: str = UNSUPPORTED_YAML) -> list[KnownFailure]:
    """KnownFailures from op-plugin's unsupported_ops_info yaml.

    One record per (OpInfo name, test). `op` is the OpInfo name exactly as written
    (a YAML `null:` key stays the text `null`). Dtype entries `''` / `None` (test not
    dtype-specific) give `dtypes=()`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OpscanError(f"cannot read {path}: {exc.strerror}",
                          hint="pass op-plugin's test/unsupported_ops_info_base.yaml") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise yaml_parse_error(path, exc) from None
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        raise ParseError(path, 1, "top level is not a mapping of OpInfo names")
    out: list[KnownFailure] = []
    seen: set[tuple[str, str]] = set()
    for key, tests in root.value:
        op = str(key.value)
        if not isinstance(tests, yaml.MappingNode):
            raise ParseError(path, key.start_mark.line + 1,
                             f"`{op}` must map test names to dtype lists")
        for tkey, dtypes in tests.value:
            line = tkey.start_mark.line + 1
            test = str(tkey.value)
            if not isinstance(dtypes, yaml.SequenceNode) or \
                    any(not isinstance(d, yaml.ScalarNode) for d in dtypes.value):
                raise ParseError(path, line, f"`{op}.{test}` must be a list of dtype names")
            if (op, test) in seen:
                raise ParseError(path, line, f"`{op}.{test}` listed twice")
            seen.add((op, test))
            names = [d.value for d in dtypes.value if d.value not in ("", "None", "null", "~")]
            out.append(KnownFailure(framework="torch", op=op, test=test,
                                    dtypes=normalize_dtypes(names),
                                    source=Source(SOURCE_ID, commit, repo_path, line)))
    out.sort(key=lambda k: (k.op, k.test))
    return out


_NAMESPACED = ("linalg", "special", "fft", "sparse", "nested")


def opinfo_names_for(aten_op: str, known: Iterable[str] | None = None) -> list[str]:
    """OpInfo name candidates for an ATen overload, best first (heuristic).

    `aten::add.Tensor` -> [`add`, `__radd__`, `nn.functional.add`, `_refs.add`, ...].
    Rules: the overload is dropped; a trailing `_` (in-place) and a leading `_`
    (private twin such as `_softmax`) are stripped as extra candidates; `_backward`
    ops map to their forward op (OpInfo `test_backward` covers them);
    `linalg_x`/`special_x`/`fft_x`/`sparse_x`/`nested_x` -> `linalg.x` ...; each base
    also as `nn.functional.<base>`, `__r<base>__`, `_refs.<base>` and
    `_refs.nn.functional.<base>`. With `known` (e.g. the names in the yaml), only
    candidates present there are returned.
    """
    base, _ = split_op_name(aten_op)
    bases: list[str] = []

    def add(b: str) -> None:
        if b and b not in bases:
            bases.append(b)

    add(base)
    add(base.rstrip("_") if not base.endswith("__") else base)
    for b in list(bases):
        for suffix in ("_backward_data", "_backward"):
            if b.endswith(suffix):
                add(b[: -len(suffix)])
    for b in list(bases):
        if b.startswith("_") and not b.startswith("__"):
            add(b.lstrip("_"))
    names: list[str] = []
    for b in bases:
        for ns in _NAMESPACED:
            if b.startswith(ns + "_"):
                names.append(f"{ns}.{b[len(ns) + 1:]}")
        names += [b, f"__r{b}__", f"nn.functional.{b}", f"_refs.{b}",
                  f"_refs.nn.functional.{b}"]
    names = list(dict.fromkeys(names))
    if known is not None:
        known_set = set(known)
        names = [n for n in names if n in known_set]
    return names


# ------------------------------------------------------ (c) scanning a checkout


@dataclass
class CppFunction:
    """One function definition found by the lexical reader."""

    name: str
    path: str
    line: int
    namespaces: tuple[str, ...]
    n_params: int
    param_kinds: tuple[str, ...] = ()  # see cpp_param_kind
    executed: list[str] = field(default_factory=list)
    probed: list[str] = field(default_factory=list)
    legacy: list[str] = field(default_factory=list)  # ACL op types: `OpCommand ... .Name("X")`
    called: set[str] = field(default_factory=set)
    called_args: set[tuple[str, int]] = field(default_factory=set)  # `x(a, b)`: (x, 2)
    op_api_called: set[tuple[str, int]] = field(default_factory=set)  # `op_api::x(a, b)`: (x, 2)
    at_called: set[tuple[str, int]] = field(default_factory=set)  # `at::x(...)`: dispatched ops
    acl_op_called: set[tuple[str, int]] = field(default_factory=set)  # `acl_op::x(a)`: (x, 1)


_PUNCT = re.compile(r"[;{}]")
_HEADER_FUNC = re.compile(r"([A-Za-z_~]\w*)\s*\((.*)\)\s*(?:const\s*)?(?:noexcept\s*)?$", re.S)
_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype"}


def _split_params(params: str) -> list[str]:
    params = params.strip()
    if not params or params == "void":
        return []
    return [p.strip() for p in split_top_level(params, "(<[{")]


def cpp_param_kind(param: str) -> str:
    """Binding kind of one C++ parameter (`const at::Tensor& self` -> `T`), comparable
    with `schema_param_kind`; `?` when unknown (matches anything)."""
    t = param.split("=", 1)[0].strip()
    t = re.sub(r"\b[A-Za-z_]\w*$", "", t).strip() or t  # drop the parameter name
    t = re.sub(r"\b(const|at|c10|std|torch)\b(::)?", "", t).replace("&", "").replace(" ", "")
    t = t.replace("::", "")
    table = {"Tensor": "T", "optional<Tensor>": "T?", "TensorList": "T[]", "ITensorListRef": "T[]",
             "List<optional<Tensor>>": "T?[]", "Scalar": "S", "optional<Scalar>": "S?",
             "IntArrayRef": "I[]", "SymIntArrayRef": "I[]", "OptionalIntArrayRef": "I[]?",
             "OptionalSymIntArrayRef": "I[]?", "int64_t": "i", "SymInt": "i", "optional<int64_t>": "i?",
             "optional<SymInt>": "i?", "double": "f", "optional<double>": "f?", "bool": "b",
             "optional<bool>": "b?", "ScalarType": "dtype", "optional<ScalarType>": "dtype?",
             "string_view": "str", "optional<string_view>": "str?", "ArrayRef<double>": "f[]",
             "ArrayRef<Scalar>": "S[]", "ArrayRef<Tensor>": "T[]"}
    return table.get(t, "?")


def schema_param_kind(ctype: str) -> str:
    """Binding kind of one ATen schema argument type (`Tensor(a!)` -> `T`)."""
    t = re.sub(r"\([a-z]!?\)", "", ctype.replace(" ", ""))
    t = re.sub(r"\[\d+\]", "[]", t)
    table = {"Tensor": "T", "Tensor?": "T?", "Tensor[]": "T[]", "Tensor?[]": "T?[]", "Scalar": "S",
             "Scalar?": "S?", "int[]": "I[]", "SymInt[]": "I[]", "int[]?": "I[]?", "SymInt[]?": "I[]?",
             "int": "i", "SymInt": "i", "int?": "i?", "SymInt?": "i?", "float": "f", "float?": "f?",
             "bool": "b", "bool?": "b?", "ScalarType": "dtype", "ScalarType?": "dtype?", "str": "str",
             "str?": "str?", "float[]": "f[]", "Scalar[]": "S[]"}
    return table.get(t, "?")


def kinds_match(cpp: tuple[str, ...], schema: tuple[str, ...]) -> bool:
    return len(cpp) == len(schema) and all(a == b or "?" in (a, b) for a, b in zip(cpp, schema))


def _count_params(params: str) -> int:
    params = params.strip()
    if not params or params == "void":
        return 0
    depth = 0
    count = 1
    for ch in params:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


_EXEC = re.compile(r"\bEXEC_\w+\s*\(\s*(aclnn\w+)")
# the second argument is an API only when it is a bare name: `DO_COMPATIBILITY(aclnnSilentCheck,
# aclnnNotFound(val))` calls a C++ fallback named like an API, which is not one
_COMPAT = re.compile(r"\bDO_\w*COMPATIBILITY\s*\(\s*(aclnn\w+)(?:\s*,\s*(aclnn\w+)\b(?!\s*\())?")
# template arguments up to one nesting level: `run<c10::optional<at::Tensor>>(...)`
_TEMPLATE_ARGS = r"(?:<(?:[^<>;{}()]|<[^<>;{}()]*>)*>)?"
_CALL = re.compile(r"(?<![\w:.>])([A-Za-z_]\w*)\s*" + _TEMPLATE_ARGS + r"\s*\(")
_OP_API_CALL = re.compile(r"\bop_api::([A-Za-z_]\w*)\s*" + _TEMPLATE_ARGS + r"\s*\(")
# op_plugin's own helpers called by qualified name: `op_plugin::AdvanceIndex::npu_expand_tensors(...)`
_HELPER_CALL = re.compile(r"\bop_plugin::(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)\s*" + _TEMPLATE_ARGS + r"\s*\(")
_ACL_OP_CALL = re.compile(r"\bacl_op::([A-Za-z_]\w*)\s*" + _TEMPLATE_ARGS + r"\s*\(")
# `at::x(...)` (not `at::native::x`, `at::Tensor(...)`), torch_npu's `custom_ops::x(...)` and
# tensor methods `t.x(...)`: an op dispatched to the NPU kernel op_api::x registers, so it
# reaches x's APIs through another op (aclnn_indirect)
_AT_CALL = re.compile(r"(?:(?<![\w:])at::|\bcustom_ops::|(?<=[\w)\]])\s*\.)([a-z_]\w*)\s*"
                      + _TEMPLATE_ARGS + r"\s*\(")
_STR_API = re.compile(r"^(aclnn[A-Za-z0-9_]+?)(?:GetWorkspaceSize)?$")
# legacy ACL graph ops: `cmd.Name("LeftShift")` on an OpCommand (the literal itself is read
# from the unmasked text at the same offset)
_OPCMD_NAME = re.compile(r"\.\s*Name\s*\(\s*\"")
_OP_TYPE = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*\)')


def _legacy_names(raw: str, masked: str) -> list[str]:
    """ACL op types a body names through `.Name("X")` (a literal; names built at run time
    are not seen)."""
    out = set()
    for m in _OPCMD_NAME.finditer(masked):
        lit = _OP_TYPE.match(raw, m.end() - 1)
        if lit:
            out.add(lit.group(1))
    return sorted(out)


def _op_api_calls(body: str, pattern: re.Pattern | None = None) -> set[tuple[str, int]]:
    """(name, argument count) of every `op_api::name(...)` call (or `pattern`'s) in a masked
    body."""
    calls = set()
    for m in (pattern or _OP_API_CALL).finditer(body):
        depth, k = 0, m.end() - 1
        start = k + 1
        for k in range(m.end() - 1, len(body)):
            if body[k] in "([{":
                depth += 1
            elif body[k] in ")]}":
                depth -= 1
                if depth == 0:
                    break
        calls.add((m.group(1), _count_params(body[start:k])))
    return calls


def _overloads(funcs: list[CppFunction], nargs: int) -> list[CppFunction]:
    """The overloads a call with `nargs` arguments can reach: those with that many
    parameters, else (default arguments) all of them."""
    exact = [f for f in funcs if f.n_params == nargs]
    return exact or list(funcs)


def parse_cpp_functions(text: str, path: str) -> list[CppFunction]:
    """Function definitions at namespace scope with their aclnn tokens (lexical)."""
    lexed = lex(text)
    masked = lexed.blank(comments=True, literals=True, preproc=True)
    visible = lexed.blank(comments=True, literals=False, preproc=True)  # literals, no comments
    lines = LineIndex(text)
    funcs: list[CppFunction] = []
    stack: list[tuple[str, str, int, CppFunction | None]] = []  # (kind, name, body_start, fn)
    seg_start = 0
    for m_tok in _PUNCT.finditer(masked):
        i, ch = m_tok.start(), m_tok.group()
        if ch in ";":
            seg_start = i + 1
        elif ch == "{":
            header = masked[seg_start:i].strip()
            in_func = any(k == "function" for k, *_ in stack)
            kind, name, fn = "block", "", None
            m_ns = re.fullmatch(r"(?:inline\s+)?namespace(?:\s+([\w:]+))?", header)
            if not in_func and m_ns:
                kind, name = "namespace", m_ns.group(1) or ""
            elif not in_func and not re.match(r"(class|struct|union|enum)\b", header) \
                    and "=" not in header.split("(")[0]:
                m = _HEADER_FUNC.search(header)
                if m and m.group(1) not in _KEYWORDS:
                    kind, name = "function", m.group(1)
                    name_at = seg_start + masked[seg_start:i].find(header) + m.start(1)
                    ns = tuple(x for k, x, *_ in stack if k == "namespace")
                    fn = CppFunction(name=name, path=path, line=lines.line(name_at),
                                     namespaces=ns, n_params=_count_params(m.group(2)),
                                     param_kinds=tuple(cpp_param_kind(p) for p in _split_params(m.group(2))))
            stack.append((kind, name, i + 1, fn))
            seg_start = i + 1
        elif ch == "}":
            if not stack:
                raise ParseError(path, lines.line(i), "unbalanced `}`",
                                 hint="the lexical reader needs balanced braces")
            kind, name, start, fn = stack.pop()
            if fn is not None:
                body_raw = visible[start:i]  # a name in a comment is no call
                body_masked = masked[start:i]
                fn.executed = sorted(set(_EXEC.findall(body_masked)))
                probed = {a for pair in _COMPAT.findall(body_masked) for a in pair if a}
                for s in re.findall(r'"(aclnn[A-Za-z0-9_]+)"', body_raw):
                    probed.add(_STR_API.match(s).group(1))
                fn.probed = sorted(probed - set(fn.executed))
                fn.legacy = _legacy_names(body_raw, body_masked)
                fn.called = {c for c in _CALL.findall(body_masked) if c not in _KEYWORDS}
                fn.called_args = {c for c in _op_api_calls(body_masked, _CALL) if c[0] not in _KEYWORDS} \
                    | _op_api_calls(body_masked, _HELPER_CALL)
                fn.op_api_called = _op_api_calls(body_masked)
                fn.at_called = _op_api_calls(body_masked, _AT_CALL)
                fn.acl_op_called = _op_api_calls(body_masked, _ACL_OP_CALL)
                funcs.append(fn)
            seg_start = i + 1
    if stack:
        raise ParseError(path, None, f"unbalanced braces: {len(stack)} `{{` not closed",
                         hint="the lexical reader needs balanced braces")
    return funcs


def _closure(fn: CppFunction, same_file: dict[str, list[CppFunction]],
             helpers: dict[str, list[CppFunction]] | None = None) -> tuple[set, set, set]:
    """(executed, probed, op_api:: calls leaving the file) of `fn` and the same-file
    helpers it reaches (their legacy `.Name("X")` op types are merged into `fn.legacy` on
    the way), transitively: helpers called by name, and `op_api::x(...)` calls
    that resolve in the same file (the overloads of `x` there taking that many arguments,
    `fn` itself excepted)."""
    executed, probed, leaving = set(fn.executed), set(fn.probed), set()
    legacy = set(fn.legacy)
    seen = {id(fn)}
    todo: list[CppFunction] = []

    def visit(caller: CppFunction) -> None:
        for name, nargs in caller.called_args:  # the overloads taking that many arguments
            if name != fn.name:  # same file first, else op_plugin/utils helpers
                todo.extend(_overloads(same_file.get(name) or (helpers or {}).get(name, []), nargs))
        for name, nargs in caller.op_api_called:
            if name in same_file:
                todo.extend(_overloads(same_file[name], nargs))
            elif helpers and name in helpers:  # `op_api::helper(...)` defined under op_plugin/utils
                todo.extend(_overloads(helpers[name], nargs))
            else:
                leaving.add((name, nargs))
        leaving.update(caller.at_called)

    visit(fn)
    while todo:
        helper = todo.pop()
        if id(helper) in seen:
            continue
        seen.add(id(helper))
        executed |= set(helper.executed)
        probed |= set(helper.probed)
        legacy |= set(helper.legacy)
        visit(helper)
    fn.legacy = sorted(legacy)
    return executed, probed - executed, leaving


def indirect_apis(op_api_funcs: dict[str, list[CppFunction]]) -> dict[int, set[str]]:
    """id(function) -> the APIs it reaches through calls to other entry points (`op_api::x`
    into other files, `at::x`, `custom_ops::x`, `t.x()`), one level: the APIs the called
    kernel names itself (with its same-file and utils helpers), not those it reaches through
    further ops, as op-plugin's extraction defines `aclnn_indirect`. A call reaches the
    overloads of `x` with as many parameters as it passes arguments (all of them when none
    has; argument types are not resolved lexically)."""
    reach: dict[int, set[str]] = {}
    for fs in op_api_funcs.values():
        for f in fs:
            got: set[str] = set()
            for name, nargs in f.op_api_called:
                for g in _overloads(op_api_funcs.get(name, []), nargs):
                    if g is not f:
                        got |= set(g.executed) | set(g.probed)
            reach[id(f)] = got - set(f.executed) - set(f.probed)
    return reach


@dataclass(frozen=True)
class YamlEntry:
    """One `func:` entry of op_plugin_functions.yaml."""

    section: str
    schema: str
    line: int
    versions: dict
    gen_opapi: dict | None
    structured_delegate: str = ""

    @property
    def name(self) -> str:
        return self.schema.split("(", 1)[0].strip()

    @property
    def op(self) -> str:
        return ("npu::" if self.section == "custom" else "aten::") + self.name


def _plain(node):
    """A YAML node as Python data (strings kept as written)."""
    if isinstance(node, yaml.ScalarNode):
        return node.value
    if isinstance(node, yaml.SequenceNode):
        return [_plain(n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        return {str(k.value): _plain(v) for k, v in node.value}
    return None


def expand_versions(spec, all_versions: list[str], path, line: int) -> list[str]:
    """op-plugin version spec -> explicit list.

    `all_version` -> all; `v2.1` -> [v2.1]; `v2.1, v2.2` (comma text) -> that list;
    `[vA, vB]` (YAML list of two) -> the inclusive range vA..vB in `all_version`
    order, `newest` = the last one.
    """
    def check(v: str) -> str:
        v = v.strip()
        if v == "newest":
            return all_versions[-1]
        if v not in all_versions:
            raise ParseError(path, line, f"version {v!r} is not in all_version",
                             hint=f"all_version: {', '.join(all_versions)}")
        return v

    if isinstance(spec, list):
        if len(spec) != 2:
            raise ParseError(path, line, f"version range {spec} must have two ends",
                             hint="write [vX.Y, newest] or a comma list 'vX.Y, vX.Z'")
        lo, hi = all_versions.index(check(spec[0])), all_versions.index(check(spec[1]))
        if lo > hi:
            raise ParseError(path, line, f"version range {spec} is reversed")
        return all_versions[lo:hi + 1]
    if not isinstance(spec, str) or not spec.strip():
        raise ParseError(path, line, f"bad version spec {spec!r}")
    if spec.strip() == "all_version":
        return list(all_versions)
    return [check(v) for v in spec.split(",")]


def parse_functions_yaml(path: str | Path, display: str = FUNCTIONS_YAML
                         ) -> tuple[list[str], list[YamlEntry]]:
    """(all_version, entries) of op_plugin_functions.yaml, with versions expanded."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise yaml_parse_error(display, exc) from None
    if not isinstance(root, yaml.MappingNode):
        raise ParseError(display, 1, "top level is not a mapping")
    sections = {str(k.value): (k, v) for k, v in root.value}
    if "all_version" not in sections:
        raise ParseError(display, 1, "no `all_version` list",
                         hint="this reader supports the op-plugin layout with all_version (6.0.rc3+)")
    all_versions = _plain(sections["all_version"][1])
    if not isinstance(all_versions, list) or not all_versions:
        raise ParseError(display, sections["all_version"][0].start_mark.line + 1,
                         "`all_version` must be a non-empty list")
    entries: list[YamlEntry] = []
    for name, (knode, vnode) in sections.items():
        if name == "all_version":
            continue
        if name not in YAML_SECTIONS:
            raise ParseError(display, knode.start_mark.line + 1, f"unknown section `{name}`",
                             hint=f"known: {', '.join(YAML_SECTIONS)}")
        if not isinstance(vnode, yaml.SequenceNode):
            if isinstance(vnode, yaml.ScalarNode) and vnode.value in ("", "~", "null"):
                continue
            raise ParseError(display, knode.start_mark.line + 1, f"section `{name}` is not a list")
        for item in vnode.value:
            line = item.start_mark.line + 1
            data = _plain(item)
            if not isinstance(data, dict) or "func" not in data:
                raise ParseError(display, line, f"entry in `{name}` has no `func:`")
            schema = str(data["func"]).strip()
            try:
                parse_schema(schema)
            except SchemaError as exc:
                raise ParseError(display, line, str(exc)) from None
            versions = {k: expand_versions(data[k], all_versions, display, line)
                        for k in ("acl_op", "op_api", "sparse", "dvm", "internal_format_opapi")
                        if k in data}
            gen = data.get("gen_opapi")
            entries.append(YamlEntry(section=name, schema=schema, line=line, versions=versions,
                                     gen_opapi=gen if isinstance(gen, dict) else None,
                                     structured_delegate=str(data.get("structured_delegate", ""))))
    return all_versions, entries


def cpp_name(entry: YamlEntry, symint_names: set[str]) -> str:
    """torchgen's C++ name: base, `_out` for out variants, `_symint` when listed."""
    base, _ = split_op_name(entry.name)
    name = base + "_out" if is_out_variant(entry.schema) else base
    return name + "_symint" if entry.name in symint_names else name


def _gen_apis(entry: YamlEntry, by_name: dict[str, YamlEntry], depth: int = 0) -> list[str]:
    gen = entry.gen_opapi or {}
    apis: list[str] = []
    if isinstance(gen.get("exec"), str):
        apis.append(gen["exec"].split(",")[0].strip())
    for item in gen.get("cpu_scalar_op") or []:
        if isinstance(item, dict) and isinstance(item.get("exec"), str):
            apis.append(item["exec"].split(",")[0].strip())
    inherit = gen.get("structured_inherit")
    if isinstance(inherit, str) and inherit in by_name and depth < 3:
        apis += _gen_apis(by_name[inherit], by_name, depth + 1)
    return sorted({a for a in apis if a.startswith("aclnn")})


def _git_head(root: Path) -> str:
    """HEAD commit when `root` itself is a git checkout (not a dir inside another repo)."""
    if not (root / ".git").exists():
        return ""
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


@dataclass
class CheckoutTree:
    """What the lexical reader found in one op-plugin checkout: the function yaml and the
    `op_api` (opapi/*.cpp) and legacy `acl_op` (aclops/*.cpp) definitions."""

    root: Path
    commit: str
    yaml_sha256: str
    all_versions: list[str]
    entries: list[YamlEntry]
    symint_names: set[str]
    by_name: dict[str, YamlEntry]
    op_api_funcs: dict[str, list[CppFunction]]
    via_other_ops: dict[int, set[str]]
    acl_op_funcs: dict[str, list[CppFunction]]
    n_files: int


def _read_kernels(root: Path, subdir: str, namespace: str, warnings: list[str] | None,
                  entry_names: frozenset = frozenset()) -> tuple[dict[str, list[CppFunction]], list, int]:
    """name -> definitions in `namespace` of op_plugin/ops/<subdir>/*.cpp, each with its
    same-file closure (executed, probed, calls leaving the file) applied. op_plugin/utils
    helpers count as the caller's own code unless named like an entry point
    (`entry_names`: those are other ops, reached through them)."""
    funcs_by_name: dict[str, list[CppFunction]] = defaultdict(list)
    closure: list[tuple[CppFunction, tuple]] = []
    helpers: dict[str, list[CppFunction]] = defaultdict(list)  # op_plugin/utils helpers
    utils = root / "op_plugin" / "utils"
    for cpp in sorted(utils.glob("*.cpp")) + sorted((utils / "custom_functions" / subdir).glob("*.cpp")):
        try:
            for f in parse_cpp_functions(cpp.read_text(encoding="utf-8", errors="replace"),
                                         cpp.relative_to(root).as_posix()):
                if f.name not in entry_names:
                    helpers[f.name].append(f)
        except ParseError as err:
            if warnings is None:
                raise
            warnings.append(f"{err}; file skipped")
    files = sorted((root / "op_plugin" / "ops" / subdir).glob("*.cpp"))
    for cpp in files:
        rel = cpp.relative_to(root).as_posix()
        try:
            funcs = parse_cpp_functions(cpp.read_text(encoding="utf-8", errors="replace"), rel)
        except ParseError as err:
            if warnings is None:
                raise
            warnings.append(f"{err}; file skipped")
            continue
        same_file: dict[str, list[CppFunction]] = defaultdict(list)
        for f in funcs:
            same_file[f.name].append(f)
            if namespace == "acl_op":  # the legacy path calls its own entry points as acl_op::x
                f.op_api_called = f.acl_op_called
        for f in funcs:
            if namespace in f.namespaces:
                closure.append((f, _closure(f, same_file, helpers)))
    for f, (executed, probed, leaving) in closure:  # after every file is read
        f.executed, f.probed, f.op_api_called = sorted(executed), sorted(probed), leaving
        funcs_by_name[f.name].append(f)
    return funcs_by_name, files, len(files)


def read_checkout(root: str | Path, commit: str | None = None,
                  warnings: list[str] | None = None) -> CheckoutTree:
    """Read an op-plugin checkout once (see scan_checkout for the warnings contract)."""
    root = Path(root)
    yaml_path = root / FUNCTIONS_YAML
    if not yaml_path.is_file():
        raise OpscanError(f"{yaml_path} not found",
                          hint="point at the root of an op-plugin checkout (6.0.rc3 or newer layout)")
    commit = commit or _git_head(root) or "local"
    all_versions, entries = parse_functions_yaml(yaml_path, FUNCTIONS_YAML)
    symint_names = {e.name for e in entries if e.section == "symint"}
    by_name = {e.name: e for e in entries if e.section != "symint"}
    entry_names = frozenset(cpp_name(e, symint_names) for e in by_name.values())
    op_api_funcs, _, n_opapi = _read_kernels(root, "opapi", "op_api", warnings, entry_names)
    acl_op_funcs, _, n_aclops = _read_kernels(root, "aclops", "acl_op", warnings, entry_names)
    # kernels generated from the yaml (gen_opapi) are op_api entry points too: other
    # kernels reach their APIs through `at::x(...)` / `t.x(...)` (aclnn_indirect)
    for e in entries:
        if e.section != "symint" and e.gen_opapi is not None and "op_api" in e.versions:
            apis = _gen_apis(e, by_name)
            if apis:
                parsed, _ = parse_schema(e.schema)
                op_api_funcs[cpp_name(e, symint_names)].append(CppFunction(
                    name=cpp_name(e, symint_names), path=FUNCTIONS_YAML, line=e.line,
                    namespaces=("op_api",), n_params=len(parsed.params),
                    param_kinds=tuple(schema_param_kind(p.ctype) for p in parsed.params),
                    executed=apis))
    return CheckoutTree(
        root=root, commit=commit, yaml_sha256=_sha256(yaml_path), all_versions=all_versions,
        entries=entries, symint_names=symint_names, by_name=by_name,
        op_api_funcs=op_api_funcs, via_other_ops=indirect_apis(op_api_funcs),
        acl_op_funcs=acl_op_funcs, n_files=n_opapi + n_aclops)


@dataclass
class EntryScan:
    """One yaml entry resolved against the checkout's C++ (any torch version)."""

    cname: str
    executed: set = field(default_factory=set)
    probed: set = field(default_factory=set)
    indirect: set = field(default_factory=set)
    impl: str = ""  # handwritten / gen_opapi / structured_delegate; "" when none found
    match: str = ""
    how: str = ""
    defs: list = field(default_factory=list)  # the matched op_api definitions
    legacy: set = field(default_factory=set)  # ACL op types of the matched acl_op definitions
    legacy_defs: list = field(default_factory=list)


def _choose(defs: list[CppFunction], kinds: tuple[str, ...]) -> tuple[str, list[CppFunction]]:
    """(match, definitions) of the overloads `kinds` (a schema's binding kinds) reaches:
    one by full signature, else by parameter count, else all of them."""
    typed = [d for d in defs if kinds_match(d.param_kinds, kinds)]
    exact = [d for d in defs if d.n_params == len(kinds)]
    if len(typed) == 1:
        return "signature", typed
    match = "arity" if len(exact) == 1 else "arity-ambiguous" if exact else "name_only"
    return match, typed or exact or defs


def resolve_entry(tree: CheckoutTree, e: YamlEntry) -> EntryScan:
    """The op_api APIs (own, probed, through other ops) and the legacy acl_op op types of
    yaml entry `e`, whatever torch versions declare them."""
    parsed, _ = parse_schema(e.schema)
    kinds = tuple(schema_param_kind(p.ctype) for p in parsed.params)
    out = EntryScan(cname=cpp_name(e, tree.symint_names))
    if "op_api" in e.versions:
        delegate = tree.by_name.get(e.structured_delegate)
        if e.gen_opapi is not None:
            out.executed = set(_gen_apis(e, tree.by_name))
            out.impl, out.match, out.how = "gen_opapi", "gen_opapi", "gen_opapi (generated from the yaml)"
        elif e.structured_delegate and getattr(delegate, "gen_opapi", None) is not None:
            out.executed = set(_gen_apis(delegate, tree.by_name))
            out.impl = out.match = "structured_delegate"
            out.how = f"structured_delegate {e.structured_delegate}"
        else:
            out.match, out.defs = _choose(tree.op_api_funcs.get(out.cname, []), kinds)
            for d in out.defs:
                out.executed |= set(d.executed)
                out.probed |= set(d.probed)
                out.indirect |= tree.via_other_ops[id(d)]
            out.probed -= out.executed
            out.indirect -= out.executed | out.probed
            if out.defs:
                out.impl, out.how = "handwritten", f"op_api::{out.cname} (match={out.match})"
        out.indirect -= NOT_APIS
    if "acl_op" in e.versions:
        names = [out.cname] + ([out.cname[:-len("_symint")]] if out.cname.endswith("_symint") else [])
        defs = next((tree.acl_op_funcs[n] for n in names if tree.acl_op_funcs.get(n)), [])
        _, out.legacy_defs = _choose(defs, kinds)
        for d in out.legacy_defs:
            out.legacy |= set(d.legacy)
    return out


def checkout_records(tree: CheckoutTree) -> list[tuple[int, dict]]:
    """(yaml line, record) per `func:` entry, in the op_plugin_aclnn_map.jsonl schema
    (the fields `attach_records` reads), so the checkout goes through the same attachment
    as the shared extraction. `#if VERSION_BETWEEN` guards are not evaluated: `aclnn_target`
    is `aclnn` (every definition)."""
    out = []
    for e in tree.entries:
        if e.section == "symint":
            continue
        es = resolve_entry(tree, e)
        apis = sorted((es.executed | es.probed) - NOT_APIS)
        paths = [d.path for d in es.defs] or ([FUNCTIONS_YAML] if es.impl else [])
        out.append((e.line, {
            "op": e.op, "schema": e.schema, "section": e.section, "versions": e.versions,
            "aclnn": apis, "aclnn_target": apis, "aclnn_indirect": sorted(es.indirect),
            "built_for_target": True, "aclop_kernels": sorted(es.legacy),
            "source_paths": sorted(set(paths)),
            "op_api_source_lines": [f"{d.path}:{d.line}" for d in es.defs],
            "cpp_function": es.cname if es.impl else None,
            "op_api_impl": es.impl or None, "match": es.match or None}))
    return out


def load_checkout_map(tree: CheckoutTree, release_versions: Iterable[str],
                      wheel: IngestResult) -> IngestResult:
    """`load_aclnn_map` with the checkout's records instead of the shared extraction:
    the same attachment per release, the checkout's commit on every mapping source."""
    records = checkout_records(tree)
    result = attach_records(records, release_versions, wheel, commit=tree.commit,
                            origin=Path(FUNCTIONS_YAML).name, target=None,
                            func_lines=_yaml_func_lines(tree.root / FUNCTIONS_YAML))
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="checkout", version=tree.commit, path=FUNCTIONS_YAML,
        sha256=tree.yaml_sha256,
        description=f"op-plugin checkout {tree.root.name}: {tree.n_files} opapi/aclops files",
        rows=len(records)))
    return result


def scan_checkout(root: str | Path, torch_version: str | None = None,
                  version: str = "local", commit: str | None = None,
                  warnings: list[str] | None = None) -> IngestResult:
    """Adapters and mappings from an op-plugin checkout (yaml + opapi and aclops C++ kernels),
    without a torch_npu wheel: one adapter per yaml op.

    A kernel file the lexical reader cannot follow (unbalanced braces) raises ParseError
    when `warnings` is None; given a list, that file is skipped with a `path:line: ...`
    warning appended (its ops get no definition, noted per adapter) and the scan goes on.

    torch_version: `v2.13` keeps only entries built for it (acl_op/op_api/sparse);
    None keeps all. version: the Adapter version label.
    commit: Source version; default `git rev-parse HEAD` of the checkout, else `local`.
    """
    tree = read_checkout(root, commit, warnings)
    if torch_version is not None and torch_version not in tree.all_versions:
        raise OpscanError(f"{torch_version} is not in all_version of {FUNCTIONS_YAML}",
                          hint=f"choose one of {', '.join(tree.all_versions)}")
    commit = tree.commit

    result = IngestResult()
    first_line: dict[str, int] = {}
    for e in tree.entries:
        if e.section == "symint":
            continue
        if torch_version is not None and not any(
                torch_version in e.versions.get(k, ()) for k in ("acl_op", "op_api", "sparse")):
            continue
        if e.op in first_line:
            # same overload with a per-version schema (e.g. repeat_interleave.self_int):
            # one adapter per op; pass torch_version to pick the entry of one version
            continue
        first_line[e.op] = e.line
        notes = [f"section={e.section}",
                 "impl_ns=" + ",".join(k for k in ("acl_op", "op_api", "sparse") if k in e.versions)]
        src = Source(SOURCE_ID, commit, FUNCTIONS_YAML, e.line)
        uses_op_api = "op_api" in e.versions and (
            torch_version is None or torch_version in e.versions["op_api"])
        uses_acl_op = "acl_op" in e.versions and (
            torch_version is None or torch_version in e.versions["acl_op"])
        es = resolve_entry(tree, e)
        if not uses_op_api:
            es.executed, es.probed, es.indirect, es.how = set(), set(), set(), ""
        elif es.defs:
            src = Source(SOURCE_ID, commit, es.defs[0].path, es.defs[0].line)
        elif not es.impl:
            notes.append(f"no op_api::{es.cname} definition found under op_plugin/ops/opapi")
        if es.indirect:
            notes.append("aclnn_indirect=" + ",".join(sorted(es.indirect)))
        result.adapters.append(Adapter(
            framework="torch", provider="torch_npu", version=version, op=e.op, source=src,
            aclnn=tuple(sorted((es.executed | es.probed) - NOT_APIS)),
            legacy_ops=tuple(sorted(es.legacy)) if uses_acl_op else (),
            function=es.cname if uses_op_api else "", schema=e.schema,
            notes=tuple(notes)))
        for api in sorted(es.executed - NOT_APIS):
            result.mappings.append(OpAclnnMapping(
                framework="torch", op=e.op, aclnn=api, evidence="adapter",
                confidence=CONF_DIRECT, source=src, detail=f"{es.how}; executed"))
        for api in sorted(es.probed - NOT_APIS):
            result.mappings.append(OpAclnnMapping(
                framework="torch", op=e.op, aclnn=api, evidence="adapter",
                confidence=CONF_PROBED, source=src,
                detail=f"{es.how}; probed only (DO_COMPATIBILITY / kernel availability check)"))
        for api in sorted(es.indirect):
            result.mappings.append(OpAclnnMapping(
                framework="torch", op=e.op, aclnn=api, evidence="adapter",
                confidence=CONF_INDIRECT, source=src, detail=f"{es.how}; via another op (op_api:: call)"))
    result.adapters.sort(key=lambda a: a.op)
    result.mappings.sort(key=lambda m: (m.op, m.aclnn))
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="checkout", version=commit, path=FUNCTIONS_YAML,
        sha256=tree.yaml_sha256,
        description=f"op-plugin checkout {tree.root.name}: {tree.n_files} opapi/aclops files",
        rows=len(result.adapters)))
    return result
