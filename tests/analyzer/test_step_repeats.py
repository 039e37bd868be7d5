"""analyzer.step_repeats: a repeating tail of traced steps is listed once in the call graph,
and every count and cost computed from that graph equals the full graph's (issue 16)."""
from __future__ import annotations

import itertools

import pytest

from analyzer.fallback import _passthrough_across, compute_fallback
from analyzer.graph import build_call_graph, collapse_by_op, graph_summary, graphml_text
from analyzer.model import SETUP, OpCall, TensorMeta, Trace
from analyzer.step_repeats import find_repeats


def t(i, shape, dtype="float32"):
    return TensorMeta(i, dtype, tuple(shape))


def training(steps: int, *, shapes=None, extra=None, carry_view=False, partial=False) -> Trace:
    """A small training loop as a tracer records it: a setup table, forward, backward,
    an optimizer whose first step creates its state and a learning-rate tensor every
    later step reads, parameters updated in place.

    shapes: step -> batch size (default 2); extra: step -> an additional forward op;
    carry_view: the optimizer hands a view of its state to the next step's forward."""
    calls: list[OpCall] = []
    ids = itertools.count(10)
    P, X, B = t(1, [4, 4]), t(2, [2, 4]), t(3, [2, 4])

    def call(op, phase, ins, outs, step):
        calls.append(OpCall(len(calls), op, "", phase, list(ins), list(outs), step=step,
                            module="net", source="train.py:9"))

    call("full", SETUP, [], [B], 0)
    lr = m = pv = None
    for s in range(1, steps + 1):
        batch = (shapes or {}).get(s, 2)
        x = X if batch == 2 else t(2, [batch, 4])
        y, v, loss = t(next(ids), [batch, 4]), t(next(ids), [batch, 4]), t(next(ids), [])
        call("mm", "forward", [x, P], [y], s)
        y2 = t(next(ids), [batch, 4])
        call("add", "forward", [y, B], [y2], s)
        call("view", "forward", [y2], [v], s)
        if carry_view and pv is not None:
            call("view", "forward", [pv], [t(next(ids), [4, 4])], s)
        if (extra or {}).get(s):
            call((extra or {})[s], "forward", [v], [t(next(ids), [batch, 4])], s)
        call("sum", "forward", [v], [loss], s)
        gv, gp = t(next(ids), [batch, 4]), t(next(ids), [4, 4])
        call("sum_grad", "backward", [loss], [gv], s)
        call("mm_grad", "backward", [gv, x], [gp], s)
        if s == 1:
            lr, m = t(next(ids), []), t(next(ids), [4, 4])
            call("full", "optimizer", [], [lr], s)
            call("zeros_like", "optimizer", [P], [m], s)
        if carry_view:  # the state as it enters the optimizer: zeros_like's in step 1,
            pv = t(next(ids), [4, 4])  # the previous adam's later
            call("view", "optimizer", [m], [pv], s)
        call("adam", "optimizer", [P, gp, m, lr], [P, m], s)
        # reads the updated parameter inside the optimizer: with adam on the host, a value
        # read inside its island that the next step also reads
        call("norm", "optimizer", [P], [t(next(ids), [])], s)
    return Trace("torch", "real", "train.py", calls=calls, steps=steps, partial=partial)


OPS = ("mm", "add", "view", "sum", "sum_grad", "mm_grad", "full", "zeros_like", "adam",
       "norm", "relu")


def assert_same_costs(trace: Trace) -> None:
    """Every fallback cost, the graph summary and the op graph: collapsed == full."""
    rep = find_repeats(trace)
    assert rep is not None
    full, col = build_call_graph(trace), build_call_graph(trace, repeats=rep)
    assert graph_summary(col) == graph_summary(full)
    for by_phase in (False, True):
        a, b = collapse_by_op(full, by_phase), collapse_by_op(col, by_phase)
        assert {n: a.nodes[n] for n in a.nodes} == {n: b.nodes[n] for n in b.nodes}
        assert list(a.edges(data=True)) == list(b.edges(data=True))
    for r in range(len(OPS) + 1):
        for gap in itertools.combinations(OPS, r):
            for passthrough in ((), ("view",)):
                want = compute_fallback(full, set(gap), set(passthrough) - set(gap))
                got = compute_fallback(col, set(gap), set(passthrough) - set(gap))
                assert got == want, (gap, passthrough)


