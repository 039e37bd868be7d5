"""CPU-fallback cost of a traced step: which unsupported calls would run on the host
together, and what crossing between device and host would cost.

Definitions (docs/report-schema.md repeats them for report readers):
  - A call runs on the host when its (op, dtypes) -- or its op, when given by name -- is
    in the unsupported set (every gap category, `GAP_CATEGORIES`). A *passthrough* call
    (a view/alias op, category not-a-kernel) runs wherever its input lives: on the host
    when any tensor it reads was produced on the host.
  - A *fallback island* is a weakly connected component of host calls in the call graph
    (analyzer.graph.build_call_graph), within one step: calls that can hand tensors to
    each other on the host without a copy. Between steps, parameters and optimizer state
    live on the device, so an edge from one step to the next is a boundary. Islands are
    the optimistic model of a fallback that keeps data on the host between consecutive
    CPU ops (a lower bound): a per-op fallback that copies every input and output at
    every call costs more.
  - A *transfer* is one tensor value crossing an island's boundary, counted once per
    (tensor value, direction) per island. A tensor value is a tensor id as written by one
    call (or as it entered the step); an `out=` buffer the call only overwrites is not
    read (see analyzer.graph). Device->host: a value the island reads that was
    produced by a device call or entered the step (parameters, data, optimizer state).
    Host->device: a value an island call wrote that a device call reads, or that leaves
    the step (written last and read by no later call: updated parameters, the loss).
  - Bytes = sum of the transferred values' numel * itemsize(dtype).
  - Per step: `FallbackCost.transfers` and `.bytes` are totals over the trace divided by
    `trace.steps` (rounded half up); `FallbackCost.islands` lists the islands that start in
    the last traced step (the steady state: step 0 may include one-time optimizer state
    initialisation), each with its exact numbers.
  - Setup calls (phase "setup": before the first step) are not per-step work: they never
    join an island, and a value they produce counts as living on the device.
  - Repeated steps (analyzer.step_repeats): on a call graph that lists a repeating tail
    of steps once (`g.repeats`), an island of the template step counts for every step it
    stands for (the last one as listed, the others also copying back what the next step
    reads), and the listed islands carry the last step's call indices; the totals are the
    full graph's (tests/analyzer/test_step_repeats.py).
  - A *group* is the islands of the last step with the same op sequence (the op of every
    call in call order): PaddleCustomDevice's per-parameter `adam` makes one island per
    parameter, which a reader acts on once. `FallbackCost.groups`, most bytes first.
"""
from __future__ import annotations

from collections.abc import Iterable

from analyzer.digraph import DiGraph, MultiDiGraph, connected_components
from analyzer.model import GAP_CATEGORIES, SETUP, FallbackCost, FallbackGroup, FallbackIsland

OpKey = tuple[str, tuple[str, ...]]


def gap_keys(verdicts: Iterable) -> set[OpKey]:
    """(op, dtypes) of every verdict in a gap category; accepts OpVerdicts or their JSON."""
    return _keys(verdicts, GAP_CATEGORIES)


def passthrough_keys(verdicts: Iterable) -> set[OpKey]:
    """(op, dtypes) of every not-a-kernel verdict (views and aliases follow their input)."""
    return _keys(verdicts, ("not-a-kernel",))


def _keys(verdicts: Iterable, categories) -> set[OpKey]:
    out: set[OpKey] = set()
    for v in verdicts:
        get = v.get if isinstance(v, dict) else (lambda k, _v=v: getattr(_v, k))
        if get("category") in categories:
            out.add((get("op"), tuple(sorted(get("dtypes")))))
    return out


def _matches(attrs: dict, keys: set) -> bool:
    return attrs["op"] in keys or (attrs["op"], tuple(attrs["dtypes"])) in keys


def _round_div(total: int, steps: int) -> int:
    return (2 * total + steps) // (2 * steps)


def host_calls(g: MultiDiGraph, unsupported: Iterable, passthrough: Iterable = ()) -> set:
    """Call nodes that would run on the host (see the module docstring)."""
    unsupported = set(unsupported)
    passthrough = set(passthrough)
    host: set = set()
    nodes = g.nodes  # one view for the loop
    kinds: dict = {}  # (op, dtypes) -> 1 unsupported, 2 passthrough, 0 neither: steps repeat ops
    for n in sorted(nodes):  # call index order: producers come first
        a = nodes[n]
        if a.get("phase") == SETUP:
            continue
        key = (a["op"], tuple(a["dtypes"]))
        kind = kinds.get(key)
        if kind is None:
            kind = kinds[key] = (1 if _matches(a, unsupported) else
                                 2 if passthrough and _matches(a, passthrough) else 0)
        if kind == 1:
            host.add(n)
        elif kind == 2 and any(p in host for p in g.predecessors(n)):
            host.add(n)
    return host


