"""Which op names each opdb table holds, per framework: `NameIndex`, read by `read_name_index()`.

    index = read_name_index(con, "torch")
    "aten::erfinv" in index.adapted     # some release adapts it

A classification asks opdb about many names that exist nowhere (`related_ops` tries
in-place, `_ex`, `linalg_`, backward and overload spellings of every op it sees: about
fifty per op). `OpDB` reads the name columns once per framework (five small queries, no
JSON decoded) and answers those lookups without SQL; a name the index holds is still
read from SQLite, so the records and their overlay precedence come from one place
(`OpDB._decode`). The connection is read-only for the life of an `OpDB`, so the index
cannot go stale under it.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class NameIndex:
    """Names per table for one framework (snapshot and overlay rows alike)."""

    ops: frozenset[str]  # framework_ops.name
    aliases: frozenset[str]  # op_aliases.alias
    adapted: frozenset[str]  # adapters.op, any provider release
    mapped: frozenset[str]  # op_aclnn_map.op
    failing: frozenset[str]  # known_failures.op


def _names(con: sqlite3.Connection, sql: str, framework: str) -> frozenset[str]:
    return frozenset(r[0] for r in con.execute(sql, (framework,)))


def read_name_index(con: sqlite3.Connection, framework: str) -> NameIndex:
    """The `NameIndex` of `framework` over the connection's (snapshot + overlay) views."""
    return NameIndex(
        ops=_names(con, "SELECT name FROM framework_ops WHERE framework=?", framework),
        aliases=_names(con, "SELECT alias FROM op_aliases WHERE framework=?", framework),
        adapted=_names(con, "SELECT DISTINCT op FROM adapters WHERE framework=?", framework),
        mapped=_names(con, "SELECT DISTINCT op FROM op_aclnn_map WHERE framework=?", framework),
        failing=_names(con, "SELECT DISTINCT op FROM known_failures WHERE framework=?", framework))