def test_steps_after_the_optimizer_state_step_repeat_it():
    rep = find_repeats(training(4))
    assert (rep.template, rep.last, rep.weight) == (2, 4, 3)
    assert rep.describe() == "steps 3-4 repeat step 2"
    assert find_repeats(training(3)).describe() == "step 3 repeats step 2"


def test_the_collapsed_graph_lists_the_template_once_and_says_so():
    trace = training(4)
    rep = find_repeats(trace)
    g = build_call_graph(trace, repeats=rep)
    assert sorted({g.nodes[n]["step"] for n in g.nodes}) == [0, 1, 2]
    assert g.graph["repeated_steps"] == (
        "steps 3-4 repeat step 2 call for call, not listed "
        "(step 3: c19..c26 as c11..c18; step 4: c27..c34 as c11..c18)")
    assert [(trace.calls[i].step, trace.calls[i].op) for i in (11, 18, 19, 26, 27, 34)] == [
        (2, "mm"), (2, "norm"), (3, "mm"), (3, "norm"), (4, "mm"), (4, "norm")]
    text = graphml_text(g)
    assert "steps 3-4 repeat step 2" in text
    assert '<data key="step">3</data>' not in text
    # without repeats nothing changes
    assert "repeated_steps" not in graphml_text(build_call_graph(trace))


def test_counts_and_fallback_costs_equal_the_full_graph():
    assert_same_costs(training(4))
    assert_same_costs(training(3))
    assert_same_costs(training(6))


def test_a_value_read_inside_its_island_and_by_the_next_step_is_counted_per_step():
    # adam + norm on the host: norm reads the updated parameter inside the island; in the
    # last step nothing else reads it (no copy back), in every earlier step the next
    # step's forward does (one copy back), which the collapsed graph cannot see
    trace = training(4)
    full, col = build_call_graph(trace), build_call_graph(trace, repeats=find_repeats(trace))
    want = compute_fallback(full, {"adam", "norm"})
    assert compute_fallback(col, {"adam", "norm"}) == want
    assert want.islands[0].first_call == max(
        c.index for c in trace.calls if c.step == 4 and c.op == "adam")


def test_a_step_that_differs_is_not_collapsed():
    assert find_repeats(training(4, extra={4: "relu"})) is None  # the last step branches
    rep = find_repeats(training(4, shapes={3: 3}))  # step 3 differs: 4 repeats nothing
    assert rep is None
    rep = find_repeats(training(5, shapes={3: 3}))  # 4 and 5 differ from 3 but not each other
    assert rep.describe() == "step 5 repeats step 4"
    assert_same_costs(training(5, shapes={3: 3}))
    rep = find_repeats(training(5, extra={2: "relu"}))  # step 2 differs
    assert rep.describe() == "steps 4-5 repeat step 3"
    assert_same_costs(training(5, extra={2: "relu"}))


def test_nothing_to_collapse():
    assert find_repeats(training(1)) is None
    assert find_repeats(training(2)) is None  # step 2 differs from step 1 (optimizer state)
    assert find_repeats(training(4, partial=True)) is None


def test_a_passthrough_fed_by_the_previous_steps_passthrough_uses_the_full_graph():
    trace = training(4, carry_view=True)
    rep = find_repeats(trace)
    assert rep is not None
    col = build_call_graph(trace, repeats=rep)
    assert _passthrough_across(col, rep.template, {"view"})
    assert not _passthrough_across(col, rep.template, {"relu"})
    assert_same_costs(trace)


@pytest.mark.parametrize("steps", [3, 4])
def test_the_listed_islands_are_the_last_steps(steps):
    trace = training(steps)
    rep = find_repeats(trace)
    cost = compute_fallback(build_call_graph(trace, repeats=rep), {"mm", "add"})
    last = [c.index for c in trace.calls if c.step == steps and c.op == "mm"]
    assert [i.first_call for i in cost.islands] == last
