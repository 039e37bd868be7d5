"""The op graph of a traced step: calls as nodes, tensors flowing between them as edges.

`build_call_graph(trace)` gives a `MultiDiGraph` (analyzer.digraph: networkx's API, without
importing networkx):
  - node = `OpCall.index` (int) with attributes op, overload, phase, module, source,
    step, dtypes (tuple of str), in_shapes / out_shapes (tuples of shape tuples), and
    `external_inputs`: tensors the call reads that no traced call produced (parameters,
    data, buffers), as `(tensor_id, dtype, shape, nbytes)` tuples, and `unconsumed_outputs`:
    tensors it writes last that no later call reads (loss, updated parameters, stats).
  - edge (producer -> consumer, key = tensor id) per tensor read, with attributes tensor,
    dtype, shape, bytes, write_only. The producer is the latest earlier call that output
    that tensor id, so in-place ops (`relu_`, optimizer updates) chain correctly.
    write_only marks the `out=` buffer of an out variant (`aten::_softmax.out`): the call
    overwrites it without reading its value (an ordering edge, not data flow). Tracers list
    out= tensors among the inputs too, so a tensor that is also an output and appears once
    in the inputs is taken as out= only; appearing twice, it is read as well.

`collapse_by_op(graph)` gives the per-op view (`DiGraph`): one node per op (or per
(op, phase) with by_phase=True) with its call count, phases and dtypes; one edge per
(producer op, consumer op) with the number of tensors and bytes that flowed. `graphml_text()` exports either graph deterministically
(sorted nodes and edges, GraphML-safe attribute types): the same trace gives the same bytes.
`graph_summary()` is the JSON-safe dict `ScanReport.graph` holds (the HTML report draws it).

Repeated steps (`build_call_graph(trace, repeats=analyzer.step_repeats.find_repeats(trace))`):
the steps that repeat an earlier step call for call are not listed; the graph attribute
`repeated_steps` maps their calls onto the listed ones, and `collapse_by_op` and
`graph_summary` count every traced step (the template's calls and the edges into them
weighted by the steps they stand for).
"""
from __future__ import annotations

from analyzer.digraph import DiGraph, MultiDiGraph
from analyzer.model import PHASES, Trace

_SCALARS = frozenset({str, int, float, bool})
CALL_GRAPH = "call"
OP_GRAPH = "op"


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def is_out_variant(call) -> bool:
    """torch out= overloads (`out`, `Scalar_out`, `self_out`) only write their out tensors."""
    for name in (call.overload, call.op):
        tail = name.rsplit(".", 1)[-1] if "." in name else ""
        if tail == "out" or tail.endswith("_out"):
            return True
    return False


def build_call_graph(trace: Trace, repeats=None) -> MultiDiGraph:
    """The call-level graph of `trace` (see the module docstring for attributes).

    repeats: an `analyzer.step_repeats.StepRepeats` of `trace`: the repeated steps' calls
    are left out (the template step's calls stand for them), the graph attribute
    `repeated_steps` says so, and `g.repeats` carries the weights that `collapse_by_op`,
    `graph_summary` and `analyzer.fallback.compute_fallback` apply."""
    g = MultiDiGraph(kind=CALL_GRAPH, framework=trace.framework, model=trace.model,
                     steps=trace.steps)
    g.repeats = None
    if repeats is not None:
        import functools
        from dataclasses import replace

        g.graph["repeated_steps"] = repeats.listing()
        full = functools.lru_cache(maxsize=1)(lambda: build_call_graph(trace))  # built once
        g.repeats = replace(repeats, full_graph=full)
    last_writer: dict[int, int] = {}  # tensor id -> index of the latest call that output it
    read_after_write: set[tuple[int, int]] = set()  # (tensor id, writer index) consumed later
    calls = sorted(trace.calls, key=lambda c: c.index)
    if repeats is not None:
        calls = [c for c in calls if c.step <= repeats.template]
    seen_index: set[int] = set()
    out_variants: dict[tuple[str, str], bool] = {}  # (overload, op) -> is_out_variant
    sizes: dict = {}  # (dtype, shape) -> bytes: every step reads the same few shapes

    def nbytes(t) -> int:
        key = (t.dtype, t.shape)
        try:
            n = sizes.get(key)
        except TypeError:  # a list shape: not hashable
            return t.nbytes()
        if n is None:
            n = sizes[key] = t.nbytes()
        return n

    for c in calls:
        if c.index in seen_index:
            raise ValueError(f"trace {trace.model}: two calls share index {c.index}")
        seen_index.add(c.index)
        external: list[tuple[int, str, tuple[int, ...], int]] = []
        external_ids: set[int] = set()  # a foreach optimizer call reads ~700 tensors
        linked: set[tuple[int, int]] = set()
        out_buffers: set[int] = set()
        out_variant = out_variants.get((c.overload, c.op))
        if out_variant is None:
            out_variant = out_variants[(c.overload, c.op)] = is_out_variant(c)
        if out_variant:  # an out tensor passed once (only as out=) is not read;
            seen = [t.id for t in c.inputs]  # passed twice (`where(c, a, x, out=x)`) it is
            out_buffers = {t.id for t in c.outputs if seen.count(t.id) == 1}
        for t in c.inputs:
            write_only = t.id in out_buffers
            producer = last_writer.get(t.id)
            if producer is None:
                if not write_only and t.id not in external_ids:
                    external_ids.add(t.id)
                    external.append((t.id, t.dtype, tuple(t.shape), nbytes(t)))
                continue
            if not write_only:
                read_after_write.add((t.id, producer))
            if (producer, t.id) in linked:  # mul(x, x): one tensor, one edge
                continue
            linked.add((producer, t.id))
            g.add_edge(producer, c.index, key=t.id, tensor=t.id, dtype=t.dtype,
                       shape=tuple(t.shape), bytes=nbytes(t), write_only=write_only)
        g.add_node(c.index, op=c.op, overload=c.overload, phase=c.phase, module=c.module,
                   source=c.source, step=c.step, dtypes=c.dtypes,
                   in_shapes=tuple(tuple(t.shape) for t in c.inputs),
                   out_shapes=tuple(tuple(t.shape) for t in c.outputs),
                   external_inputs=tuple(external), unconsumed_outputs=())
        for t in c.outputs:
            last_writer[t.id] = c.index
    # Tensors whose final write nobody reads leave the step (loss, updated weights).
    by_index = {c.index: c for c in calls}
    unconsumed: dict[int, list] = {}
    for tid, writer in sorted(last_writer.items()):
        if (tid, writer) not in read_after_write:
            # the writer's last output of that id (a call may list one tensor twice)
            t = next(t for t in reversed(by_index[writer].outputs) if t.id == tid)
            unconsumed.setdefault(writer, []).append((t.id, t.dtype, tuple(t.shape),
                                                      t.nbytes()))
    for writer, metas in unconsumed.items():
        g.nodes[writer]["unconsumed_outputs"] = tuple(metas)
    return g


