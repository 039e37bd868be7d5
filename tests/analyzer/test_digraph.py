"""analyzer.digraph: the graphs a scan builds answer what networkx's answer, in the same
order (networkx is the oracle here; the scan itself no longer imports it)."""
from __future__ import annotations

import random

import networkx as nx

from analyzer.digraph import DiGraph, MultiDiGraph, connected_components


def _random_ops(rng: random.Random, n_ops: int = 300):
    ops = []
    for _ in range(n_ops):
        u, v = rng.randrange(40), rng.randrange(40)
        kind = rng.random()
        if kind < 0.2:
            ops.append(("node", u, {"op": f"o{v}", "step": rng.randrange(3)}))
        else:
            key = rng.choice([None, rng.randrange(4)])
            ops.append(("edge", (u, v, key), {"bytes": rng.randrange(100), "w": kind < 0.5}))
    return ops


def _apply(g, ops, multi: bool):
    for kind, what, attrs in ops:
        if kind == "node":
            g.add_node(what, **attrs)
        elif multi:
            u, v, key = what
            g.add_edge(u, v, key=key, **attrs)
        else:
            u, v, _key = what
            g.add_edge(u, v, **attrs)
    return g


def test_multidigraph_matches_networkx():
    rng = random.Random(1)
    for _ in range(20):
        ops = _random_ops(rng)
        ours = _apply(MultiDiGraph(kind="call", steps=2), ops, multi=True)
        ref = _apply(nx.MultiDiGraph(kind="call", steps=2), ops, multi=True)
        assert ours.graph == ref.graph
        assert list(ours.nodes) == list(ref.nodes)
        assert all(ours.nodes[n] == ref.nodes[n] for n in ref.nodes)
        assert list(ours.nodes(data=True)) == list(ref.nodes(data=True))
        assert list(ours.edges(keys=True, data=True)) == list(ref.edges(keys=True, data=True))
        assert list(ours.edges()) == list(ref.edges())
        assert list(ours.edges(data=True)) == list(ref.edges(data=True))
        assert ours.number_of_nodes() == ref.number_of_nodes()
        assert ours.number_of_edges() == ref.number_of_edges()
        for n in ref.nodes:
            assert list(ours.predecessors(n)) == list(ref.predecessors(n))
            assert list(ours.successors(n)) == list(ref.successors(n))
            assert list(ours.in_edges(n, keys=True, data=True)) == \
                list(ref.in_edges(n, keys=True, data=True))
            assert list(ours.out_edges(n, keys=True, data=True)) == \
                list(ref.out_edges(n, keys=True, data=True))
        for u, v, k in ref.edges(keys=True):
            assert ours.edges[u, v, k] == ref.edges[u, v, k]
            assert ours.has_edge(u, v) and ours.has_edge(u, v, k)
        for u in range(-1, 41):  # get_edge_data: {key: attributes} in key order, or default
            for v in range(-1, 41):
                theirs = ref.get_edge_data(u, v)
                got = ours.get_edge_data(u, v)
                assert (got is None) == (theirs is None)
                if theirs is not None:
                    assert list(got.items()) == list(theirs.items())
                assert ours.get_edge_data(u, v, default="none") == (
                    "none" if theirs is None else got)
        assert ours.is_multigraph() and ours.is_directed()


def test_digraph_matches_networkx_and_components_match_weak_components():
    rng = random.Random(2)
    for _ in range(20):
        ops = _random_ops(rng)
        ours = _apply(DiGraph(kind="op"), ops, multi=False)
        ref = _apply(nx.DiGraph(kind="op"), ops, multi=False)
        assert list(ours.nodes(data=True)) == list(ref.nodes(data=True))
        assert list(ours.edges(data=True)) == list(ref.edges(data=True))
        assert ours.number_of_edges() == ref.number_of_edges()
        for u, v in ref.edges():
            assert ours.edges[u, v] == ref.edges[u, v] and ours.has_edge(u, v)
            assert ours.get_edge_data(u, v) == ref.get_edge_data(u, v)
        assert ours.get_edge_data(-1, 0) is None and ours.get_edge_data(-1, 0, 7) == 7
        assert not ours.has_edge(-1, 0) and (0 in ours) == (0 in ref)
        assert not ours.is_multigraph()
        comps = sorted(sorted(c) for c in connected_components(ours))
        assert comps == sorted(sorted(c) for c in nx.weakly_connected_components(ref))
