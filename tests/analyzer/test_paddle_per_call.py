"""Issue 16 (scan wall time, per traced call), paddle real recorder: its markers open the
same profiler ranges `paddle.profiler.RecordEvent(...).begin()` does, without that
method's per-call checks, and only while a profiler records; the argument walk skips
scalar leaves and finds the same tensors in the same order."""
from __future__ import annotations

import paddle  # installed by scripts/setup.sh
from paddle import profiler

from analyzer.trace.paddle import real


def _names(result) -> list[str]:
    out: list[str] = []
    todo = [root for _, root in sorted(result.get_data().items())]
    while todo:
        node = todo.pop()
        out.append(node.name)
        todo.extend(node.children_node)
    return out


def test_markers_are_profiler_ranges_only_while_a_profiler_records():
    open_event = real._marker_factory()
    assert open_event("opscan|idle") is real._NO_EVENT  # no profiler: nothing opened
    open_event("opscan|idle").end()
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
    prof.start()
    try:
        outer = open_event("opscan|outer")
        inner = open_event("opscan|inner")
        paddle.ones([2]) + 1
        inner.end()
        outer.end()
        ours = paddle.profiler.RecordEvent("opscan|reference")
        ours.begin()
        ours.end()
    finally:
        prof.stop()
    result = prof.profiler_result
    prof.profiler = None
    names = _names(result)
    assert {"opscan|outer", "opscan|inner", "opscan|reference"} <= set(names)
    assert open_event("opscan|after") is real._NO_EVENT


def test_marker_nesting_matches_record_event():
    open_event = real._marker_factory()
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
    prof.start()
    try:
        outer = open_event("opscan|outer")
        inner = open_event("opscan|inner")
        inner.end()
        outer.end()
    finally:
        prof.stop()
    result = prof.profiler_result
    prof.profiler = None

    def find(nodes, name):
        for n in nodes:
            if n.name == name:
                return n
            hit = find(n.children_node, name)
            if hit is not None:
                return hit
        return None

    outer_node = find([r for _, r in sorted(result.get_data().items())], "opscan|outer")
    assert outer_node is not None
    assert [c.name for c in outer_node.children_node] == ["opscan|inner"]


def test_walk_tensors_skips_scalars_and_keeps_order():
    a, b, c, d, deep = (paddle.to_tensor([float(i)]) for i in range(5))
    args = (a, 3, "mean", None, [b, 1.5, (c, True)], {"w": d, "axis": [0, 1]},
            [[[[deep]]]])  # deeper than 3 levels: not walked, as before
    found = real._walk_tensors(args, paddle.Tensor, [])
    assert [id(t) for t in found] == [id(a), id(b), id(c), id(d)]


def test_meta_reuses_a_record_until_the_tensor_changes_in_place():
    """A tensor read again keeps its id and record; an in-place write that changes its
    shape (version bumped) or a new tensor at a reused address gets a new record."""
    rec = real.Recorder(None)
    x = paddle.ones([2, 3])
    first = rec.meta(x)
    assert rec.meta(x) is first  # unchanged: the same record
    x.reshape_([3, 2])  # in place: same object, new version, new shape
    again = rec.meta(x)
    assert again.id == first.id and again.shape == (3, 2) and again.dtype == "float32"
    assert rec.meta(x) is again
    x.add_(paddle.ones([3, 2]))  # in place, same shape: a new record, same content
    assert rec.meta(x) == again
    fresh = rec.meta(x, fresh=True)  # an output: a new id
    assert fresh.id != first.id and rec.meta(x) is fresh
    y = paddle.zeros([4], dtype="int64")
    assert rec.meta(y).id not in (first.id, fresh.id) and rec.meta(y).dtype == "int64"


def test_gradient_hooks_are_registered_without_the_python_register_hook(monkeypatch):
    """The recorder registers its gradient hooks with the C++ method `Tensor.register_hook`
    ends in, skipping that method's Python layers (issue 16: ~3.5 -> ~1.2 us a hook, 366
    hooks a MobileNetV3 step): with the Python method refusing, the gradients are still
    recorded, each inside its grad node's marker."""

    def refuse(self, hook):
        raise AssertionError("the Python register_hook ran")

    monkeypatch.setattr(paddle.Tensor, "register_hook", refuse)
    layer = paddle.nn.Linear(3, 2)
    x = paddle.ones([4, 3])
    rec = real.Recorder(layer)
    with rec.installed():
        rec.enabled = True
        loss = paddle.tanh(layer(x)).sum()
        loss.backward()
        rec.enabled = False
    grads = {c.name: [m.shape for m in c.grads] for c in rec.calls if c.grads}
    assert grads.get("tanh") == [(4, 2)], grads
    assert grads.get("linear") == [(4, 2)], grads