def collapse_by_op(g: MultiDiGraph, by_phase: bool = False) -> DiGraph:
    """One node per op (calls, phases, dtypes, first call index); edges summed over calls.

    by_phase=True keys nodes by (op, phase) instead: forward and backward uses of one op
    (a view in both passes) stay apart, which is what the HTML report draws."""
    op_graph = DiGraph(kind=OP_GRAPH)

    def key(a):
        return (a["op"], a["phase"]) if by_phase else a["op"]

    nodes = g.nodes
    weight = _weights(g)
    node_key: dict = {}  # call -> its op-graph node
    for n in sorted(nodes):
        a = nodes[n]
        k = node_key[n] = key(a)
        na = op_graph.nodes[k] if k in op_graph else None
        if na is None:
            op_graph.add_node(k, op=a["op"], calls=0, phases=set(), dtypes=set(), first=n)
            na = op_graph.nodes[k]
        na["calls"] += weight(a)
        na["phases"].add(a["phase"])
        na["dtypes"].update(a["dtypes"])
    # Edge totals are sums, so the keys of one (producer, consumer) pair may come in any
    # order; pairs are met in (producer, consumer) order, as sorting every edge gave.
    sums: dict = {}  # (producer op, consumer op) -> [tensors, bytes], in order of first edge
    for u in sorted(nodes):
        su = node_key[u]
        for _u, v, _k, a in sorted(g.out_edges(u, keys=True, data=True), key=lambda e: e[1]):
            if a.get("write_only"):  # an out= buffer handed over: ordering, not data
                continue
            got = sums.get((su, node_key[v]))
            if got is None:
                got = sums[(su, node_key[v])] = [0, 0]
            wv = weight(nodes[v])  # an edge into a repeated call comes once per repeat
            got[0] += wv
            got[1] += a["bytes"] * wv
    for (su, sv), (tensors, nbytes) in sums.items():
        op_graph.add_edge(su, sv, tensors=tensors, bytes=nbytes)
    for k in op_graph.nodes:
        na = op_graph.nodes[k]
        na["phases"] = tuple(p for p in PHASES if p in na["phases"]) + tuple(
            sorted(p for p in na["phases"] if p not in PHASES))
        na["dtypes"] = tuple(sorted(na["dtypes"]))
    return op_graph


def _weights(g):
    """node attributes -> how many traced calls the node stands for (1, or the number of
    steps a template call of `g.repeats` stands for)."""
    rep = getattr(g, "repeats", None)
    if rep is None:
        return lambda _a: 1
    template, w = rep.template, rep.weight
    return lambda a: w if a["step"] == template else 1


