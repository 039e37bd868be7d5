"""`LogReport`: what a set of NPU run logs says about ops (one `LogOp` per op and kind), the
join with an earlier scan, and the report schema (closed, like report.json's).

Per op the report keeps a bounded amount (count, up to `MAX_KEYS` distinct kernel keys,
dtypes, the first occurrence and its line), so memory does not grow with the log size.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from analyzer.logscan.reader import FileStats, looks_binary, read_head, scan_file
from analyzer.logscan.shapes import KINDS, shapes_for
from opdb.errors import OpscanError

LOG_SCHEMA_VERSION = 1
MAX_KEYS = 16
# kinds whose op names no framework op (CANN op types, aclnn APIs, a dtype pair)
UNMATCHED_KINDS = ("npu-error", "dtype-cast", "cann-unsupported", "cann-skew")


@dataclass
class LogOp:
    """One op (kernel name, aten op or CANN op type) with one kind of event."""

    op: str
    kind: str  # see shapes.KINDS
    count: int = 0
    backends: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # distinct kernel keys, first MAX_KEYS
    dtypes: list[str] = field(default_factory=list)
    first: str = ""  # file:line of the first occurrence
    line: str = ""  # that line (cut to 400 characters)
    shape: str = ""  # which line shape matched first


@dataclass
class ScanJoin:
    """A log set against an earlier `opscan` report.json of the same framework."""

    scan: str  # the report.json path
    target: str
    confirmed: list[str] = field(default_factory=list)  # predicted gaps the run hit
    not_hit: list[str] = field(default_factory=list)  # predicted gaps the log does not show
    missed: list[str] = field(default_factory=list)  # fallbacks/failures the scan did not predict
    blacklisted: list[str] = field(default_factory=list)  # forced by CUSTOM_DEVICE_BLACK_LIST
    unmatched: list[str] = field(default_factory=list)  # UNMATCHED_KINDS: no scan op


@dataclass
class LogReport:
    schema_version: int
    tool: str
    framework: str
    summary: str
    files: list[FileStats] = field(default_factory=list)
    ops: list[LogOp] = field(default_factory=list)
    join: ScanJoin | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        if out["join"] is None:
            out.pop("join")
        return out


def scan_logs(paths, framework: str, scan_report: str | None = None,
              prefilter: str = "auto") -> LogReport:
    """Read every file of `paths` (plain or gzip) and build the report; with
    `scan_report` (a report.json path) join the log with that scan. prefilter: see
    `reader.scan_file` (both give the same report)."""
    if framework not in ("paddle", "torch"):
        raise OpscanError(f"unknown framework {framework!r}", hint="use --framework paddle or torch")
    if not paths:
        raise OpscanError("no log file given", hint="pass one or more log files")
    shapes = shapes_for(framework)
    seen: dict[str, str] = {}
    heads = {}
    for p in paths:  # every file is checked before any is read in full
        real = os.path.realpath(p)
        if real in seen:
            same = "is given twice" if seen[real] == str(p) else f"and {seen[real]} are the same file"
            raise OpscanError(f"{p} {same}: its lines would count twice",
                              hint="pass each log file once")
        seen[real] = str(p)
        heads[str(p)] = read_head(p)
    # the other framework's own lines are read in the same pass (CANN's lines appear under
    # either framework): a log with none of ours and some of theirs is the wrong --framework
    other = "torch" if framework == "paddle" else "paddle"
    theirs = tuple(s for s in shapes_for(other) if s.name.startswith(f"{other}-"))
    their_names = {s.name for s in theirs}
    first_theirs = None
    ops: dict[tuple[str, str], LogOp] = {}
    files = []
    for p in paths:
        st = FileStats(str(p))
        for h in scan_file(p, shapes + theirs, st, prefilter=prefilter):
            if h.hit.shape in their_names:
                st.hits -= 1
                first_theirs = first_theirs or h
                continue
            k = (h.hit.op, h.hit.kind)
            o = ops.get(k)
            if o is None:
                o = ops[k] = LogOp(h.hit.op, h.hit.kind, first=f"{h.path}:{h.line}",
                                   line=h.text, shape=h.hit.shape)
            o.count += 1
            if h.hit.backend and h.hit.backend not in o.backends and len(o.backends) < MAX_KEYS:
                o.backends.append(h.hit.backend)
            if h.hit.key and h.hit.key not in o.keys and len(o.keys) < MAX_KEYS:
                o.keys.append(h.hit.key)
            d = h.hit.dtype
            if d and d not in o.dtypes and len(o.dtypes) < MAX_KEYS:
                o.dtypes.append(d)
        files.append(st)
    if not ops:  # nothing found: say so only of files that are this framework's logs
        if first_theirs is not None:
            h = first_theirs
            raise OpscanError(f"{h.path} is a {other} log, not a {framework} one (line {h.line}: "
                              f"{h.text[:80]})", hint=f"use --framework {other}")
        for p in paths:  # (binary junk inside a log with hits is tolerated)
            if looks_binary(heads[str(p)]):
                raise OpscanError(f"{p}: binary data, not a text log",
                                  hint="pass the log file itself (plain text or .gz)")
    order = {k: i for i, k in enumerate(KINDS)}
    rows = sorted(ops.values(), key=lambda o: (order[o.kind], -o.count, o.op))
    rep = LogReport(LOG_SCHEMA_VERSION, "opscan 0.1.0", framework, "", files, rows)
    for st in files:
        if st.note:
            rep.notes.append(f"{st.path}: {st.note}")
    if scan_report:
        rep.join = join_scan(rep, scan_report)
    rep.summary = summary_line(rep)
    return rep


def summary_line(rep: LogReport) -> str:
    lines = sum(f.lines for f in rep.files)
    by_kind: dict[str, set[str]] = {}
    for o in rep.ops:
        by_kind.setdefault(o.kind, set()).add(o.op)
    parts = [f"{len(v)} {k}" for k, v in ((k, by_kind.get(k)) for k in KINDS) if v]
    head = (f"{len(rep.files)} log file(s), {lines} lines ({rep.framework}): "
            + (", ".join(parts) + " op(s)" if parts else "no fallback or failure lines"))
    if rep.join is not None:
        j = rep.join
        head += (f"; vs scan: {len(j.confirmed)} confirmed, {len(j.not_hit)} not hit, "
                 f"{len(j.missed)} missed by the scan")
    return head


def _base(op: str) -> str:
    """`aten::isin.Tensor_Tensor_out` -> `aten::isin`; paddle names unchanged."""
    return op.split(".", 1)[0]


def join_scan(rep: LogReport, path: str) -> ScanJoin:
    """Which gaps the scan predicted were confirmed by the run, which were not hit, and
    which fallbacks or failures the scan missed (analyzer bugs to report)."""
    from analyzer.model import GAP_CATEGORIES
    from analyzer.report.json_report import load_report

    scan = load_report(path)
    if scan["framework"] != rep.framework:
        raise OpscanError(f"{path}: a {scan['framework']} scan, the logs are {rep.framework}",
                          hint=f"pass --framework {scan['framework']} or the matching scan")
    gap_names: dict[str, str] = {}  # any spelling -> scan op
    all_names: dict[str, str] = {}
    for v in scan["verdicts"]:
        for n in [v["op"], *v.get("aliases", [])]:
            for key in (n, _base(n)):
                all_names.setdefault(key, v["op"])
                if v["category"] in GAP_CATEGORIES:
                    gap_names.setdefault(key, v["op"])
    j = ScanJoin(scan=str(path), target=scan["target"])
    hit_scan_ops: set[str] = set()
    for o in rep.ops:
        if o.kind in UNMATCHED_KINDS:
            j.unmatched.append(f"{o.op} ({o.kind})")
            continue
        if o.kind == "blacklisted":
            j.blacklisted.append(o.op)
            hit_scan_ops.add(gap_names.get(o.op) or gap_names.get(_base(o.op)) or "")
            continue
        g = gap_names.get(o.op) or gap_names.get(_base(o.op))
        if g:
            hit_scan_ops.add(g)
            continue
        known = all_names.get(o.op) or all_names.get(_base(o.op))
        why = (f"the scan classified {known} as not a gap" if known
               else "the scan never saw it")
        j.missed.append(f"{o.op} ({o.kind}, {o.count}x): {why}")
    for v in scan["verdicts"]:
        if v["category"] not in GAP_CATEGORIES:
            continue
        (j.confirmed if v["op"] in hit_scan_ops else j.not_hit).append(v["op"])
    j.confirmed = sorted(set(j.confirmed))
    j.not_hit = sorted(set(j.not_hit) - set(j.confirmed))
    j.blacklisted = sorted(set(j.blacklisted))
    return j


# ---------------------------------------------------------------- schema

def _obj(props: dict, required=None) -> dict:
    return {"type": "object", "properties": props,
            "required": sorted(props) if required is None else required,
            "additionalProperties": False}


_S = {"type": "string"}
_I = {"type": "integer", "minimum": 0}
_SS = {"type": "array", "items": _S}

LOG_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "opscan log report",
    "description": "What NPU run logs say about ops (log.json, schema_version 1); "
                   "documented in docs/log-report.md.",
    **_obj({
        "schema_version": {"type": "integer", "enum": [LOG_SCHEMA_VERSION]},
        "tool": _S,
        "framework": {"type": "string", "enum": ["torch", "paddle"]},
        "summary": _S,
        "files": {"type": "array", "items": _obj({
            "path": _S, "gzip": {"type": "boolean"}, "bytes": _I, "lines": _I, "hits": _I,
            "note": _S})},
        "ops": {"type": "array", "items": _obj({
            "op": _S, "kind": {"type": "string", "enum": list(KINDS)}, "count": _I,
            "backends": _SS, "keys": _SS, "dtypes": _SS, "first": _S, "line": _S,
            "shape": _S})},
        "join": _obj({"scan": _S, "target": _S, "confirmed": _SS, "not_hit": _SS,
                      "missed": _SS, "blacklisted": _SS, "unmatched": _SS}),
        "notes": _SS,
    }, required=["schema_version", "tool", "framework", "summary", "files", "ops", "notes"]),
}


def validate_log_report(data: dict) -> dict:
    """The normalized report dict, or ReportSchemaError naming the first bad field."""
    import json

    from analyzer.report.json_report import ReportSchemaError, _errors

    data = json.loads(json.dumps(data))
    errs = list(_errors(data, LOG_SCHEMA, "$"))
    if errs:
        raise ReportSchemaError(f"log report: {errs[0]}",
                                hint="write it with `opscan log` (docs/log-report.md)")
    return data
