"""The library API over opdb: every question the analyzer, opgen and the CLI ask.

    db = OpDB.open()                      # shipped snapshot + the user's overlay
    db.aclnn_api("aclnnAdd")
    db.adapters("paddle", op="adam", target="PaddleCustomDevice@develop")
    db.resolve_aclnn("Adam", framework="paddle")

Results are opdb.model dataclasses decoded from each row's JSON. Rows from the user's
overlay (`opdb sync ...`) are visible next to the snapshot's, and preferred where the
same key exists in both.
"""
from __future__ import annotations

import difflib
import json
import re
import sqlite3
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from opdb import snapshot, store
from opdb.errors import NotFound, OpscanError
from opdb.model import (FRAMEWORKS, AclnnApi, Adapter, FrameworkOp, KnownFailure,
                        OpAclnnMapping, ProvenanceRecord, from_row)
from opdb.name_index import NameIndex, read_name_index
from opdb.names import norm_aclnn, norm_op, norm_text
from opdb.versions import version_key

ALL_CUSTOM_DEVICES = "paddle (all custom devices)"
PROVIDERS = {"torch": ("torch_npu",), "paddle": ("PaddleCustomDevice",)}


@dataclass(frozen=True)
class Target:
    """A provider release adapters are looked up in: `torch_npu==2.13.0`."""

    framework: str
    provider: str
    version: str

    def __str__(self) -> str:
        sep = "==" if self.provider == "torch_npu" else "@"
        return f"{self.provider}{sep}{self.version}"


@dataclass(frozen=True)
class SearchHit:
    kind: str  # aclnn | torch-op | paddle-op | adapter
    name: str
    score: float
    detail: str = ""


def _version_key(version: str) -> tuple:
    """Numeric release order (PEP 440 for torch_npu): see opdb.versions."""
    return version_key(version)


def _check_framework(framework: str) -> None:
    if framework not in FRAMEWORKS:
        raise OpscanError(f"unknown framework {framework!r}", hint="use torch or paddle")


# Longer than any op or aclnn API name (the longest are under 100 characters): such text
# matches nothing, and fuzzy matching it would cost O(len^2) per candidate.
MAX_NAME_LEN = 256


