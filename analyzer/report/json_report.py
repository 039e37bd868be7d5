"""report.json: the versioned schema every report format renders from, its validator,
and the canonical JSON text.

`SCHEMA` is the JSON Schema (draft 2020-12) of `ScanReport.to_json()`; docs/report.schema.json
is this dict written out (a test keeps them equal) and docs/report-schema.md documents every
field. `validate()` checks a report dict against it with a small built-in validator (the
subset of JSON Schema SCHEMA uses: type, properties, required, additionalProperties, items,
enum, minimum, $ref), so loading a hand-edited report.json fails with one line naming the
field instead of a KeyError deep in a template.
"""
from __future__ import annotations

import json

from analyzer.model import CATEGORIES, PHASES, ROUTE_REASONS
from opdb.errors import OpscanError

SCHEMA_VERSION = 1


class ReportSchemaError(OpscanError):
    """A report dict (report.json) does not match the documented schema."""


def _obj(props: dict, required=None, extra=False) -> dict:
    return {"type": "object", "properties": props,
            "required": sorted(props) if required is None else required,
            "additionalProperties": extra}


_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_STRS = {"type": "array", "items": _STR}
_PHASES = {"type": "array", "items": {"type": "string", "enum": list(PHASES)}}

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://opscan.invalid/report.schema.json",
    "title": "opscan report",
    "description": "One scan of one model for one target (report.json, schema_version 1). "
                   "Documented in docs/report-schema.md.",
    **_obj({
        "schema_version": {"type": "integer", "enum": [SCHEMA_VERSION]},
        "tool": _STR,
        "model": _STR,
        "framework": {"type": "string", "enum": ["torch", "paddle"]},
        "framework_version": _STR,
        "mode": {"type": "string", "enum": ["real", "meta"]},
        "target": _STR,
        "soc": _STR,
        "steps": {"type": "integer", "minimum": 1},
        "partial": {"type": "boolean"},
        "error": _STR,
        "summary": _STR,
        "counts": {"type": "object", "additionalProperties": _INT},
        "verdicts": {"type": "array", "items": {"$ref": "#/$defs/verdict"}},
        "fallback": {"$ref": "#/$defs/fallback"},
        "notes": _STRS,
        "opdb": {"type": "object", "additionalProperties": _STR},
        "graph": {"$ref": "#/$defs/graph"},
        "blacklist": {"$ref": "#/$defs/blacklist"},
        "cpu_route": {"type": "array", "items": {"$ref": "#/$defs/route"}},
    }, required=sorted({"schema_version", "tool", "model", "framework", "framework_version",
                        "mode", "target", "soc", "steps", "partial", "error", "summary",
                        "counts", "verdicts", "fallback", "notes", "opdb", "graph"})),
    "$defs": {
        # analyzer.blacklist.Blacklist (paddle reports only; absent for torch)
        "blacklist": _obj({
            "target": _STR, "framework_version": _STR, "export": _STR, "summary": _STR,
            "entries": {"type": "array", "items": {"$ref": "#/$defs/blacklist_entry"}},
            "refused": {"type": "array", "items": {"$ref": "#/$defs/blacklist_entry"}},
            "automatic": {"type": "array", "items": _obj({
                "kernel": _STR, "category": _STR, "detail": _STR})},
            "current": {"type": "array", "items": _obj({
                "token": _STR, "detail": _STR, "status": {"type": "string", "enum": [
                    "needed", "not-needed", "never-matches", "not-run", "empty"]}})},
            "pairing": _STR, "transfers": _INT, "bytes": _INT, "notes": _STRS,
        }),
        "blacklist_entry": _obj({
            "kernel": _STR,
            "names": {"type": "array", "items": _obj({
                "name": _STR, "modes": {"type": "array", "items": {
                    "type": "string", "enum": ["dygraph", "static/PIR"]}}})},
            "reason": _STR,
            "severity": {"type": "string", "enum": ["certain", "likely", "possible", "suspect"]},
            "detail": _STR, "effects": _STRS, "evidence": _STRS, "dtypes": _STRS,
            "cpu_dtypes": _STRS, "calls": _INT, "transfers": _INT, "bytes": _INT,
            "refusal": _STR,
        }),
        "verdict": _obj({
            "op": _STR,
            "category": {"type": "string", "enum": list(CATEGORIES)},
            "dtypes": _STRS,
            "calls": _INT,
            "phases": _PHASES,
            "modules": _STRS,
            "sources": _STRS,
            "aliases": _STRS,
            "evidence": _STRS,
            "action": _STR,
            "missing_dtypes": _STRS,
            "cast_to": _STR,
            "candidates": {"type": "array", "items": {"$ref": "#/$defs/candidate"}},
            "decomposes_into": _STRS,
            "drift": _STRS,
            "known_failures": _STRS,
            "adapter": _STR,
            "setup_calls": _INT,
        }),
        "candidate": _obj({
            "api": _STR,
            "signature": _STR,
            "evidence": _STR,
            "confidence": {"type": "number", "minimum": 0},
            "detail": _STR,
            "supported_on_soc": {"type": ["boolean", "null"]},
            "opgen_command": _STR,
        }),
        "route": _obj({
            "op": _STR,
            "reason": {"type": "string", "enum": list(ROUTE_REASONS)},
            "under": _STR,
            "calls": _INT,
        }),
        "fallback": _obj({
            "islands": {"type": "array", "items": _obj({
                "ops": _STRS, "calls": _INT, "transfers": _INT, "bytes": _INT,
                "first_call": _INT, "module": _STR})},
            "transfers": _INT,
            "bytes": _INT,
            "groups": {"type": "array", "items": _obj({
                "sequence": _STRS, "islands": _INT, "transfers": _INT, "bytes": _INT,
                "transfers_each": {"type": ["integer", "null"], "minimum": 0},
                "members": {"type": "array", "items": {"type": "integer", "minimum": 1}}})},
        }),
        "graph": _obj({
            "nodes": _INT,
            "edges": _INT,
            "graphml": _STR,
            "ops": {"type": "array", "items": _obj({
                "id": _INT, "op": _STR, "phase": {"type": "string", "enum": list(PHASES)},
                "calls": _INT, "dtypes": _STRS, "first": _INT})},
            "links": {"type": "array", "items": _obj({
                "source": _INT, "target": _INT, "tensors": _INT, "bytes": _INT})},
        }, required=[]),
    },
}

