"""analyzer.graph: call graph edges from tensor ids, the per-op view, deterministic GraphML."""
from __future__ import annotations

import io
import random

import networkx as nx

from analyzer.digraph import DiGraph, MultiDiGraph
from analyzer.graph import build_call_graph, collapse_by_op, graph_summary, graphml_text
from analyzer.model import OpCall, TensorMeta, Trace


def t(i, shape, dtype="float32"):
    return TensorMeta(i, dtype, tuple(shape))


def small_trace() -> Trace:
    x, w = t(1, [2, 3]), t(2, [3, 4])
    y = t(3, [2, 4])
    calls = [
        OpCall(0, "aten::mm", "default", "forward", [x, w], [y], module="fc", source="m.py:3"),
        OpCall(1, "aten::relu_", "default", "forward", [y], [y], module="act"),
        OpCall(2, "aten::add", "Tensor", "forward", [y, y], [t(4, [2, 4])]),
        OpCall(3, "aten::sum", "default", "forward", [t(4, [2, 4])], [t(5, [])]),
        OpCall(4, "aten::mm", "default", "backward", [t(4, [2, 4]), t(6, [4, 2], "float16")],
               [t(7, [2, 2], "float16")]),
    ]
    return Trace(framework="torch", mode="real", model="m.py", calls=calls)


def test_edges_follow_latest_writer_and_dedupe_repeated_inputs():
    g = build_call_graph(small_trace())
    assert isinstance(g, MultiDiGraph)
    assert sorted(g.edges(keys=True)) == [(0, 1, 3), (1, 2, 3), (2, 3, 4), (2, 4, 4)]
    e = g.edges[2, 3, 4]
    assert (e["tensor"], e["dtype"], e["shape"], e["bytes"]) == (4, "float32", (2, 4), 32)
    n0 = g.nodes[0]
    assert (n0["op"], n0["phase"], n0["module"], n0["source"]) == ("aten::mm", "forward", "fc",
                                                                    "m.py:3")
    assert n0["dtypes"] == ("float32",)
    assert n0["in_shapes"] == ((2, 3), (3, 4)) and n0["out_shapes"] == ((2, 4),)
    assert n0["external_inputs"] == ((1, "float32", (2, 3), 24), (2, "float32", (3, 4), 48))
    assert g.nodes[4]["dtypes"] == ("float16", "float32")
    assert g.nodes[4]["external_inputs"] == ((6, "float16", (4, 2), 16),)
    # values written last and read by nobody: the sum's scalar and the fp16 mm result
    assert g.nodes[3]["unconsumed_outputs"] == ((5, "float32", (), 4),)
    assert g.nodes[4]["unconsumed_outputs"] == ((7, "float16", (2, 2), 8),)
    assert g.nodes[1]["unconsumed_outputs"] == ()


def test_collapsed_view_counts_calls_and_aggregates_edges():
    op = collapse_by_op(build_call_graph(small_trace()))
    assert isinstance(op, DiGraph) and not op.is_multigraph()
    assert op.nodes["aten::mm"]["calls"] == 2
    assert op.nodes["aten::mm"]["phases"] == ("forward", "backward")
    assert op.nodes["aten::mm"]["dtypes"] == ("float16", "float32")
    assert sorted(op.edges(data=True)) == [
        ("aten::add", "aten::mm", {"tensors": 1, "bytes": 32}),
        ("aten::add", "aten::sum", {"tensors": 1, "bytes": 32}),
        ("aten::mm", "aten::relu_", {"tensors": 1, "bytes": 32}),
        ("aten::relu_", "aten::add", {"tensors": 1, "bytes": 32}),
    ]


def test_graphml_is_byte_identical_and_independent_of_call_order():
    tr = small_trace()
    text = graphml_text(build_call_graph(tr))
    assert text == graphml_text(build_call_graph(small_trace()))
    shuffled = small_trace()
    random.Random(7).shuffle(shuffled.calls)
    assert graphml_text(build_call_graph(shuffled)) == text
    op_text = graphml_text(collapse_by_op(build_call_graph(tr)))
    assert op_text == graphml_text(collapse_by_op(build_call_graph(shuffled)))
    # readable by networkx, attributes intact
    back = nx.read_graphml(io.StringIO(text), force_multigraph=True)
    assert sorted(back.nodes) == ["c0", "c1", "c2", "c3", "c4"]
    assert back.nodes["c0"]["op"] == "aten::mm"
    assert back.nodes["c0"]["in_shapes"] == "[2,3];[3,4]"
    assert back.nodes["c0"]["external_inputs"] == "1:float32[2,3]:24;2:float32[3,4]:48"
    assert back.edges["c2", "c3", "t4"]["bytes"] == 32
    back_op = nx.read_graphml(io.StringIO(op_text))
    assert back_op.nodes["aten::mm"]["calls"] == 2


def test_graph_summary_is_json_safe_and_keyed_by_op_and_phase():
    s = graph_summary(build_call_graph(small_trace()))
    assert s["nodes"] == 5 and s["edges"] == 4 and s["graphml"] == "op_graph.graphml"
    assert [(o["id"], o["op"], o["phase"]) for o in s["ops"]] == [
        (0, "aten::mm", "forward"), (1, "aten::relu_", "forward"), (2, "aten::add", "forward"),
        (3, "aten::sum", "forward"), (4, "aten::mm", "backward")]
    assert s["ops"][4] == {"id": 4, "op": "aten::mm", "phase": "backward", "calls": 1,
                           "dtypes": ["float16", "float32"], "first": 4}
    assert s["links"] == [
        {"source": 0, "target": 1, "tensors": 1, "bytes": 32},
        {"source": 1, "target": 2, "tensors": 1, "bytes": 32},
        {"source": 2, "target": 3, "tensors": 1, "bytes": 32},
        {"source": 2, "target": 4, "tensors": 1, "bytes": 32}]


def test_duplicate_call_index_is_rejected():
    tr = small_trace()
    tr.calls[1].index = 0
    try:
        build_call_graph(tr)
    except ValueError as e:
        assert "two calls share index 0" in str(e)
    else:
        raise AssertionError("duplicate index accepted")


def test_out_buffers_are_ordering_edges_not_reads():
    x, buf = t(1, [4, 4]), t(2, [4, 4])
    calls = [
        OpCall(0, "aten::empty.memory_format", "aten::empty.memory_format", "forward", [],
               [buf]),
        OpCall(1, "aten::_softmax.out", "aten::_softmax.out", "forward", [x, buf], [buf]),
        OpCall(2, "aten::add_.Tensor", "aten::add_.Tensor", "forward", [buf, x], [buf]),
        # where(cond, x, buf, out=buf): buf is read as `other` and overwritten as out
        OpCall(3, "aten::where.self_out", "aten::where.self_out", "forward",
               [t(5, [4, 4], "bool"), x, buf, buf], [buf]),
    ]
    g = build_call_graph(Trace("torch", "meta", "m.py", calls=calls))
    assert g.edges[0, 1, 2]["write_only"] is True
    assert g.edges[1, 2, 2]["write_only"] is False  # add_ is in-place: it reads buf
    assert g.nodes[1]["external_inputs"] == ((1, "float32", (4, 4), 64),)
    assert g.edges[2, 3, 2]["write_only"] is False
    assert g.nodes[3]["unconsumed_outputs"] == ((2, "float32", (4, 4), 64),)
    assert not collapse_by_op(g).has_edge("aten::empty.memory_format", "aten::_softmax.out")
