"""Issue 15: for Paddle, the CUSTOM_DEVICE_BLACK_LIST trial for a suspect op goes through
`opscan blacklist`'s checks (analyzer.blacklist): the runtime names per mode, and no trial
for a kernel the installed Paddle cannot run on the CPU in that dtype (with the reason)."""
from __future__ import annotations

import functools

import pytest

from analyzer.align.compare import compare_dumps
from analyzer.align.coverage import _context, blacklist_trial, suspects
from analyzer.align.fault import Fault
from analyzer.align.layout import read_meta

from .conftest import MODELS

PADDLE = MODELS / "paddle_tiny_transformer.py"


@pytest.fixture(scope="module")
def ctx():
    return _context("paddle", None, None)


def test_trial_uses_the_blacklist_checks(ctx):
    # Paddle 3.x has CPU conv2d kernels for float32/float64 only: a bf16 run would stop
    bl = blacklist_trial(ctx, "conv2d", "torch.bfloat16")
    assert bl.export == "" and [e.kernel for e in bl.refused] == ["conv2d"]
    assert "no CPU `conv2d` kernel for bfloat16" in bl.refused[0].refusal
    assert blacklist_trial(ctx, "conv2d", "torch.float32").export == 'export CUSTOM_DEVICE_BLACK_LIST="conv2d"'
    # dygraph reads the fluid name, static/PIR the phi kernel name: both are listed
    assert blacklist_trial(ctx, "matmul", "torch.float32").export == \
        'export CUSTOM_DEVICE_BLACK_LIST="matmul_v2,matmul"'


def _planted(align_dumps, kind, n):
    a = align_dumps("paddle-tiny-a", PADDLE, "paddle", save_inputs=True, level="op")
    b = align_dumps(f"paddle-tiny-{kind}{n}", PADDLE, "paddle", inputs_from=str(a), level="op",
                    fault=Fault(kind, n))
    hit = read_meta(b)["fault"]["hit"]
    return compare_dumps(a, b), hit


def _classify(op, dtypes):
    return {"category": "supported", "action": ""}


def test_compare_offers_the_checked_trial(align_dumps, ctx, tmp_path):
    rep, hit = _planted(align_dumps, "softmax", 1)
    out = suspects(rep, "paddle", classify=_classify,
                   blacklist=lambda k, d: blacklist_trial(ctx, k, d))
    assert out[0].key == hit["op_key"] and out[0].blacklist["status"] == "trial"
    trial = [s for s in rep.next_steps if s.startswith("blacklist trial on the device")]
    assert len(trial) == 1
    assert 'export CUSTOM_DEVICE_BLACK_LIST="softmax"' in trial[0]
    assert "checked by opscan blacklist; softmax: dygraph + static/PIR" in trial[0]
    # the md report's suspect table carries the trial
    import json

    from analyzer.align.report import write_reports

    rep.suspects = out
    write_reports(json.loads(json.dumps(rep.to_json(), default=str)), tmp_path, "md", False)
    assert '| export CUSTOM_DEVICE_BLACK_LIST="softmax" |' in (tmp_path / "align.md").read_text()


def test_refused_suspect_gets_no_trial_and_says_why(align_dumps, ctx):
    rep, _ = _planted(align_dumps, "softmax", 1)
    # a Paddle whose softmax kernels are GPU-only: listing it would stop the run
    gpu_only = {"softmax": ("(GPU, Undefined(AnyLayout), float32)",)}
    out = suspects(rep, "paddle", classify=_classify,
                   blacklist=functools.partial(blacklist_trial, ctx, registry=gpu_only))
    assert out and out[0].blacklist["status"] == "refused"
    assert not any("CUSTOM_DEVICE_BLACK_LIST=" in s for s in rep.next_steps)
    why = [s for s in rep.next_steps if s.startswith("no blacklist trial for softmax")]
    assert why and "has no CPU `softmax` kernel for float32" in why[0] and "would stop the run" in why[0]


def test_composite_api_is_not_listed(align_dumps, ctx):
    # paddle.nn.Linear calls _C_ops.linear, a C++ composite with no kernel of that name
    rep, hit = _planted(align_dumps, "matmul", 4)
    assert hit["op"] == "linear"
    out = suspects(rep, "paddle", classify=_classify,
                   blacklist=lambda k, d: blacklist_trial(ctx, k, d))
    assert out[0].op == "linear" and out[0].blacklist["status"] == "not-a-kernel"
    assert not any("CUSTOM_DEVICE_BLACK_LIST=" in s for s in rep.next_steps)