class OpDB:
    """Read-only access to the snapshot (and overlay) SQLite databases."""

    def __init__(self, con: sqlite3.Connection, snapshot_sha256: str):
        self.con = con
        self.snapshot_sha256 = snapshot_sha256
        self._targets: dict[str, list[Target]] = {}  # read-only: one GROUP BY per framework
        # The connection is read-only (store.connect), so what a lookup returns cannot
        # change under this object: names per table (opdb.name_index) answer lookups of
        # names no table holds, and decoded records are kept per lookup key (a scan asks
        # the same few dozen ops and their neighbours over and over).
        self._index: dict[str, NameIndex] = {}
        self._memo: dict[tuple, object] = {}

    @classmethod
    def open(cls, snapshot_dir: Path | None = None, overlay: Path | None | bool = True) -> "OpDB":
        """Open the shipped snapshot; `overlay=True` adds the user's overlay if it exists,
        a Path uses that overlay file, False/None ignores overlays."""
        snapshot_dir = snapshot_dir or snapshot.SNAPSHOT_DIR
        db_path = store.snapshot_db_path(snapshot_dir)
        ov = store.overlay_path() if overlay is True else (overlay or None)
        con = store.connect(db_path, ov)
        sha = con.execute("SELECT value FROM main.meta WHERE key='snapshot_sha256'").fetchone()
        return cls(con, sha[0] if sha else "")

    # ------------------------------------------------------------ helpers
    def _rows(self, sql: str, args=()) -> list[sqlite3.Row]:
        return self.con.execute(sql, args).fetchall()

    def name_index(self, framework: str) -> NameIndex:
        """Which names each table holds for `framework` (read once per OpDB)."""
        if framework not in self._index:
            self._index[framework] = read_name_index(self.con, framework)
        return self._index[framework]

    @cached_property
    def _aclnn_name_set(self) -> frozenset[str]:
        return frozenset(self._aclnn_names)

    @staticmethod
    def _decode(cls, rows) -> list:
        seen, out = set(), []
        # overlay rows first so they win over snapshot rows with the same key
        for r in sorted(rows, key=lambda r: r["origin"] != "overlay"):
            rec = from_row(cls, json.loads(r["row"]))
            if rec.key() in seen:
                continue
            seen.add(rec.key())
            out.append(rec)
        return out

    # ------------------------------------------------------------ aclnn
    def aclnn_api(self, name: str) -> AclnnApi | None:
        """The API; a synced CANN install's declaration wins over the snapshot's, with the
        docs-only facts (products, per-param dtypes) filled in from the snapshot."""
        key = ("aclnn_api", name)
        if key in self._memo:
            return self._memo[key]
        api = self._aclnn_api(name) if name in self._aclnn_name_set else None
        self._memo[key] = api
        return api

    def _aclnn_api(self, name: str) -> AclnnApi | None:
        rows = self._rows("SELECT row, origin FROM aclnn_apis WHERE name=?", (name,))
        if not rows:
            return None
        by_origin = {r["origin"]: from_row(AclnnApi, json.loads(r["row"])) for r in rows}
        api = by_origin.get("overlay") or by_origin["snapshot"]
        docs = by_origin.get("snapshot")
        if docs is not None and api is not docs:
            api = _fill_from_docs(api, docs)
        return api

    def aclnn_apis(self) -> list[AclnnApi]:
        return sorted(self._decode(AclnnApi, self._rows("SELECT row, origin FROM aclnn_apis")),
                      key=lambda a: a.name)

    @cached_property
    def _aclnn_names(self) -> list[str]:
        return sorted({r[0] for r in self._rows("SELECT name FROM aclnn_apis")})

    # ------------------------------------------------------------ framework ops
    def framework_op(self, framework: str, name: str) -> FrameworkOp | None:
        """By exact name (torch: `aten::x` or `aten::x.overload`, `.default` accepted;
        paddle: kernel name), else by alias (paddle `adam_`, `matmul_v2`)."""
        _check_framework(framework)
        key = ("framework_op", framework, name)
        if key not in self._memo:
            self._memo[key] = self._framework_op(framework, name, self.name_index(framework))
        return self._memo[key]

    def _framework_op(self, framework: str, name: str, index: NameIndex | None) -> FrameworkOp | None:
        """`framework_op` from SQLite; `index` skips the names no table holds."""
        names = [name]
        if framework == "torch":
            if "::" not in name:
                names.append(f"aten::{name}")
            names += [n[: -len(".default")] for n in list(names) if n.endswith(".default")]
        for n in names:
            if index is not None and n not in index.ops:
                continue
            rows = self._rows("SELECT row, origin FROM framework_ops WHERE framework=? AND name=?",
                              (framework, n))
            if rows:
                return self._decode(FrameworkOp, rows)[0]
        for n in names:
            if index is not None and n not in index.aliases:
                continue
            alias = self._rows("SELECT name FROM op_aliases WHERE framework=? AND alias=?", (framework, n))
            if alias:
                return self.framework_op(framework, alias[0][0])
        return None

    def framework_ops(self, framework: str) -> list[FrameworkOp]:
        _check_framework(framework)
        return sorted(self._decode(FrameworkOp, self._rows(
            "SELECT row, origin FROM framework_ops WHERE framework=?", (framework,))),
            key=lambda o: o.name)

    def aliases(self, framework: str, name: str) -> list[str]:
        return sorted({r[0] for r in self._rows(
            "SELECT alias FROM op_aliases WHERE framework=? AND name=?", (framework, name))})

    # ------------------------------------------------------------ targets & adapters
    def targets(self, framework: str) -> list[Target]:
        """Provider releases for `framework`, newest first (torch by version,
        paddle by commit date). Computed once per framework (a scan asks per op)."""
        _check_framework(framework)
        if framework not in self._targets:
            self._targets[framework] = self._read_targets(framework)
        return list(self._targets[framework])

    def _read_targets(self, framework: str) -> list[Target]:
        rows = self._rows(
            "SELECT provider, version, max(date) AS d FROM adapters WHERE framework=? "
            "GROUP BY provider, version", (framework,))
        found = [Target(framework, r["provider"], r["version"]) for r in rows
                 if r["provider"] in PROVIDERS[framework]]
        dates = {(r["provider"], r["version"]): r["d"] or "" for r in rows}
        if framework == "torch":
            found.sort(key=lambda t: _version_key(t.version), reverse=True)
        else:  # release-2.6 < release-3.0-beta < develop; synced checkouts by commit date
            found.sort(key=lambda t: (t.version == "develop" or not t.version.startswith("release"),
                                      _version_key(t.version), dates[(t.provider, t.version)]),
                       reverse=True)
        return found

    def default_target(self, framework: str) -> Target:
        """The release paired with the installed framework (opdb.pairing), not the newest."""
        return self.pairing(framework).target

    def pairing(self, framework: str, target: "Target | str | None" = None):
        """opdb.pairing.Pairing of `target` (None: the default) with the installed framework."""
        from opdb.pairing import pair

        _check_framework(framework)
        key = ("pairing", framework, target if target is None or isinstance(target, Target)
               else str(target))
        if key not in self._memo:  # a scan asks twice (default target, then its notes)
            self._memo[key] = pair(self, framework, target)
        return self._memo[key]

    def parse_target(self, framework: str, text: str | None) -> Target:
        """`torch_npu==2.13.0`, `PaddleCustomDevice@develop` (either separator), or None
        for the default; errors list the known targets."""
        if not text:
            return self.default_target(framework)
        m = re.match(r"^\s*([^=@]+?)\s*(?:==|@)\s*(.+?)\s*$", text)
        known = self.targets(framework)
        if m:
            provider, version = m.group(1), m.group(2).replace("/", "-")
            for t in known:
                if t.provider.lower() == provider.lower() and t.version == version:
                    return t
        names = ", ".join(str(t) for t in known) or "none"
        raise NotFound(f"unknown {framework} target {text!r}", hint=f"known targets: {names}")

    def adapters(self, framework: str, op: str | None = None,
                 target: Target | str | None = None) -> list[Adapter]:
        """Adapters of `op` (all ops when None) in `target` (all releases when None).
        For a paddle target, kernels Paddle registers for every custom device count too."""
        _check_framework(framework)
        t = None
        if target is not None:
            t = target if isinstance(target, Target) else self.parse_target(framework, target)
        if op is None:
            return self._adapters(framework, None, t)
        key = ("adapters", framework, op, t)
        if key not in self._memo:
            self._memo[key] = (self._adapters(framework, op, t)
                               if op in self.name_index(framework).adapted else [])
        return list(self._memo[key])

    def _adapters(self, framework: str, op: str | None, t: Target | None) -> list[Adapter]:
        sql, args = "SELECT row, origin FROM adapters WHERE framework=?", [framework]
        if op is not None:
            sql += " AND op=?"
            args.append(op)
        if t is not None:
            sql += " AND ((provider=? AND version=?)" + (" OR provider=?)" if framework == "paddle" else ")")
            args += [t.provider, t.version] + ([ALL_CUSTOM_DEVICES] if framework == "paddle" else [])
        found = self._decode(Adapter, self._rows(sql, args))
        return sorted(found, key=lambda a: (a.op, a.provider, _version_key(a.version), a.version))

    def adapted_ops(self, framework: str, target: Target | str | None = None) -> set[str]:
        """Names of every op the target adapts (what a tracer emulates as NPU kernels)."""
        t = target if isinstance(target, Target) else self.parse_target(framework, target)
        args = [framework, t.provider, t.version]
        extra = ""
        if framework == "paddle":
            extra, args = " OR provider=?", args + [ALL_CUSTOM_DEVICES]
        return {r[0] for r in self._rows(
            f"SELECT DISTINCT op FROM adapters WHERE framework=? AND ((provider=? AND version=?){extra})",
            args)}

    def adapter_releases(self, framework: str, op: str) -> frozenset[tuple[str, str]]:
        """(provider, version) of every release with an adapter of `op`: what
        `adapters(framework, op)` would name, read from two columns, no record decoded."""
        _check_framework(framework)
        key = ("adapter_releases", framework, op)
        if key not in self._memo:
            # `line`, outside the primary key, keeps SQLite on the (framework, op) index:
            # with only key columns it picks the covering primary key and walks every
            # adapter of the framework (measured 1.2 ms a lookup against 0.1 ms)
            self._memo[key] = frozenset(
                (r[0], r[1]) for r in self._rows(
                    "SELECT provider, version, line FROM adapters WHERE framework=? AND op=?",
                    (framework, op))) if op in self.name_index(framework).adapted else frozenset()
        return self._memo[key]

    def first_release(self, framework: str, op: str) -> Target | None:
        """The oldest provider release in opdb that adapts `op`."""
        releases = self.adapter_releases(framework, op)
        for t in reversed(self.targets(framework)):
            if (t.provider, t.version) in releases:
                return t
        return None

    # ------------------------------------------------------------ mappings
    def mappings(self, framework: str | None = None, op: str | None = None,
                 aclnn: str | None = None) -> list[OpAclnnMapping]:
        if framework in FRAMEWORKS and op is not None and aclnn is None:
            key = ("mappings", framework, op)
            if key not in self._memo:
                self._memo[key] = (self._mappings(framework, op, None)
                                   if op in self.name_index(framework).mapped else [])
            return list(self._memo[key])
        return self._mappings(framework, op, aclnn)

    def _mappings(self, framework: str | None, op: str | None,
                  aclnn: str | None) -> list[OpAclnnMapping]:
        sql, args = "SELECT row, origin FROM op_aclnn_map WHERE 1=1", []
        for col, val in (("framework", framework), ("op", op), ("aclnn", aclnn)):
            if val is not None:
                sql += f" AND {col}=?"
                args.append(val)
        found = self._decode(OpAclnnMapping, self._rows(sql, args))
        return sorted(found, key=lambda m: (-m.confidence, m.op, m.aclnn, m.evidence, m.source.source))

    def known_failures(self, framework: str, op: str | None = None) -> list[KnownFailure]:
        if framework in FRAMEWORKS and op is not None and op not in self.name_index(framework).failing:
            return []
        return self._known_failures(framework, op)

    def _known_failures(self, framework: str, op: str | None) -> list[KnownFailure]:
        sql, args = "SELECT row, origin FROM known_failures WHERE framework=?", [framework]
        if op is not None:
            sql += " AND op=?"
            args.append(op)
        return sorted(self._decode(KnownFailure, self._rows(sql, args)), key=lambda k: k.key())

    def provenance(self) -> list[ProvenanceRecord]:
        return sorted(self._decode(ProvenanceRecord, self._rows("SELECT row, origin FROM provenance")),
                      key=lambda p: p.key())

    def overlay_sources(self) -> list[ProvenanceRecord]:
        """Provenance of every source synced into the overlay (what a report names
        next to the snapshot hash)."""
        rows = self._rows("SELECT row FROM provenance WHERE origin='overlay'")
        return sorted({from_row(ProvenanceRecord, json.loads(r["row"])) for r in rows},
                      key=lambda p: p.key())

    # ------------------------------------------------------------ resolution & search
    def resolve_aclnn(self, text: str, framework: str | None = None, limit: int = 10,
                      soc: str | None = None) -> list[AclnnApi]:
        """APIs that `text` may mean, best first: the exact name; APIs mapped from a
        framework op of that name; normalized-name matches; then fuzzy matches. With
        `soc`, APIs whose docs say they do not run on that chip rank lower."""
        text = text.strip()
        exact = self.aclnn_api(text) or self.aclnn_api("aclnn" + text)
        if exact:
            return [exact]
        ranked: dict[str, float] = {}

        def offer(name: str, score: float) -> None:
            if name in self._aclnn_names:
                ranked[name] = max(ranked.get(name, 0.0), score)

        key = norm_text(text)
        if not key or len(text) > MAX_NAME_LEN:
            return []
        for fw in ([framework] if framework else list(FRAMEWORKS)):
            op = self.framework_op(fw, text) or (self.framework_op(fw, f"aten::{text}") if fw == "torch" else None)
            names = {text, text.lower()} | ({op.name} if op else set())
            for name in names:
                for m in self.mappings(fw, name):
                    offer(m.aclnn, 0.5 + 0.4 * m.confidence)
        for name in self._aclnn_names:
            n = norm_aclnn(name)
            if n == key:
                offer(name, 0.95 if "Inplace" not in name else 0.85)
            elif n.startswith(key) or ("apply" + key) == n or n.endswith(key):
                offer(name, 0.7)
        if not ranked:
            for name in difflib.get_close_matches(key, [norm_aclnn(n) for n in self._aclnn_names], n=limit, cutoff=0.75):
                for full in self._aclnn_names:
                    if norm_aclnn(full) == name:
                        offer(full, 0.4)
        if soc:
            from opdb.soc import supports
            for n in ranked:
                if supports(self.aclnn_api(n).products, soc) is False:
                    ranked[n] *= 0.8
        order = sorted(ranked, key=lambda n: (-ranked[n], len(n), n))[:limit]
        return [self.aclnn_api(n) for n in order]

    def close_aclnn_names(self, text: str, n: int = 5) -> list[str]:
        """Closest API names, for `did you mean` hints."""
        by_norm = {}
        for name in self._aclnn_names:
            by_norm.setdefault(norm_aclnn(name), name)
        if len(text) > MAX_NAME_LEN:
            return []
        keys = difflib.get_close_matches(norm_text(text), list(by_norm), n=n, cutoff=0.5)
        return [by_norm[k] for k in keys]

    def search(self, text: str, limit: int = 20) -> list[SearchHit]:
        """Fuzzy search over aclnn APIs, framework ops and their aliases."""
        key = norm_text(text)
        raw = text.strip().lower()
        hits: dict[tuple[str, str], SearchHit] = {}
        if not key or len(text) > MAX_NAME_LEN:
            return []  # no op or API name is that long: nothing to compare (and no O(n*m) work)

        def score(cand_norm: str, cand: str) -> float:
            if cand_norm == key or cand.lower() == raw:
                return 1.0
            if cand_norm.startswith(key):
                return 0.9 - 0.002 * (len(cand_norm) - len(key))
            if key in cand_norm:
                return 0.8 - 0.002 * (len(cand_norm) - len(key))
            sm = difflib.SequenceMatcher(None, key, cand_norm)
            if sm.real_quick_ratio() <= 0.7 or sm.quick_ratio() <= 0.7:
                return 0.0  # upper bounds of ratio(): skip the quadratic match
            r = sm.ratio()
            return r * 0.75 if r > 0.7 else 0.0

        def add(kind: str, name: str, norm: str, detail: str = "") -> None:
            s = score(norm, name)
            if s > 0 and (kind, name) not in hits:
                hits[(kind, name)] = SearchHit(kind, name, round(s, 3), detail)

        for name in self._aclnn_names:
            add("aclnn", name, norm_aclnn(name))
        for r in self._rows("SELECT framework, name, kind FROM framework_ops"):
            add(f"{r[0]}-op", r[1], norm_op(r[1]), r[2])
        for r in self._rows("SELECT framework, alias, name FROM op_aliases"):
            add(f"{r[0]}-op", r[2], norm_op(r[1]), f"alias {r[1]}")
        for r in self._rows("SELECT DISTINCT framework, op FROM adapters"):
            add(f"{r[0]}-op", r[1], norm_op(r[1]), "adapted")
        return sorted(hits.values(), key=lambda h: (-h.score, h.kind, h.name))[:limit]

    # ------------------------------------------------------------ stats & sql
    def stats(self) -> list[dict]:
        """Row counts per table, source and version."""
        out = []
        for table, vcol in (("aclnn_apis", "version"), ("framework_ops", "version"),
                            ("adapters", "version"), ("op_aclnn_map", "version"),
                            ("known_failures", "version")):
            extra = ", provider" if table == "adapters" else ", '' AS provider"
            group = "source, provider" if table == "adapters" else "source"
            fw = "framework" if table != "aclnn_apis" else "'cann' AS framework"
            for r in self._rows(
                    f"SELECT {fw}{extra}, source, {vcol} AS version, origin, count(*) AS n "
                    f"FROM {table} GROUP BY framework, {group}, {vcol}, origin ORDER BY 1, 2, 3, 4"):
                out.append({"table": table, "framework": r[0], "provider": r[1], "source": r[2],
                            "version": r[3], "origin": r[4], "rows": r[5]})
        return out

    def headline(self) -> list[str]:
        """The counts people quote: aclnn APIs, adapted ops per provider release."""
        out = [f"aclnn APIs: {self._rows('SELECT count(*) FROM aclnn_apis')[0][0]}"]
        for fw in FRAMEWORKS:
            for t in self.targets(fw):
                by_op = {}  # an op synced into the overlay over a shipped release counts once
                for r in sorted(self._rows(
                        "SELECT op, row, origin FROM adapters WHERE framework=? AND provider=? "
                        "AND version=?", (fw, t.provider, t.version)),
                        key=lambda r: r["origin"] != "overlay"):
                    by_op.setdefault(r[0], r)
                rows = list(by_op.values())
                if fw == "torch":
                    aten = sum(1 for r in rows if r[0].startswith("aten::"))
                    out.append(f"{t}: {len(rows)} adapted ops ({aten} aten::, {len(rows) - aten} npu::)")
                else:
                    custom = sum(1 for r in rows if '"custom op' in r[1])
                    out.append(f"{t}: {len(rows) - custom} kernels + {custom} custom ops")
        for fw in FRAMEWORKS:
            n = self._rows("SELECT count(*) FROM framework_ops WHERE framework=?", (fw,))[0][0]
            out.append(f"{fw} catalog: {n} ops")
        return out

    def sql(self, query: str) -> tuple[list[str], list[tuple]]:
        """Run one read-only query; returns (column names, rows).

        An SQLite authorizer allows reading only: ATTACH (which creates a file), VACUUM
        INTO, writes and pragmas that change state are refused before SQLite touches disk."""
        tables = ", ".join(store.TABLE_NAMES)
        if not query.strip() or not query.strip().strip(";").strip():
            raise OpscanError("empty SQL query", hint=f"e.g. `opdb sql 'SELECT count(*) FROM adapters'`; tables: {tables}")
        self.con.set_authorizer(_read_only_authorizer)
        try:
            cur = self.con.execute(query)
            cols = [d[0] for d in cur.description or ()]
            rows = [tuple(r) for r in cur.fetchall()]
        except sqlite3.Warning as exc:  # "You can only execute one statement at a time."
            raise OpscanError(f"SQL error: {exc}", hint="run one statement per call") from None
        except sqlite3.Error as exc:
            raise OpscanError(f"SQL error: {exc}",
                              hint="opdb sql is read-only (SELECT/WITH); tables: " + tables) from None
        finally:
            self.con.set_authorizer(None)
        return cols, rows


