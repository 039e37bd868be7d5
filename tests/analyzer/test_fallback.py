"""analyzer.fallback: islands, boundary transfers and bytes on hand-built traces."""
from __future__ import annotations

from analyzer.fallback import compute_fallback, gap_keys, host_calls, passthrough_keys
from analyzer.graph import build_call_graph
from analyzer.model import FallbackCost, FallbackGroup, FallbackIsland, OpCall, OpVerdict, TensorMeta, Trace


def t(i, shape, dtype="float32"):
    return TensorMeta(i, dtype, tuple(shape))


# float32 sizes: x [8,3,4,4] = 1536 B, w [4,3,3,3] = 432 B, act [8,4,2,2] = 512 B
X, W = t(1, [8, 3, 4, 4]), t(2, [4, 3, 3, 3])


def act(i):
    return t(i, [8, 4, 2, 2])


def two_island_calls(step=0, base=0, idbase=0):
    a = lambda i: act(i + idbase)  # noqa: E731
    return [
        OpCall(base + 0, "conv", "", "forward", [X, W], [a(3)], step=step),
        OpCall(base + 1, "bn", "", "forward", [a(3)], [a(4)], step=step),          # gap
        OpCall(base + 2, "relu", "", "forward", [a(4)], [a(5)], step=step),        # gap
        OpCall(base + 3, "sum", "", "forward", [a(5)], [t(6 + idbase, [])], step=step),
        OpCall(base + 4, "mul", "", "forward", [a(4), t(6 + idbase, [])], [a(7)], step=step),
        OpCall(base + 5, "adam", "", "optimizer", [W, a(7)], [W], step=step),      # gap
    ]


def test_two_islands_exact_transfers_and_bytes():
    g = build_call_graph(Trace("torch", "real", "m.py", calls=two_island_calls()))
    cost = compute_fallback(g, {"bn", "relu", "adam"})
    # island 1 {bn, relu}: in = act3 (from conv); out = act4 (read by mul), act5 (read by sum)
    # island 2 {adam}: in = W as it entered the step (432), act7 (from mul, 512);
    #                  out = W as adam wrote it, read by nobody later (432)
    assert cost == FallbackCost(
        islands=[FallbackIsland(ops=["bn", "relu"], calls=2, transfers=3, bytes=3 * 512,
                                first_call=1),
                 FallbackIsland(ops=["adam"], calls=1, transfers=3, bytes=432 + 512 + 432,
                                first_call=5)],
        transfers=6, bytes=1536 + 1376,
        groups=[FallbackGroup(["bn", "relu"], 1, 3, 1536, 3, [1]),
                FallbackGroup(["adam"], 1, 3, 1376, 3, [2])])


def test_everything_supported_costs_nothing():
    g = build_call_graph(Trace("torch", "real", "m.py", calls=two_island_calls()))
    assert compute_fallback(g, set()) == FallbackCost()


def test_value_read_twice_by_an_island_is_one_transfer():
    calls = [
        OpCall(0, "conv", "", "forward", [X, W], [act(3)]),
        OpCall(1, "bn", "", "forward", [act(3)], [act(4)]),
        OpCall(2, "add", "", "forward", [act(4), act(3)], [act(5)]),
        OpCall(3, "sum", "", "forward", [act(5)], [t(6, [])]),
    ]
    g = build_call_graph(Trace("torch", "real", "m.py", calls=calls))
    cost = compute_fallback(g, {"bn", "add"})
    # act3 enters once although bn and add both read it; the scalar leaves via sum (device)
    assert cost.islands == [FallbackIsland(ops=["bn", "add"], calls=2, transfers=2, bytes=1024,
                                           first_call=1)]
    # an island starting from graph inputs: X and W both cross into it
    cost = compute_fallback(g, {"conv"})
    assert cost.islands == [FallbackIsland(ops=["conv"], calls=1, transfers=3,
                                           bytes=1536 + 432 + 512)]


def test_dtype_keys_only_match_that_dtype_set():
    calls = [
        OpCall(0, "mm", "", "forward", [t(1, [2, 2], "float16")], [t(2, [2, 2], "float16")]),
        OpCall(1, "mm", "", "forward", [t(3, [2, 2])], [t(4, [2, 2])]),
    ]
    g = build_call_graph(Trace("torch", "real", "m.py", calls=calls))
    assert host_calls(g, {("mm", ("float16",))}) == {0}
    assert host_calls(g, {"mm"}) == {0, 1}
    cost = compute_fallback(g, {("mm", ("float16",))})
    assert cost.islands == [FallbackIsland(ops=["mm"], calls=1, transfers=2, bytes=16)]