def _element_text(x) -> str:
    """One element of a tuple attribute: a shape, a tuple of shapes, an external input
    `(id, dtype, shape, bytes)`, or a scalar."""
    if isinstance(x, tuple | list) and x and isinstance(x[0], tuple | list):
        return "(" + ",".join(_shape_text(s) for s in x) + ")"
    if isinstance(x, tuple | list):
        if len(x) == 4 and isinstance(x[2], tuple | list):  # (id, dtype, shape, bytes)
            return f"{x[0]}:{x[1]}{_shape_text(x[2])}:{x[3]}"
        return _shape_text(x)
    return str(x)


def _graphml_value(v, texts: dict | None = None):
    """GraphML accepts str, int, float, bool: tuples become compact text.

    `texts` (optional) memoises the text of tuple elements within one export: a call
    graph writes the same few shapes thousands of times."""
    if type(v) in _SCALARS or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, tuple | list):
        parts = []
        for x in v:
            tx = type(x)
            if tx is str:  # dtypes: the common element
                parts.append(x)
            elif tx is tuple and texts is not None:
                try:
                    text = texts.get(x)
                except TypeError:  # a list inside: not hashable, not memoised
                    text = _element_text(x)
                else:
                    if text is None:
                        text = texts[x] = _element_text(x)
                parts.append(text)
            else:
                parts.append(_element_text(x))
        return ";".join(parts)
    return str(v)


def graphml_text(g: DiGraph) -> str:
    """GraphML of a call graph or an op graph; byte-identical for equal graphs.

    Sorted graph attributes, nodes (by key), node attributes, edges (by source, target,
    key) and edge attributes, written by analyzer.graphml (the same bytes networkx's
    writer gives for that order, without building an XML tree)."""
    from analyzer.graphml import GraphMLWriter

    call_level = g.graph.get("kind") == CALL_GRAPH
    multi = g.is_multigraph()
    w = GraphMLWriter(directed=g.is_directed(), multigraph=multi,
                      graph_attrs={k: _graphml_value(g.graph[k]) for k in sorted(g.graph)})

    def node_id(n) -> str:
        return f"c{n}" if call_level else str(n)

    texts: dict = {}
    values: dict = {}  # attribute -> {tuple value: its text}: steps repeat shapes and dtypes
    orders: dict = {}  # attribute names as stored -> sorted (every call node has one layout)

    def safe(a: dict) -> dict:
        names = tuple(a)
        order = orders.get(names)
        if order is None:
            order = orders[names] = tuple(sorted(names))
        out = {}
        for k in order:
            v = a[k]
            if type(v) in _SCALARS:
                out[k] = v
            elif type(v) is tuple:
                kept = values.get(k)
                if kept is None:
                    kept = values[k] = {}
                try:
                    text = kept.get(v)
                except TypeError:  # a list inside: not hashable, not kept
                    text = _graphml_value(v, texts)
                else:
                    if text is None:
                        text = _graphml_value(v, texts)
                        if len(kept) < 2048:  # external inputs rarely repeat: bounded
                            kept[v] = text
                out[k] = text
            else:
                out[k] = _graphml_value(v, texts)
        return out

    nodes = g.nodes
    for n in sorted(nodes):
        w.node(node_id(n), safe(nodes[n]))
    if multi:
        for u, v, k, a in sorted(g.edges(keys=True, data=True), key=lambda e: e[:3]):
            w.edge(node_id(u), node_id(v), f"t{k}", safe(a))
    else:
        for u, v, a in sorted(g.edges(data=True), key=lambda e: e[:2]):
            w.edge(node_id(u), node_id(v), None, safe(a))
    return w.text()


def graph_summary(g: MultiDiGraph, graphml: str = "op_graph.graphml") -> dict:
    """The JSON-safe `ScanReport.graph` dict: sizes, the GraphML file name, and the
    (op, phase) view the HTML report draws: `ops` (id, op, phase, calls, dtypes, first call
    index; ordered by first call) and `links` (source id, target id, tensors, bytes)."""
    view = collapse_by_op(g, by_phase=True)
    order = sorted(view.nodes, key=lambda k: view.nodes[k]["first"])
    ids = {k: i for i, k in enumerate(order)}
    ops = [{"id": ids[k], "op": k[0], "phase": k[1], "calls": view.nodes[k]["calls"],
            "dtypes": list(view.nodes[k]["dtypes"]), "first": view.nodes[k]["first"]}
           for k in order]
    links = sorted(({"source": ids[u], "target": ids[v], "tensors": a["tensors"],
                     "bytes": a["bytes"]} for u, v, a in view.edges(data=True)),
                   key=lambda x: (x["source"], x["target"]))
    nodes, edges = g.number_of_nodes(), g.number_of_edges()
    rep = getattr(g, "repeats", None)
    if rep is not None:  # the calls and tensor edges of every traced step
        more = rep.weight - 1
        template = [n for n in g.nodes if g.nodes[n]["step"] == rep.template]
        nodes += more * len(template)
        edges += more * sum(len(g.get_edge_data(u, n)) for n in template
                            for u in g.predecessors(n))
    return {"nodes": nodes, "edges": edges, "graphml": graphml,
            "ops": ops, "links": links}