_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
}


def _is_type(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _errors(value, schema: dict, where: str):
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        yield from _errors(value, SCHEMA["$defs"][name], where)
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_is_type(value, n) for n in names):
            yield f"{where}: expected {' or '.join(names)}, got {type(value).__name__}"
            return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(x) for x in schema["enum"])
        yield f"{where}: {json.dumps(value)} is not one of {allowed}"
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:
        yield f"{where}: {value} is below the minimum {schema['minimum']}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                yield f"{where}: missing required field '{key}'"
        extra = schema.get("additionalProperties", True)
        for key in sorted(value):
            sub = f"{where}.{key}"
            if key in props:
                yield from _errors(value[key], props[key], sub)
            elif extra is False:
                yield f"{where}: unknown field '{key}'"
            elif isinstance(extra, dict):
                yield from _errors(value[key], extra, sub)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            yield from _errors(item, schema["items"], f"{where}[{i}]")


def schema_errors(report: dict) -> list[str]:
    """Every mismatch between `report` and SCHEMA, as `$.path: problem` lines."""
    return list(_errors(report, SCHEMA, "$"))


class NormalizedReport(dict):
    """A report dict already in plain JSON form (what `normalize` and `validate` return).
    `normalize` hands one back as it is, so the formats of one scan (write_reports renders
    six from the validated dict) convert the report once instead of once per format;
    renderers only read it."""


def normalize(report: dict) -> dict:
    """`ScanReport.to_json()` (tuples and all) as plain JSON data (a NormalizedReport,
    returned unchanged when it already is one)."""
    if type(report) is NormalizedReport:
        return report
    data = json.loads(json.dumps(report))
    # anything but an object stays as it is, for the schema check to name
    return NormalizedReport(data) if isinstance(data, dict) else data


def validate(report: dict, origin: str = "report") -> dict:
    """The normalized report, or ReportSchemaError naming the first bad field."""
    data = normalize(report)
    errs = schema_errors(data)
    if errs:
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        raise ReportSchemaError(
            f"{origin}: {errs[0]}{more}",
            hint=f"write it with opscan (schema_version {SCHEMA_VERSION}); "
                 "fields are documented in docs/report-schema.md")
    return data


def render_json(report: dict) -> str:
    """Canonical report.json text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(normalize(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_text() -> str:
    """docs/report.schema.json exactly."""
    return json.dumps(SCHEMA, indent=2, sort_keys=True) + "\n"


def load_report(path) -> dict:
    """Read and validate a report.json written earlier (to regenerate other formats)."""
    from pathlib import Path

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ReportSchemaError(f"{p}: cannot read ({e.strerror})",
                                hint="pass the report.json opscan wrote") from None
    except json.JSONDecodeError as e:
        raise ReportSchemaError(f"{p}:{e.lineno}: not JSON ({e.msg})",
                                hint="pass the report.json opscan wrote") from None
    except UnicodeDecodeError as e:
        raise ReportSchemaError(f"{p}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                                f"{e.start})", hint="pass the report.json opscan wrote") from None
    if isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        raise ReportSchemaError(
            f"{p}: schema_version {data.get('schema_version')!r} is not supported "
            f"(this opscan reads {SCHEMA_VERSION})", hint="re-run the scan with this opscan")
    return validate(data, origin=str(p))

