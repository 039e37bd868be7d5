"""The Paddle meta tracer's speed mechanisms (issue 12, item 7) change no result: op
creation call stacks are skipped only for Paddle's C++ op builders, optimizer accumulators
lose only their never-run startup initialisers, and the innermost-API lookup by intervals
gives what testing every interval against every op gives."""
from __future__ import annotations

import contextlib
import random
import traceback
from collections import Counter

import paddle  # installed by scripts/setup.sh

from analyzer.trace.paddle.meta import _innermost_api, _lean_build  # noqa: E402


def _brute(api, op_ids):
    out = {}
    for i in op_ids:
        best = None
        for s, e, mod, src in api:
            if s < i <= e and (best is None or e - s <= best[1] - best[0]):
                best = (s, e, mod, src)
        if best is not None:
            out[i] = (best[2], best[3])
    return out


def test_innermost_api_matches_the_quadratic_search():
    rng = random.Random(0)
    for _ in range(50):
        op_ids = sorted(rng.sample(range(200), 60))
        api = []
        for k in range(40):
            s = rng.randrange(200)
            e = s + rng.choice([0, 1, 2, 5, 20, 80])
            api.append((s, e, f"m{k}", f"f.py:{k}"))
        api += api[:5]  # equal intervals: the later-recorded one wins
        assert _innermost_api(api, op_ids) == _brute(api, op_ids)


def test_program_ops_get_no_callstack_python_callers_keep_theirs():
    real = traceback.extract_stack
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [2, 3], "float32")
            paddle.nn.functional.relu(x)  # an op with its call stack
            with _lean_build():
                paddle.nn.functional.relu(x)  # one without
                mine = traceback.extract_stack()
                assert mine[-1].name == \
                    "test_program_ops_get_no_callstack_python_callers_keep_theirs"
                assert len(traceback.extract_stack(limit=1)) == 1
        relus = [op for op in main.global_block().ops if op.name() == "pd_op.relu"]
        assert len(relus) == 2
        before, after = (op.attrs().get("op_callstack") for op in relus)
        assert before and not after
    finally:
        paddle.disable_static()
    assert traceback.extract_stack is real


def _adam_programs(lean: bool):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            ctx = _lean_build() if lean else contextlib.nullcontext()
            with ctx:
                x = paddle.static.data("x", [4, 3], "float32")
                fc = paddle.nn.Linear(3, 2)
                loss = fc(x).mean()
                opt = paddle.optimizer.Adam(parameters=fc.parameters())
                opt.apply_gradients(paddle.static.append_backward(loss))
        return ([op.name() for op in main.global_block().ops],
                [op.name() for op in startup.global_block().ops])
    finally:
        paddle.disable_static()


def test_accumulators_keep_their_main_program_values_only():
    main, startup = _adam_programs(lean=False)
    lean_main, lean_startup = _adam_programs(lean=True)
    assert Counter(lean_main) == Counter(main)
    # x, the learning rate and 2 x 4 Adam accumulators
    assert main.count("pd_op.adam_") == 2 and main.count("pd_op.data") == 1 + 1 + 2 * 4
    # the startup program keeps the parameters' initialisers, not the persistable values'
    # (each a `full` and its `shadow_output`)
    assert startup.count("builtin.shadow_output") == 9 and startup.count("pd_op.full") == 12
    assert lean_startup.count("builtin.shadow_output") == 0
    assert lean_startup.count("pd_op.full") == 3
    assert lean_startup.count("builtin.set_parameter") == startup.count("builtin.set_parameter") == 2


def test_layer_calls_skip_the_struct_name_stamping_and_build_the_same_ops():
    """Under `_lean_build` a layer call does not list the program's ops to stamp
    `struct_name` (quadratic in the program's size); the ops built are the same."""
    import paddle.base.framework as framework

    listed = []
    real = framework.name_struct

    def counting(prefix=None):
        listed.append(prefix)
        return real(prefix)

    def build(lean: bool):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main, paddle.static.Program()):
                with _lean_build() if lean else contextlib.nullcontext():
                    x = paddle.static.data("x", [4, 3], "float32")
                    net = paddle.nn.Sequential(paddle.nn.Linear(3, 5), paddle.nn.ReLU(),
                                               paddle.nn.Linear(5, 2))
                    net(x).mean()
            ops = main.global_block().ops  # read while the program is alive
            return [op.name() for op in ops], [op.has_attr("struct_name") for op in ops]
        finally:
            paddle.disable_static()

    import paddle.nn.layer.layers as layers

    with contextlib.ExitStack() as undo:
        undo.callback(setattr, layers, "name_struct", layers.name_struct)
        layers.name_struct = counting
        plain = build(lean=False)
        n_plain = len(listed)
        lean = build(lean=True)
    assert n_plain == 4 and len(listed) == n_plain  # Sequential and its 3 layers, once
    assert lean[0] == plain[0]
    assert any(plain[1]) and not any(lean[1])
    assert layers.name_struct is real
