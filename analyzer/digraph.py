"""Directed graphs for the op graph of a scan: networkx's attribute API, the part opscan uses.

`analyzer.graph` builds a call graph (`MultiDiGraph`: one edge per tensor, keyed by
tensor id) and its per-op view (`DiGraph`); `analyzer.fallback` walks them. Importing
networkx costs about 0.2 s (its algorithms and its backend entry points), a sixth of a
small model's whole dump-op process, and a scan needs none of it. These classes keep
networkx's spelling for what opscan reads and writes (`g.graph`, `g.nodes[n]`,
`g.edges[u, v, k]`, `add_node`, `add_edge`, `edges(keys=, data=)`, `in_edges`,
`out_edges`, `predecessors`, `successors`, `has_edge`, `get_edge_data`, `number_of_nodes`,
`number_of_edges`), with the same iteration orders (insertion order of nodes, of each
node's successors and of each pair's keys), so code written against networkx runs on
either and gives the same output. `tests/analyzer/test_digraph.py` checks them against
networkx itself. `connected_components` is the one algorithm the fallback cost needs.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any


class _NodeView:
    """`g.nodes`: iterate, `len`, `in`, and `g.nodes[n]` -> the attribute dict."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: dict) -> None:
        self._nodes = nodes

    def __getitem__(self, n: Hashable) -> dict:
        return self._nodes[n]

    def __iter__(self) -> Iterator:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, n: object) -> bool:
        return n in self._nodes

    def __call__(self, data: bool = False):
        return iter(self._nodes.items()) if data else iter(self._nodes)


class _EdgeView:
    """`g.edges`: called like networkx's (`keys=`, `data=`), indexed by `[u, v]` or
    `[u, v, key]` for the attribute dict."""

    __slots__ = ("_g",)

    def __init__(self, g: "DiGraph") -> None:
        self._g = g

    def __call__(self, nbunch: Iterable | None = None, data: bool = False,
                 keys: bool = False) -> Iterator[tuple]:
        return self._g._edges(nbunch, data, keys)

    def __iter__(self) -> Iterator[tuple]:
        return self._g._edges(None, False, False)

    def __len__(self) -> int:
        return self._g.number_of_edges()

    def __getitem__(self, e: tuple) -> dict:
        return self._g._edge_attrs(*e)


class DiGraph:
    """A directed graph, at most one edge per (u, v), with attribute dicts."""

    multigraph = False

    def __init__(self, **attr: Any) -> None:
        self.graph: dict = dict(attr)
        self._node: dict = {}
        self._succ: dict = {}
        self._pred: dict = {}

    # ------------------------------------------------------------ networkx's API
    @property
    def nodes(self) -> _NodeView:
        return _NodeView(self._node)

    @property
    def edges(self) -> _EdgeView:
        return _EdgeView(self)

    def is_directed(self) -> bool:
        return True

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __contains__(self, n: object) -> bool:
        return n in self._node

    def __iter__(self) -> Iterator:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def add_node(self, n: Hashable, **attr: Any) -> None:
        if n in self._node:
            self._node[n].update(attr)
        else:
            self._node[n] = dict(attr)
            self._succ[n] = {}
            self._pred[n] = {}

    def add_nodes_from(self, nodes: Iterable) -> None:
        for n in nodes:
            self.add_node(n)

    def add_edge(self, u: Hashable, v: Hashable, **attr: Any) -> None:
        for n in (u, v):
            if n not in self._node:
                self.add_node(n)
        d = self._succ[u].get(v)
        if d is None:
            d = self._succ[u][v] = self._pred[v][u] = {}
        d.update(attr)

    def has_edge(self, u: Hashable, v: Hashable) -> bool:
        return u in self._succ and v in self._succ[u]

    def predecessors(self, n: Hashable) -> Iterator:
        return iter(self._pred[n])

    def get_edge_data(self, u: Hashable, v: Hashable, default: Any = None) -> Any:
        """The attribute dict of edge (u, v) (a multigraph: its {key: attribute dict});
        `default` when there is none. Read it, do not change it (networkx hands out a
        read-only view)."""
        return self._succ.get(u, {}).get(v, default)

    def successors(self, n: Hashable) -> Iterator:
        return iter(self._succ[n])

    def number_of_nodes(self) -> int:
        return len(self._node)

    def number_of_edges(self) -> int:
        return sum(len(vs) for vs in self._succ.values())

    def in_edges(self, n: Hashable, data: bool = False, keys: bool = False) -> Iterator[tuple]:
        for u in self._pred[n]:
            yield from self._pairs(u, n, self._succ[u][n], data, keys)

    def out_edges(self, n: Hashable, data: bool = False, keys: bool = False) -> Iterator[tuple]:
        yield from self._edges([n], data, keys)

    # ------------------------------------------------------------ storage
    def _pairs(self, u, v, d: dict, data: bool, keys: bool) -> Iterator[tuple]:
        yield (u, v, d) if data else (u, v)

    def _edges(self, nbunch, data: bool, keys: bool) -> Iterator[tuple]:
        nodes = self._node if nbunch is None else [n for n in nbunch if n in self._node]
        for u in nodes:
            for v, d in self._succ[u].items():
                yield from self._pairs(u, v, d, data, keys)

    def _edge_attrs(self, u, v, *key) -> dict:
        return self._succ[u][v]


class MultiDiGraph(DiGraph):
    """A directed graph with any number of keyed edges per (u, v)."""

    multigraph = True

    def add_edge(self, u: Hashable, v: Hashable, key: Hashable | None = None,
                 **attr: Any) -> Hashable:
        for n in (u, v):
            if n not in self._node:
                self.add_node(n)
        by_key = self._succ[u].get(v)
        if by_key is None:
            by_key = self._succ[u][v] = self._pred[v][u] = {}
        if key is None:  # networkx's default key: the lowest unused integer
            key = len(by_key)
            while key in by_key:
                key += 1
        by_key.setdefault(key, {}).update(attr)
        return key

    def has_edge(self, u: Hashable, v: Hashable, key: Hashable | None = None) -> bool:
        by_key = self._succ.get(u, {}).get(v)
        return by_key is not None and (key is None or key in by_key)

    def number_of_edges(self) -> int:
        return sum(len(ks) for vs in self._succ.values() for ks in vs.values())

    def _pairs(self, u, v, by_key: dict, data: bool, keys: bool) -> Iterator[tuple]:
        for k, d in by_key.items():
            if keys:
                yield (u, v, k, d) if data else (u, v, k)
            else:
                yield (u, v, d) if data else (u, v)

    def _edge_attrs(self, u, v, key) -> dict:
        return self._succ[u][v][key]


def connected_components(g: DiGraph) -> Iterator[set]:
    """Weakly connected components of `g` (edges taken both ways), as node sets, in order
    of their first node."""
    seen: set = set()
    for start in g._node:
        if start in seen:
            continue
        comp = {start}
        todo = [start]
        while todo:
            n = todo.pop()
            for m in (*g._succ[n], *g._pred[n]):
                if m not in comp:
                    comp.add(m)
                    todo.append(m)
        seen |= comp
        yield comp