def test_views_between_host_calls_stay_on_the_host():
    calls = [
        OpCall(0, "conv", "", "forward", [X, W], [act(3)]),
        OpCall(1, "pool", "", "forward", [act(3)], [t(4, [8, 4, 1, 1])]),  # gap
        OpCall(2, "view", "", "forward", [t(4, [8, 4, 1, 1])], [t(5, [8, 4])]),
        OpCall(3, "fc", "", "forward", [t(5, [8, 4])], [t(6, [8, 2])]),     # gap
        OpCall(4, "view", "", "forward", [X], [t(7, [8, 48])]),  # view of a device tensor
        OpCall(5, "sum", "", "forward", [t(6, [8, 2]), t(7, [8, 48])], [t(8, [])]),
    ]
    g = build_call_graph(Trace("torch", "real", "m.py", calls=calls))
    assert len(compute_fallback(g, {"pool", "fc"}).islands) == 2
    cost = compute_fallback(g, {"pool", "fc"}, passthrough={"view"})
    assert cost.islands == [FallbackIsland(ops=["pool", "view", "fc"], calls=3, transfers=2,
                                           bytes=512 + 64, first_call=1)]


def test_per_step_numbers_divide_by_steps_and_list_last_step_islands():
    calls = two_island_calls(step=0) + two_island_calls(step=1, base=10, idbase=100)
    tr = Trace("torch", "real", "m.py", calls=calls, steps=2)
    g = build_call_graph(tr)
    cost = compute_fallback(g, {"bn", "relu", "adam"})
    # step 0's adam writes W and step 1's conv and adam read it: islands never span steps
    # (between steps W lives on the device), so every step costs what one step alone does
    assert [i.ops for i in cost.islands] == [["bn", "relu"], ["adam"]]
    assert cost.transfers == 6 and cost.bytes == 2912
    # odd totals round half up
    assert compute_fallback(g, {"bn", "relu", "adam"}, steps=4).transfers == 3


def test_keys_from_verdicts_and_their_json():
    vs = [OpVerdict("bn", "dtype-gap", ("float16",)), OpVerdict("relu", "supported", ("float32",)),
          OpVerdict("view", "not-a-kernel", ("float32",))]
    assert gap_keys(vs) == {("bn", ("float16",))}
    assert gap_keys([{"op": "bn", "category": "needs-ascendc", "dtypes": ["float32"]}]) == {
        ("bn", ("float32",))}
    assert passthrough_keys(vs) == {("view", ("float32",))}


def test_out_buffer_is_not_copied_to_the_host():
    x, buf = t(1, [4, 4]), t(2, [4, 4])
    calls = [
        OpCall(0, "aten::empty.memory_format", "aten::empty.memory_format", "forward", [],
               [buf]),
        OpCall(1, "aten::_softmax.out", "aten::_softmax.out", "forward", [x, buf], [buf]),
        OpCall(2, "aten::sum", "aten::sum", "forward", [buf], [t(3, [])]),
    ]
    g = build_call_graph(Trace("torch", "meta", "m.py", calls=calls))
    cost = compute_fallback(g, {"aten::_softmax.out"})
    # x goes to the host (64 B), the result comes back (64 B); the empty buffer does not move
    assert cost.islands == [FallbackIsland(ops=["aten::_softmax.out"], calls=1, transfers=2,
                                           bytes=128, first_call=1)]


def test_islands_with_the_same_op_sequence_form_one_group():
    # one adam island per parameter (PaddleCustomDevice's adam is per parameter)
    params = [t(10 + i, [4, 4]) for i in range(3)]
    calls = [OpCall(0, "mm", "", "forward", [X, *params], [act(3)], step=1)]
    for i, p in enumerate(params):
        calls.append(OpCall(1 + i, "adam", "", "optimizer", [p, act(3)], [p], step=1))
    calls.append(OpCall(4, "bn", "", "optimizer", [act(3)], [act(5)], step=1))
    calls.append(OpCall(5, "relu", "", "optimizer", [act(5)], [act(6)], step=1))
    g = build_call_graph(Trace("paddle", "real", "m.py", calls=calls))
    cost = compute_fallback(g, {"adam", "bn", "relu"})
    assert len(cost.islands) == 4
    assert cost.groups == [
        # each adam island: p and act3 in, p out = 64 + 512 + 64
        FallbackGroup(["adam"], 3, 9, 3 * 640, 3, [1, 2, 3]),
        FallbackGroup(["bn", "relu"], 1, 2, 1024, 2, [4]),
    ]


def test_setup_calls_are_no_island_and_their_values_live_on_the_device():
    # positional encoding computed once before the first step by an unsupported op
    calls = [OpCall(0, "sin", "", "setup", [t(20, [4])], [t(21, [4])], step=0),
             OpCall(1, "sin", "", "forward", [X], [t(22, [8, 3, 4, 4])], step=1),
             OpCall(2, "add", "", "forward", [t(22, [8, 3, 4, 4]), t(21, [4])],
                    [t(23, [8, 3, 4, 4])], step=1)]
    g = build_call_graph(Trace("torch", "real", "m.py", calls=calls))
    assert host_calls(g, {"sin"}) == {1}
    cost = compute_fallback(g, {"sin"}, steps=1)
    assert [(i.first_call, i.transfers) for i in cost.islands] == [(1, 2)]
    assert cost.bytes == 2 * 1536