def test_aliases_are_computed_once_per_kernel_and_owned_by_each_caller():
    """`aliases_for` is asked once per kernel launch of every traced step (~700 a
    MobileNetV3 step) among a few dozen kernels: computed once per (kernel, names), handed
    out as a new list each time so no call's aliases change another's."""
    from analyzer.trace.paddle import names

    names._aliases.cache_clear()
    first = names.aliases_for("cross_entropy_with_softmax", "cross_entropy")
    assert first == ["cross_entropy", "softmax_with_cross_entropy"]
    first.append("changed by its owner")
    again = names.aliases_for("cross_entropy_with_softmax", "cross_entropy")
    assert again == ["cross_entropy", "softmax_with_cross_entropy"] and again is not first
    info = names._aliases.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_a_grad_node_gets_one_marker_from_its_calls_hooks():
    """A call with several outputs that need a gradient (batch_norm: 6) gets a hook on each,
    and Paddle runs them one after another inside the call's grad node: only the first
    opens a marker (the rest would name the same call again: 171 of MobileNetV3's 366 a
    step), and the node's kernels are still tied to the call. A second backward marks
    its nodes anew."""
    layer = paddle.nn.BatchNorm1D(3)
    x = paddle.randn([4, 3])
    rec = real.Recorder(layer)
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
    with rec.installed():
        prof.start()
        try:
            rec.enabled = True
            rec.instant("begin")
            for _ in range(2):
                (layer(x) * 2).sum().backward()
        finally:
            rec.enabled = False
            prof.stop()
    result = prof.profiler_result
    prof.profiler = None
    norms = [c for c in rec.calls if c.name == "batch_norm"]
    assert len(norms) == 2
    names = _names(result)
    for bn in norms:
        assert names.count(f"opscan|grad|{bn.idx}") == 1, names
    launches = real.collect_launches(result)
    tied = sorted(la.ctx.grad_of for la in launches if la.kernel == "batch_norm_grad")
    assert tied == [bn.idx for bn in norms]


class _Node:
    """A profiler tree node as `collect_launches` reads it (HostPythonNode's attributes);
    `typ=None`: reading its type fails the test."""

    def __init__(self, name, start, typ=None, children=()):
        self.name, self.start_ns, self.end_ns = name, start, start + 100
        self._typ, self.children_node = typ, list(children)

    @property
    def type(self):
        assert self._typ is not None, f"type of {self.name!r} read"
        return self._typ


def test_walk_reads_no_type_of_the_binding_and_api_scopes():
    """Paddle's `X pybind_imperative_func` scopes and `X dygraph` API scopes (one each per
    API call) are walked through without reading their type; the launch under one is
    still found and tied to its call. An API scope with no launch in it has its type read
    (an `Operator` names an unrecorded kernel, anything else does not)."""
    from paddle.profiler import TracerEventType as T

    def api_call(idx, start, kernel, launched, typ=None):
        inner = [_Node(f"{kernel} infer_meta", start + 3)]
        if launched:
            inner.append(_Node(f"{kernel} kernel launch", start + 4, T.DygraphKernelLaunch))
        dygraph = _Node(f"{kernel} dygraph", start + 2, typ, inner)
        scope = _Node(f"{kernel} pybind_imperative_func", start + 1, None, [dygraph])
        return _Node(f"{real.MARK}api|{idx}", start, None, [scope])

    root = _Node("root", 0, T.UserDefined, [
        _Node(f"{real.MARK}begin", 1), api_call(0, 10, "conv2d", True),
        api_call(1, 20, "add_n", False, T.Operator),
        api_call(2, 30, "relu", False, T.PythonUserDefined)])

    class Result:
        def get_data(self):
            return {0: root}

    launches = real.collect_launches(Result())
    assert [(la.kernel, la.ctx.api, la.unrecorded) for la in launches] == [
        ("conv2d", 0, False), ("add_n", 1, True)]
