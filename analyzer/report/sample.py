"""A small synthetic scan (weight initialisation as setup, then conv -> bn -> relu -> pool
-> fc, cross-entropy, fused Adam) with two gaps, built through the real graph and fallback code. Used by the report tests,
the golden files, benchmarks/report_screenshot.py and the report docs; the verdicts are
hand-written (the classifier is not involved) and say so in their evidence."""
from __future__ import annotations

from analyzer.fallback import compute_fallback, gap_keys, passthrough_keys
from analyzer.graph import build_call_graph, graph_summary
from analyzer.model import (PHASES, AclnnCandidate, OpCall, OpVerdict, RouteDiff, ScanReport,
                            TensorMeta, Trace)


class _Ids:
    def __init__(self):
        self.next = 0

    def __call__(self, shape, dtype="float32") -> TensorMeta:
        self.next += 1
        return TensorMeta(self.next, dtype, tuple(shape))


def sample_trace() -> Trace:
    """One training step of a 1-conv CNN on a [8,3,32,32] batch, 10 classes."""
    T = _Ids()
    x, target = T([8, 3, 32, 32]), T([8], "int64")
    w1 = T([16, 3, 3, 3])
    bn_w, bn_b, rm, rv = T([16]), T([16]), T([16]), T([16])
    fc_w, fc_b = T([10, 16]), T([10])
    calls: list[OpCall] = []

    def call(op, overload, phase, ins, outs, module="", source=""):
        calls.append(OpCall(len(calls), op, overload, phase, list(ins), list(outs),
                            module=module, source=source))
        return outs[0] if len(outs) == 1 else outs

    f, b, o = "forward", "backward", "optimizer"
    # setup: the model's __init__ initialises its weights before the first step
    call("aten::normal_", "default", "setup", [w1], [w1], "", "examples/small_cnn.py:15")
    call("aten::uniform_", "default", "setup", [fc_w], [fc_w], "", "examples/small_cnn.py:16")
    call("aten::uniform_", "default", "setup", [fc_b], [fc_b], "", "examples/small_cnn.py:16")
    a1 = call("aten::convolution", "default", f, [x, w1], [T([8, 16, 32, 32])], "conv1",
              "examples/small_cnn.py:21")
    a2, sm, si, _, _ = call("aten::native_batch_norm", "default", f, [a1, bn_w, bn_b, rm, rv],
                            [T([8, 16, 32, 32]), T([16]), T([16]), rm, rv], "bn1",
                            "examples/small_cnn.py:22")
    call("aten::relu_", "default", f, [a2], [a2], "relu", "examples/small_cnn.py:23")
    p = call("aten::_adaptive_avg_pool2d", "default", f, [a2], [T([8, 16, 1, 1])], "pool",
             "examples/small_cnn.py:24")
    v = call("aten::view", "default", f, [p], [T([8, 16])], "", "examples/small_cnn.py:25")
    fwt = call("aten::t", "default", f, [fc_w], [T([16, 10])], "fc", "examples/small_cnn.py:26")
    logits = call("aten::addmm", "default", f, [fc_b, v, fwt], [T([8, 10])], "fc",
                  "examples/small_cnn.py:26")
    ls = call("aten::_log_softmax", "default", f, [logits], [T([8, 10])], "",
              "examples/small_cnn.py:31")
    loss, tw = call("aten::nll_loss_forward", "default", f, [ls, target], [T([]), T([])], "",
                    "examples/small_cnn.py:31")
    gl = call("aten::ones_like", "default", b, [loss], [T([])], "", "examples/small_cnn.py:32")
    g1 = call("aten::nll_loss_backward", "default", b, [gl, ls, target, tw], [T([8, 10])], "",
              "examples/small_cnn.py:31")
    g2 = call("aten::_log_softmax_backward_data", "default", b, [g1, ls], [T([8, 10])], "",
              "examples/small_cnn.py:31")
    fwtt = call("aten::t", "default", b, [fwt], [T([10, 16])], "fc", "examples/small_cnn.py:26")
    gv = call("aten::mm", "default", b, [g2, fwtt], [T([8, 16])], "fc", "examples/small_cnn.py:26")
    g2t = call("aten::t", "default", b, [g2], [T([10, 8])], "fc", "examples/small_cnn.py:26")
    gw = call("aten::mm", "default", b, [g2t, v], [T([10, 16])], "fc", "examples/small_cnn.py:26")
    gb = call("aten::sum", "dim_IntList", b, [g2], [T([10])], "fc", "examples/small_cnn.py:26")
    gp = call("aten::view", "default", b, [gv], [T([8, 16, 1, 1])], "", "examples/small_cnn.py:25")
    ga2 = call("aten::_adaptive_avg_pool2d_backward", "default", b, [gp, a2],
               [T([8, 16, 32, 32])], "pool", "examples/small_cnn.py:24")
    ga1 = call("aten::threshold_backward", "default", b, [ga2, a2], [T([8, 16, 32, 32])], "relu",
               "examples/small_cnn.py:23")
    _, gbw, gbb = call("aten::native_batch_norm_backward", "default", b,
                       [ga1, a1, bn_w, rm, rv, sm, si],
                       [T([8, 16, 32, 32]), T([16]), T([16])], "bn1", "examples/small_cnn.py:22")
    gw1 = call("aten::convolution_backward", "default", b, [ga1, x, w1], [T([16, 3, 3, 3])],
               "conv1", "examples/small_cnn.py:21")
    params = [w1, bn_w, bn_b, fc_w, fc_b]
    grads = [gw1, gbw, gbb, gw, gb]
    exp_avg = [T(t.shape) for t in params]
    exp_avg_sq = [T(t.shape) for t in params]
    state_steps = [T([]) for _ in params]
    call("aten::_fused_adam_", "default", o, params + grads + exp_avg + exp_avg_sq + state_steps,
         params + exp_avg + exp_avg_sq, "", "examples/small_cnn.py:40")
    return Trace(framework="torch", mode="real", model="examples/small_cnn.py", calls=calls,
                 steps=1, framework_version="2.13.0",
                 notes=["optimizer: torch.optim.Adam(fused=True) as written in the model"])


