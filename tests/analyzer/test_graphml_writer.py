"""analyzer.graphml: the streaming writer gives networkx's GraphML bytes, without networkx.

networkx's own writer is the oracle: for every graph below, GraphMLWriter fed the same
items in the same order must produce the same document, byte for byte (escaping, empty
elements, key order and types, multigraph edge ids, graph data after the edges)."""
from __future__ import annotations

import io

import networkx as nx
import pytest

from analyzer.graph import build_call_graph, collapse_by_op, graphml_text
from analyzer.graphml import GraphMLWriter
from tests.analyzer.test_graph import small_trace


def networkx_text(g: nx.Graph) -> str:
    buf = io.BytesIO()
    nx.write_graphml(g, buf, encoding="utf-8", prettyprint=True, named_key_ids=True)
    return buf.getvalue().decode("utf-8")


def ours(g: nx.Graph) -> str:
    w = GraphMLWriter(directed=g.is_directed(), multigraph=g.is_multigraph(),
                      graph_attrs=dict(g.graph))
    for n, a in g.nodes(data=True):
        w.node(str(n), a)
    if g.is_multigraph():
        for u, v, k, a in g.edges(keys=True, data=True):
            w.edge(str(u), str(v), k, a)
    else:
        for u, v, a in g.edges(data=True):
            w.edge(str(u), str(v), None, a)
    return w.text()


def tricky_multigraph() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(kind="call", model='a "model" <&> with\ttabs\nand lines', steps=2,
                        ratio=0.5, flag=True)
    g.add_node("c0", op="aten::add.Tensor", module="", source="m.py:1", step=1,
               dtypes="float32;float16", partial=False)
    g.add_node("c1", op="x<y>&z", module="layers.0.?Linear", source="ünïcödé.py:2", step=2,
               weight=1.25)
    g.add_node("c2")  # no attributes: an empty element
    g.add_node("c3", step="three")  # same name, another type: a second key
    g.add_edge("c0", "c1", key="t5", tensor=5, bytes=64, write_only=False, shape="2;3")
    g.add_edge("c0", "c1", key="t6", tensor=6, bytes=0, write_only=True, shape="")
    g.add_edge("c1", "c3", key='t"7', tensor=7, note="a&b")
    return g


def test_matches_networkx_on_tricky_values():
    g = tricky_multigraph()
    assert ours(g) == networkx_text(g)


def test_repeated_values_keep_their_own_text():
    """The writer keeps finished lines per attribute position: values that compare equal
    but print differently (0.0 and -0.0; 1 and True in one attribute name) and ids that
    repeat on many edges still come out as networkx writes them."""
    g = nx.MultiDiGraph(kind="call")
    for i in range(6):
        g.add_node(f"c{i}", op="mm" if i % 2 else "add", w=(0.0, -0.0, 1.5)[i % 3],
                   n=(1, 2)[i % 2], flag=(True, False)[i % 2], text=("a&b", "")[i % 2])
    g.add_node("c6", op="mm", w=-0.0, n=True, flag=1)  # other types: other layouts
    for i in range(5):
        g.add_edge(f"c{i}", f"c{i + 1}", key=f"t{i % 2}", bytes=(0, 1)[i % 2], ok=bool(i % 2))
        g.add_edge(f"c{i}", f"c{i + 1}", key=1, bytes=True)  # a non-text key
    g.add_edge("c0", "c6", key=True, bytes=1)
    assert ours(g) == networkx_text(g)


def test_matches_networkx_on_simple_and_undirected_and_empty_graphs():
    d = nx.DiGraph(kind="op")
    d.add_edge("aten::mm", "aten::relu_", tensors=1, bytes=32)
    d.add_node("aten::mm", calls=2, phases="forward;backward")
    assert ours(d) == networkx_text(d)
    u = nx.Graph()
    u.add_edge("a", "b", w=1.0)
    assert ours(u) == networkx_text(u)
    assert ours(nx.DiGraph()) == networkx_text(nx.DiGraph())
    only_data = nx.DiGraph(kind="op")
    assert ours(only_data) == networkx_text(only_data)


def test_nodes_and_edges_may_be_interleaved():
    """Written as a trace goes (an edge as soon as its consumer is seen), the document is
    still the one networkx writes with all nodes first."""
    g = tricky_multigraph()
    w = GraphMLWriter(directed=True, multigraph=True, graph_attrs=dict(g.graph))
    w.node("c0", g.nodes["c0"])
    w.node("c1", g.nodes["c1"])
    for u, v, k, a in g.edges(keys=True, data=True):
        if (u, v) == ("c0", "c1"):
            w.edge(u, v, k, a)
    w.node("c2", g.nodes["c2"])
    w.node("c3", g.nodes["c3"])
    w.edge("c1", "c3", 't"7', g.edges["c1", "c3", 't"7'])
    assert w.text() == networkx_text(g)


def test_lone_surrogates_become_character_references_like_elementtree():
    g = nx.DiGraph()
    g.add_node("n", text="bad \udc80 byte")
    assert ours(g) == networkx_text(g)
    assert "&#56448;" in ours(g)


def test_unsupported_value_type_is_refused_with_networkx_message():
    w = GraphMLWriter()
    with pytest.raises(TypeError, match="GraphML does not support type"):
        w.node("n", {"shape": (2, 3)})


def test_scan_graphml_equals_networkx_serialisation_of_the_same_graph():
    """graphml_text (sorted, GraphML-safe values) equals what networkx writes for the same
    converted graph, for the call graph and the per-op graph."""
    from analyzer.graph import _graphml_value

    for g in (build_call_graph(small_trace()), collapse_by_op(build_call_graph(small_trace()))):
        call = g.graph.get("kind") == "call"
        out = nx.MultiDiGraph() if g.is_multigraph() else nx.DiGraph()
        for k in sorted(g.graph):
            out.graph[k] = _graphml_value(g.graph[k])
        name = (lambda n: f"c{n}") if call else str
        for n in sorted(g.nodes):
            out.add_node(name(n), **{k: _graphml_value(v) for k, v in sorted(g.nodes[n].items())})
        if g.is_multigraph():
            for u, v, k, a in sorted(g.edges(keys=True, data=True), key=lambda e: e[:3]):
                out.add_edge(name(u), name(v), key=f"t{k}",
                             **{x: _graphml_value(y) for x, y in sorted(a.items())})
        else:
            for u, v, a in sorted(g.edges(data=True), key=lambda e: e[:2]):
                out.add_edge(name(u), name(v), **{x: _graphml_value(y) for x, y in sorted(a.items())})
        assert graphml_text(g) == networkx_text(out)
