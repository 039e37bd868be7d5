"""Ingest the CANN aclnn API catalog (`aclnn_apis.jsonl`) into `AclnnApi` records.

The catalog is one JSON object per aclnn entry point, extracted from the public
hicann/* operator repositories; its README (next to the file) documents the
schema, the role rules and the provenance table (repo, HEAD commit, commit date).

`load_catalog(path)` validates every line strictly (a malformed line raises
`ParseError` naming file and line), normalizes dtype names, keeps the catalog's
caveats (`dtype_note`, `role_note`, `doc_prototype_differs`, `alt_sources`) as short
notes, and emits one `ProvenanceRecord` per source repository.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

from opdb.dtypes import normalize_dtypes
from opdb.errors import OpscanError, ParseError
from opdb.model import ROLES, AclnnApi, IngestResult, Param, ProvenanceRecord, Source

KIND = "cann-catalog"

# Top-level keys of a record (README "Record schema"). Anything else is schema drift.
_REQUIRED = ("api", "params", "source")
_KNOWN = frozenset(_REQUIRED + (
    "doc_path", "doc_repo", "doc_commit", "alt_paths", "alt_sources", "category", "op_dir",
    "experimental", "internal", "deprecated", "dtypes", "dtype_note", "products",
    "doc_prototype_differs", "role_note",
))
_FLAGS = ("deprecated", "experimental", "internal")
_API_NAME = re.compile(r"^aclnn[A-Za-z0-9_]+$")
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HINT = "see the record schema in the catalog's README.md"


# ------------------------------------------------------------------ README table

def read_provenance_table(readme: Path) -> dict[str, dict[str, str]]:
    """The README's `## Provenance` markdown table: repo -> {role, commit, date, records}.

    Returns {} when the README has no such table. Commits are the backquoted
    40-hex values; a date cell that is not an ISO date (`–`) gives "".
    """
    rows: dict[str, dict[str, str]] = {}
    in_section = False
    header: list[str] | None = None
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_section = line.strip().lower() == "## provenance"
            header = None
            continue
        if not in_section or not line.lstrip().startswith("|"):
            if header is not None and not line.strip():
                break  # end of the table
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # separator row
        row = dict(zip(header, cells))
        repo = row.get("repository", "")
        if not repo:
            continue
        commit = re.search(r"\b[0-9a-f]{40}\b", row.get("head commit used", ""))
        date = row.get("commit date", "")
        rows[repo] = {
            "role": row.get("role", ""),
            "commit": commit.group(0) if commit else "",
            "date": date if re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) else "",
            "records": row.get("records", ""),
        }
    return rows


# ------------------------------------------------------------------ one record

def _fail(path: Path, lineno: int, msg: str, hint: str = _HINT):
    raise ParseError(path, lineno, msg, hint)


def _str_list(value, what: str, path: Path, lineno: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(path, lineno, f"{what} must be a list of strings, got {value!r}")
    return tuple(value)


def _parse_params(rec: dict, path: Path, lineno: int) -> tuple[Param, ...]:
    api = rec["api"]
    params = rec["params"]
    if not isinstance(params, list):
        _fail(path, lineno, f"{api}: 'params' must be a list")
    dtypes = rec.get("dtypes", {})
    if not isinstance(dtypes, dict):
        _fail(path, lineno, f"{api}: 'dtypes' must be an object {{param: [dtype, ...]}}")
    out: list[Param] = []
    seen: set[str] = set()
    for i, p in enumerate(params, 1):
        if not isinstance(p, dict):
            _fail(path, lineno, f"{api}: param {i} is not an object")
        missing = [k for k in ("name", "type", "role") if k not in p]
        if missing:
            _fail(path, lineno, f"{api}: param {i} lacks {', '.join(missing)}")
        name, ctype, role = p["name"], p["type"], p["role"]
        if not isinstance(name, str) or not _C_IDENT.match(name):
            _fail(path, lineno, f"{api}: param {i} has an invalid name {name!r}")
        if name in seen:
            _fail(path, lineno, f"{api}: param {name!r} appears twice")
        seen.add(name)
        if not isinstance(ctype, str) or not ctype.strip():
            _fail(path, lineno, f"{api}: param {name!r} has an empty type")
        if role not in ROLES:
            _fail(path, lineno, f"{api}: param {name!r} has unknown role {role!r}",
                  hint=f"role must be one of {', '.join(ROLES)}")
        names = dtypes.get(name, [])
        _str_list(names, f"{api}: dtypes of {name!r}", path, lineno)
        out.append(Param(name=name, ctype=" ".join(ctype.split()), role=role,
                         dtypes=normalize_dtypes(names)))
    unknown = sorted(set(dtypes) - seen)
    if unknown:
        _fail(path, lineno, f"{api}: dtypes name unknown params {unknown}")
    return tuple(out)


def _notes(rec: dict) -> tuple[str, ...]:
    notes: list[str] = []
    if rec["source"].get("from") == "doc":
        notes.append("signature from doc (no header)")
    if rec.get("doc_repo") or rec.get("doc_commit"):
        repo = rec.get("doc_repo") or rec["source"]["repo"]
        commit = rec.get("doc_commit", "")
        notes.append(f"doc from {repo}" + (f"@{commit[:12]}" if commit else ""))
    if rec.get("dtype_note"):
        notes.append(f"dtypes: {rec['dtype_note']}")
    if rec.get("role_note"):
        notes.append(f"roles: {rec['role_note']}")
    if rec.get("doc_prototype_differs"):
        notes.append(f"doc prototype differs from header: {rec['doc_prototype_differs']}")
    for alt in rec.get("alt_sources", []):
        notes.append(f"also in {alt.get('repo', '?')}:{alt.get('path', '?')}")
    return tuple(notes)


def parse_record(rec, path: Path, lineno: int,
                 dates: dict[tuple[str, str], str] | None = None) -> AclnnApi:
    """One catalog object -> `AclnnApi`; `dates` maps (repo, commit) to a commit date."""
    if not isinstance(rec, dict):
        _fail(path, lineno, f"expected a JSON object, got {type(rec).__name__}")
    missing = [k for k in _REQUIRED if k not in rec]
    if missing:
        _fail(path, lineno, f"record lacks required key(s) {', '.join(missing)}")
    api = rec["api"]
    if not isinstance(api, str) or not _API_NAME.match(api):
        _fail(path, lineno, f"'api' must be an aclnn API name, got {api!r}")
    extra = sorted(set(rec) - _KNOWN)
    if extra:
        _fail(path, lineno, f"{api}: unknown key(s) {extra}",
              hint="the catalog schema changed; extend opdb/ingest/cann_catalog.py")
    src = rec["source"]
    if not isinstance(src, dict) or not all(isinstance(src.get(k), str) and src.get(k)
                                            for k in ("repo", "commit", "path")):
        _fail(path, lineno, f"{api}: 'source' needs non-empty repo, commit and path")
    if src.get("from") not in ("header", "doc"):
        _fail(path, lineno,
              f"{api}: source.from must be 'header' or 'doc', got {src.get('from')!r}")
    for flag in _FLAGS:
        if flag in rec and not isinstance(rec[flag], bool):
            _fail(path, lineno, f"{api}: {flag!r} must be true or false")
    products = None
    if "products" in rec:
        products = _str_list(rec["products"], f"{api}: 'products'", path, lineno)
    alts = rec.get("alt_sources", [])
    if not isinstance(alts, list) or not all(isinstance(a, dict) for a in alts):
        _fail(path, lineno, f"{api}: 'alt_sources' must be a list of {{repo, path}} objects")
    for key in ("category", "op_dir", "dtype_note", "role_note", "doc_prototype_differs"):
        if key in rec and not isinstance(rec[key], str):
            _fail(path, lineno, f"{api}: {key!r} must be a string")
    repo, commit = src["repo"], src["commit"]
    return AclnnApi(
        name=api,
        params=_parse_params(rec, path, lineno),
        source=Source(source=f"cann:{repo}", version=commit, path=src["path"],
                      date=(dates or {}).get((repo, commit), "")),
        products=products,
        category=rec.get("category", ""),
        op_dir=rec.get("op_dir", ""),
        deprecated=rec.get("deprecated", False),
        experimental=rec.get("experimental", False),
        internal=rec.get("internal", False),
        notes=_notes(rec),
    )


# ------------------------------------------------------------------ whole file

def load_catalog(path: Path) -> IngestResult:
    """Read `aclnn_apis.jsonl` into `AclnnApi` records (sorted by name) + provenance."""
    path = Path(path)
    if not path.is_file():
        raise OpscanError(f"{path}: no such catalog file",
                          hint="point at opdb-sources/cann/aclnn_apis.jsonl")
    readme = path.with_name("README.md")
    table = read_provenance_table(readme) if readme.is_file() else {}
    dates = {(repo, row["commit"]): row["date"] for repo, row in table.items() if row["commit"]}

    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ParseError(path, None, f"not UTF-8 ({err})", "re-export the catalog as UTF-8")
    apis: dict[str, AclnnApi] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise ParseError(path, lineno, f"invalid JSON: {err.msg} (column {err.colno})",
                             "each line must be one complete JSON object")
        api = parse_record(rec, path, lineno, dates)
        if api.name in apis:
            _fail(path, lineno, f"duplicate record for {api.name}",
                  hint="each API entry point appears once")
        apis[api.name] = api

    fixes_path = path.with_name(ROLE_FIXES)
    if fixes_path.is_file():
        apis = apply_role_fixes(apis, fixes_path)
    result = IngestResult(apis=[apis[k] for k in sorted(apis)])
    result.provenance = _provenance(result.apis, path, hashlib.sha256(data).hexdigest(), table)
    if fixes_path.is_file():
        fixes_data = fixes_path.read_bytes()
        result.provenance.append(ProvenanceRecord(
            source="opdb-errata", kind="cann-role-fixes", version="1", path=ROLE_FIXES,
            sha256=hashlib.sha256(fixes_data).hexdigest(),
            description="catalog roles corrected from the headers at the catalog's commits",
            rows=len(json.loads(fixes_data)["fixes"])))
    return result


ROLE_FIXES = "role_fixes.json"


def apply_role_fixes(apis: dict[str, AclnnApi], fixes_path: Path) -> dict[str, AclnnApi]:
    """Apply `role_fixes.json` ({api, param, was, role, evidence} entries); an entry whose
    API/param is missing or whose `was` differs from the catalog is a ParseError, so a
    regenerated catalog never gets a stale fix silently."""
    import dataclasses

    try:
        fixes = json.loads(fixes_path.read_text(encoding="utf-8"))["fixes"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ParseError(fixes_path, None, f"not a role fix list ({err})") from None
    out = dict(apis)
    for i, fx in enumerate(fixes):
        api = out.get(fx.get("api"))
        names = [p.name for p in api.params] if api else []
        if api is None or fx.get("param") not in names:
            raise ParseError(fixes_path, None, f"fix {i}: {fx.get('api')}.{fx.get('param')} "
                             "is not in the catalog", "drop or update the fix")
        k = names.index(fx["param"])
        if api.params[k].role != fx["was"] or fx["role"] not in ROLES:
            raise ParseError(fixes_path, None, f"fix {i}: {fx['api']}.{fx['param']} has role "
                             f"{api.params[k].role!r}, the fix expects {fx['was']!r}",
                             "the catalog changed; re-check the fix")
        params = list(api.params)
        params[k] = dataclasses.replace(params[k], role=fx["role"])
        out[api.name] = dataclasses.replace(
            api, params=tuple(params),
            notes=api.notes + (f"role of {fx['param']} fixed {fx['was']} -> {fx['role']}: "
                               f"{fx['evidence']}",))
    return out


def _provenance(apis: list[AclnnApi], path: Path, sha: str,
                table: dict[str, dict[str, str]]) -> list[ProvenanceRecord]:
    by_repo: dict[str, list[AclnnApi]] = defaultdict(list)
    for api in apis:
        by_repo[api.source.source].append(api)
    out = []
    for source in sorted(by_repo):
        recs = by_repo[source]
        repo = source.removeprefix("cann:")
        commits = sorted({a.source.version for a in recs})
        row = table.get(repo, {})
        if len(commits) == 1:
            version, desc = commits[0], row.get("role", "")
        else:  # hicann/ops-ras: hand transcription, one commit per file
            version = "per-file"
            desc = "; ".join(filter(None, [row.get("role", ""),
                                           f"{len(commits)} per-file commits"]))
        out.append(ProvenanceRecord(
            source=source, kind=KIND, version=version, path=path.name, sha256=sha,
            date=row.get("date", "") if row.get("commit") == version else "",
            description=desc, rows=len(recs)))
    return out