_EVIDENCE = "(synthetic sample, not from opdb)"

_SPECIAL = {
    "aten::view": dict(category="not-a-kernel", action="none: a view shares its input's storage",
                       evidence=["view/alias op: no device kernel is launched " + _EVIDENCE]),
    "aten::t": dict(category="not-a-kernel", action="none: a view shares its input's storage",
                    evidence=["view/alias op: no device kernel is launched " + _EVIDENCE]),
    "aten::_adaptive_avg_pool2d_backward": dict(
        category="cann-available",
        evidence=["no torch_npu adapter registers aten::_adaptive_avg_pool2d_backward "
                  + _EVIDENCE,
                  "aclnnAdaptiveAvgPool2dBackward is declared in aclnn_adaptive_avg_pool2d_"
                  "backward.h " + _EVIDENCE],
        action="generate an adapter for aclnnAdaptiveAvgPool2dBackward",
        candidates=[AclnnCandidate(
            api="aclnnAdaptiveAvgPool2dBackward",
            signature="(gradOutput, self, out)", evidence="name and parameter match",
            confidence=0.92, supported_on_soc=True,
            opgen_command="opgen aclnn AdaptiveAvgPool2dBackward --target torch")]),
    "aten::_fused_adam_": dict(
        category="decomposable",
        evidence=["no NPU kernel for aten::_fused_adam_ " + _EVIDENCE,
                  "torch.optim.Adam(foreach=True) runs it as _foreach_* ops, all supported "
                  + _EVIDENCE],
        action="use torch.optim.Adam(foreach=True) (the torch_npu default) instead of fused=True",
        decomposes_into=["aten::_foreach_mul_", "aten::_foreach_add_", "aten::_foreach_lerp_",
                         "aten::_foreach_addcmul_", "aten::_foreach_sqrt",
                         "aten::_foreach_addcdiv_"]),
}


def sample_verdicts(trace: Trace) -> list[OpVerdict]:
    out = []
    for (op, dtypes), calls in trace.unique_ops().items():
        spec = dict(_SPECIAL.get(op, dict(
            category="supported", action="",
            evidence=[f"torch_npu registers {op} for {', '.join(dtypes)} " + _EVIDENCE],
            adapter="torch_npu/2.13.0 (sample)")))
        cands = spec.pop("candidates", [])
        phases = [p for p in PHASES if any(c.phase == p for c in calls)]
        setup = sum(1 for c in calls if c.phase == "setup")
        out.append(OpVerdict(
            op=op, dtypes=dtypes, calls=len(calls) - setup, setup_calls=setup, phases=phases,
            modules=sorted({c.module for c in calls if c.module})[:3],
            sources=sorted({c.source for c in calls if c.source})[:3],
            candidates=cands, **spec))
    return out


def sample_report(partial: bool = False) -> ScanReport:
    """The sample scan; `partial=True` pretends step 1 raised in the backward pass."""
    trace = sample_trace()
    if partial:
        trace.calls = trace.calls[:23]  # stops before native_batch_norm_backward
        trace.partial = True
        trace.error = ("step 1, examples/small_cnn.py:32: RuntimeError: Function "
                       "NativeBatchNormBackward0 returned an invalid gradient at index 1 - got "
                       "[8] but expected shape compatible with [16]")
    g = build_call_graph(trace)
    verdicts = sample_verdicts(trace)
    fb = compute_fallback(g, gap_keys(verdicts), passthrough_keys(verdicts), steps=trace.steps)
    counts = {}
    for v in verdicts:
        counts[v.category] = counts.get(v.category, 0) + 1
    ngap = sum(1 for v in verdicts if v.is_gap)
    gap_calls = sum(v.calls for v in verdicts if v.is_gap)
    step_calls = sum(v.calls for v in verdicts)
    summary = (f"{ngap} of {len(verdicts)} ops ({gap_calls} of {step_calls} calls) cannot "
               f"run on Ascend910B as traced; CPU fallback would make {fb.transfers} "
               f"device<->host copies ({fb.bytes} bytes) per step.")
    return ScanReport(
        schema_version=1, tool="opscan 0.1.0", model=trace.model, framework=trace.framework,
        framework_version=trace.framework_version, mode=trace.mode, target="torch_npu",
        soc="Ascend910B", steps=trace.steps, partial=trace.partial, error=trace.error,
        summary=summary, counts=counts, verdicts=verdicts, fallback=fb, notes=trace.notes,
        opdb={"snapshot": "sample-0000000000000000", "cann": "8.3.RC1 (sample)",
              "torch_npu": "2.13.0 (sample)"},
        graph=graph_summary(g),
        cpu_route=[RouteDiff("aten::add_", "foreach", "aten::_foreach_add_", 2),
                   RouteDiff("aten::mm", "inside-adapted-op", "aten::matmul", 1),
                   RouteDiff("aten::t", "view", "aten::linear", 1)])