_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                 sqlite3.SQLITE_RECURSIVE}


def _read_only_authorizer(action, arg1, arg2, dbname, source):
    """sqlite3 authorizer for `opdb sql`: reading only (no ATTACH, VACUUM, PRAGMA, writes)."""
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _fill_from_docs(api: AclnnApi, docs: AclnnApi) -> AclnnApi:
    """Products and per-param dtypes come from the docs catalog when the installed
    headers (which have neither) do not say; so do the facts of where the API lives in
    the operator repositories (category, operator folder, `experimental/` only)."""
    import dataclasses

    dtypes = {p.name: p.dtypes for p in docs.params}
    params = tuple(p if p.dtypes else dataclasses.replace(p, dtypes=dtypes.get(p.name, ()))
                   for p in api.params)
    notes = api.notes
    same_signature = [(p.name, p.ctype) for p in api.params] == \
        [(p.name, p.ctype) for p in docs.params]
    if same_signature and [p.role for p in api.params] != [p.role for p in docs.params]:
        # the catalog's roles rest on the doc tables as well as the header: more evidence
        params = tuple(dataclasses.replace(p, role=d.role) for p, d in zip(params, docs.params))
        notes = notes + ("roles from the docs catalog (same signature as the header)",)
    if api.products is None and docs.products is not None:
        notes = notes + (f"products and dtypes from {docs.source.source}@{docs.source.version[:12]} docs",)
    return dataclasses.replace(api, params=params, products=api.products if api.products is not None
                               else docs.products, category=api.category or docs.category,
                               op_dir=api.op_dir or docs.op_dir,
                               experimental=api.experimental or docs.experimental, notes=notes)