def island_boundary(g: MultiDiGraph, island: set) -> tuple[dict, dict]:
    """Values crossing into (device->host) and out of (host->device) `island`:
    two dicts {(tensor id, producer index or None): nbytes}."""
    d2h: dict = {}
    h2d: dict = {}
    nodes = g.nodes
    for n in island:
        a = nodes[n]
        for tid, _dtype, _shape, nbytes in a["external_inputs"]:
            d2h[(tid, None)] = nbytes
        for u in g.predecessors(n):  # edges within the island cost nothing: not read
            if u not in island:
                for tid, e in g.get_edge_data(u, n).items():
                    if not e.get("write_only"):
                        d2h[(tid, u)] = e["bytes"]
        for v in g.successors(n):
            if v not in island:
                for tid, e in g.get_edge_data(n, v).items():
                    if not e.get("write_only"):
                        h2d[(tid, n)] = e["bytes"]
        for tid, _dtype, _shape, nbytes in a["unconsumed_outputs"]:
            h2d[(tid, n)] = nbytes
    return d2h, h2d


def compute_fallback(g: MultiDiGraph, unsupported: Iterable, passthrough: Iterable = (),
                     steps: int | None = None) -> FallbackCost:
    """The per-step CPU-fallback cost of call graph `g`.

    unsupported: (op, dtypes) keys (see `gap_keys`) or bare op names that run on the host.
    passthrough: keys of view/alias ops that follow their input (see `passthrough_keys`).
    steps: traced steps (default: the graph's `steps` attribute, else 1).
    """
    steps = int(steps or g.graph.get("steps") or 1)
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    rep = getattr(g, "repeats", None)
    unsupported = set(unsupported)
    passthrough = set(passthrough)
    if rep is not None and passthrough and _passthrough_across(g, rep.template, passthrough):
        g, rep = rep.full_graph(), None  # the weights cannot decide: the full graph does
    host = host_calls(g, unsupported, passthrough)
    if not host:
        return FallbackCost()
    nodes = g.nodes
    last_step = max(nodes[n]["step"] for n in host)
    # a collapsed graph (analyzer.step_repeats): the template step's islands stand for
    # every repeated step too, and the last traced step's islands are listed
    template = rep.template if rep is not None else None
    listed = (lambda n: rep.last_index[n]) if template == last_step else (lambda n: n)
    total_transfers = total_bytes = 0
    islands: list[tuple[int, FallbackIsland, tuple[str, ...]]] = []
    same_step = DiGraph()  # host calls, linked where one hands a tensor to the other
    same_step.add_nodes_from(sorted(host))
    for u in same_step.nodes:
        for v in g.successors(u):
            if v in host and nodes[u]["step"] == nodes[v]["step"]:
                same_step.add_edge(u, v)
    for comp in connected_components(same_step):
        members = sorted(comp)
        d2h, h2d = island_boundary(g, comp)
        transfers = len(d2h) + len(h2d)
        nbytes = sum(d2h.values()) + sum(h2d.values())
        total_transfers += transfers
        total_bytes += nbytes
        step = nodes[members[0]]["step"]
        if step == template:
            # steps template..last-1 also hand values to the next step: those reads are
            # boundaries too (the collapsed template, like the last step, has no reader)
            extra = {(tid, n): b for n in members for tid, b in rep.next_reads.get(n, ())
                     if (tid, n) not in h2d}
            more = rep.weight - 1
            total_transfers += more * (transfers + len(extra))
            total_bytes += more * (nbytes + sum(extra.values()))
        if step != last_step:
            continue
        sequence = tuple(nodes[n]["op"] for n in members)
        first = nodes[members[0]]
        islands.append((listed(members[0]), FallbackIsland(
            ops=list(dict.fromkeys(sequence)), calls=len(members), transfers=transfers,
            bytes=nbytes, first_call=listed(members[0]), module=first.get("module", "")),
            sequence))
    islands.sort(key=lambda x: x[0])
    return FallbackCost(islands=[i for _, i, _ in islands],
                        transfers=_round_div(total_transfers, steps),
                        bytes=_round_div(total_bytes, steps),
                        groups=group_islands([(i, s) for _, i, s in islands]))


def _passthrough_across(g: MultiDiGraph, template: int, passthrough: set) -> bool:
    """A passthrough call of the template step reads a value a passthrough call of an
    earlier step wrote: whether it runs on the host may differ between the template and
    its repeats (their previous steps differ), so the weights cannot be used."""
    nodes = g.nodes
    for n in nodes:
        a = nodes[n]
        if a["step"] != template or not _matches(a, passthrough):
            continue
        for p in g.predecessors(n):
            b = nodes[p]
            if b["step"] != template and b.get("phase") != SETUP and _matches(b, passthrough):
                return True
    return False


def group_islands(islands: list[tuple[FallbackIsland, tuple[str, ...]]]) -> list[FallbackGroup]:
    """Islands (in call order, with their op sequences) grouped by op sequence; most bytes
    first, then first island."""
    by_seq: dict[tuple[str, ...], list[int]] = {}
    for number, (_island, seq) in enumerate(islands, 1):
        by_seq.setdefault(seq, []).append(number)
    groups = []
    for seq, members in by_seq.items():
        isl = [islands[m - 1][0] for m in members]
        each = {i.transfers for i in isl}
        groups.append(FallbackGroup(
            sequence=list(seq), islands=len(members), transfers=sum(i.transfers for i in isl),
            bytes=sum(i.bytes for i in isl), transfers_each=each.pop() if len(each) == 1 else None,
            members=members))
    groups.sort(key=lambda grp: (-grp.bytes, grp.members[0]))
    return groups
