"""The curated known-issues table (`opdb/sources/known_issues.yaml`): device kernels that are
registered and match by signature data alone, yet break for a range of provider snapshots
and framework releases (the PaddleCustomDevice `adam`/`amsgrad` case), plus the release
dates of framework versions used to pair a plugin snapshot with the installed framework.

    table = load_known_issues()
    table.matching("paddle", "PaddleCustomDevice", "adam", "2024-10-18", "3.3.1")
    table.release_date("paddle", "3.3.1")   # "2026-03-24"
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

from opdb.errors import ParseError

SOURCE = Path(__file__).parent / "sources" / "known_issues.yaml"
SEVERITIES = ("certain", "likely", "possible")
_KEYS = ("id", "framework", "provider", "kernels", "provider_before", "framework_versions",
         "severity", "symptom", "source", "workaround")


@dataclass(frozen=True)
class KnownIssue:
    """One reviewed issue of one provider's kernels (see the YAML header for the fields)."""

    id: str
    framework: str
    provider: str
    kernels: tuple[str, ...]
    provider_before: str
    framework_versions: str
    severity: str
    symptom: str
    source: str
    workaround: str
    line: int = 0  # line of the entry in known_issues.yaml

    def affects(self, framework: str, provider: str, kernel: str, snapshot_date: str,
                framework_version: str) -> bool:
        """Does the issue apply to `kernel` of a provider snapshot dated `snapshot_date`
        (ISO, "" = unknown: assumed affected) under `framework_version` ("" = unknown:
        assumed affected)?"""
        if framework != self.framework or provider != self.provider or kernel not in self.kernels:
            return False
        if self.provider_before and snapshot_date and snapshot_date[:10] >= self.provider_before:
            return False
        if self.framework_versions and framework_version:
            from packaging.specifiers import SpecifierSet
            from packaging.version import InvalidVersion, Version

            try:
                return Version(framework_version) in SpecifierSet(self.framework_versions,
                                                                  prereleases=True)
            except InvalidVersion:
                return True
        return True

    def where(self) -> str:
        return f"opdb/sources/known_issues.yaml:{self.line} ({self.id})"


@dataclass(frozen=True)
class KnownIssueTable:
    issues: tuple[KnownIssue, ...]
    releases: dict  # framework -> {version: ISO date}

    def matching(self, framework: str, provider: str, kernel: str, snapshot_date: str,
                 framework_version: str) -> list[KnownIssue]:
        return [i for i in self.issues
                if i.affects(framework, provider, kernel, snapshot_date, framework_version)]

    def release_date(self, framework: str, version: str) -> str:
        """ISO date of a framework release, "" when the table does not know it."""
        return str(self.releases.get(framework, {}).get(version, ""))


def _compose_and_load(text: str):
    """(root node, data) of one YAML document in one parse, with libyaml's parser when
    PyYAML has it (the pure-Python parser costs ~0.02 s of every Paddle scan here)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def parse_known_issues(text: str, path: str | Path = "known_issues.yaml") -> KnownIssueTable:
    """Parse and validate the table; ParseError naming the line for anything malformed."""
    import yaml

    try:
        root, data = _compose_and_load(text)
    except yaml.YAMLError:  # the messages below are PyYAML's own parser's
        try:
            root = yaml.compose(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise ParseError(path, mark.line + 1 if mark else None, f"not YAML ({e})") from None
        data = yaml.safe_load(text) if root is not None else None
    if not isinstance(data, dict):
        raise ParseError(path, 1, "expected a mapping with `issues` and `framework_releases`")
    extra = sorted(set(data) - {"issues", "framework_releases"})
    if extra:
        raise ParseError(path, 1, f"unknown section(s) {', '.join(extra)}",
                         hint="known: issues, framework_releases")
    lines = [n.start_mark.line + 1 for k, v in root.value if k.value == "issues"
             for n in (v.value if hasattr(v, "value") and isinstance(v.value, list) else [])]
    issues = []
    for n, entry in enumerate(data.get("issues") or []):
        line = lines[n] if n < len(lines) else None
        if not isinstance(entry, dict):
            raise ParseError(path, line, "an issue must be a mapping")
        unknown = sorted(set(entry) - set(_KEYS))
        missing = [k for k in _KEYS if k not in entry]
        if unknown or missing:
            raise ParseError(path, line, f"issue {entry.get('id', n)}: "
                             + (f"unknown key(s) {', '.join(unknown)}" if unknown
                                else f"missing key(s) {', '.join(missing)}"),
                             hint=f"keys: {', '.join(_KEYS)}")
        if entry["severity"] not in SEVERITIES:
            raise ParseError(path, line, f"issue {entry['id']}: severity {entry['severity']!r}",
                             hint=f"use one of {', '.join(SEVERITIES)}")
        kernels = entry["kernels"]
        if not isinstance(kernels, list) or not kernels or not all(isinstance(k, str) for k in kernels):
            raise ParseError(path, line, f"issue {entry['id']}: kernels must be a list of names")
        issues.append(KnownIssue(
            id=str(entry["id"]), framework=str(entry["framework"]), provider=str(entry["provider"]),
            kernels=tuple(kernels), provider_before=str(entry["provider_before"] or ""),
            framework_versions=str(entry["framework_versions"] or ""),
            severity=entry["severity"], symptom=" ".join(str(entry["symptom"]).split()),
            source=" ".join(str(entry["source"]).split()),
            workaround=" ".join(str(entry["workaround"]).split()), line=line or 0))
    releases = data.get("framework_releases") or {}
    if not isinstance(releases, dict) or not all(isinstance(v, dict) for v in releases.values()):
        raise ParseError(path, None, "framework_releases must map framework -> {version: date}")
    return KnownIssueTable(tuple(issues), {fw: {str(k): str(v) for k, v in vs.items()}
                                           for fw, vs in releases.items()})


@functools.lru_cache(maxsize=1)
def load_known_issues() -> KnownIssueTable:
    """The shipped table (parsed once per content: see `cached_table`)."""
    return cached_table(SOURCE.read_text(encoding="utf-8"), "opdb/sources/known_issues.yaml")


def cached_table(text: str, path: str) -> KnownIssueTable:
    """`parse_known_issues(text, path)`, kept in the cache directory as JSON under the
    sha256 of the text, of `path` and of this module's source, so a table parsed once is
    read back without importing PyYAML (~12 ms of every Paddle scan, which reads the
    table for its blacklist). An edited table or parser is another key, parsed again; an
    unreadable or malformed cache entry is parsed again too; the cache is written only
    after a successful parse, and a cache that cannot be written costs only the parse."""
    import hashlib
    import json

    from opdb.fsutil import atomic_write_text, cache_dir

    key = hashlib.sha256("\0".join((text, path, Path(__file__).read_text(encoding="utf-8")))
                         .encode("utf-8")).hexdigest()
    entry = cache_dir() / f"known-issues-{key[:32]}.json"
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
        return KnownIssueTable(
            tuple(KnownIssue(**{**i, "kernels": tuple(i["kernels"])}) for i in data["issues"]),
            data["releases"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    table = parse_known_issues(text, path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(entry, json.dumps(
            {"issues": [dataclasses.asdict(i) for i in table.issues], "releases": table.releases},
            sort_keys=True))
    except OSError:
        pass
    return table
