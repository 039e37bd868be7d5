"""analyzer.trace.torch.tracer: what the emulated NPU dispatches for real models."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import torch  # installed by scripts/setup.sh

from analyzer.trace.entry import Script, load_entry  # noqa: E402
from analyzer.errors import ModelError  # noqa: E402
from analyzer.trace.torch.tracer import is_cpu_only_kernel, trace_torch  # noqa: E402
from tests.analyzer import npu_adapted  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "models"
EXAMPLES = ["torch_resnet50.py", "torch_shufflenetv2.py", "torch_transformer.py",
            "torch_lstm_attention.py"]


@pytest.fixture(scope="module")
def adapted():
    return set(npu_adapted.adapted_ops())


def _trace(path, adapted, **kw):
    return trace_torch(path, adapted=adapted, **kw)


@pytest.fixture(scope="module")
def real_trace(adapted):
    """real_trace(path): the default (real-mode, one step) trace of a model, made once per
    module: the example tests read the same traces (test_trace_is_deterministic still
    compares two separate traces)."""
    cache: dict = {}

    def get(path):
        if path not in cache:
            cache[path] = _trace(path, adapted)
        return cache[path]
    return get


def test_lstm_sdpa_matmul_are_npu_level_ops(real_trace):
    tr = real_trace(ROOT / "examples" / "torch_lstm_attention.py")
    ops = Counter((c.op, c.phase) for c in tr.calls)
    for op in ("aten::scaled_dot_product_attention", "aten::lstm.input", "aten::matmul",
               "aten::one_hot", "aten::adaptive_avg_pool2d"):
        assert ops[(op, "forward")] >= 1, op
    # Adapted composites keep their own backward: the kernel op-plugin's derivatives name
    # (matmul -> matmul_backward), else the op itself in the backward phase.
    for op in ("aten::scaled_dot_product_attention", "aten::lstm.input",
               "aten::matmul_backward"):
        assert ops[(op, "backward")] >= 1, op
    assert ops[("aten::matmul", "backward")] == 0
    mb = next(c for c in tr.calls if c.op == "aten::matmul_backward")
    assert mb.outputs and mb.overload == "aten::matmul_backward"
    assert not any(n.startswith("profiler::") for c in tr.calls for n in c.cpu_ops)
    names = {c.op for c in tr.calls}
    assert not any(is_cpu_only_kernel(n) for n in names), names
    # ... and their CPU decompositions do not show up as calls.
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" not in names
    assert "aten::mkldnn_rnn_layer" not in names
    # What the CPU would have run instead is kept for comparison.
    sdpa = next(c for c in tr.calls if c.op == "aten::scaled_dot_product_attention")
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in sdpa.cpu_ops
    assert tr.cpu_only_ops == {
        "aten::_scaled_dot_product_flash_attention_for_cpu": 1,
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward": 1,
        "aten::mkldnn_rnn_layer": 1,
        "aten::mkldnn_rnn_layer_backward": 1,
    }
    lstm = next(c for c in tr.calls if c.op == "aten::lstm.input")
    assert lstm.module == "lstm" and lstm.source == "torch_lstm_attention.py:24"
    assert lstm.overload == "aten::lstm.input"
    assert [t.shape for t in lstm.inputs[:1]] == [(2, 12, 32)]
    assert "optimizer AdamW: foreach=True (npu default)" in tr.notes


def test_a_cpu_trace_would_report_false_gaps(adapted):
    """The trap this tracer avoids: plain CPU dispatch decomposes and picks CPU kernels."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = set()

    class Spy(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.add(func._schema.name)
            return func(*args, **(kwargs or {}))

    e = load_entry(ROOT / "examples" / "torch_lstm_attention.py", "torch")
    with Spy():
        e.run_step()
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in seen
    assert "aten::matmul" not in seen and "aten::lstm" not in seen


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_real_and_meta_give_the_same_ops(name, adapted, real_trace):
    path = ROOT / "examples" / name
    real = real_trace(path)
    meta = _trace(path, adapted, mode="meta")
    assert not real.partial and not meta.partial
    assert {c.phase for c in real.calls} >= {"forward", "backward", "optimizer"}
    assert Counter((c.op, c.phase) for c in real.calls) == \
        Counter((c.op, c.phase) for c in meta.calls)
    assert [(t.dtype, t.shape) for c in real.calls for t in c.outputs] == \
        [(t.dtype, t.shape) for c in meta.calls for t in c.outputs]
    # Every op of these models has an NPU kernel in torch_npu 2.13.0.
    assert {c.op for c in real.calls} <= adapted


def test_resnet50_calls_carry_modules_sources_and_linked_ids(real_trace):
    tr = real_trace(ROOT / "examples" / "torch_resnet50.py")
    conv = [c for c in tr.calls if c.op == "aten::convolution"]
    assert len(conv) == 53  # 49 convs in blocks + stem + ... (1 + 16*3 + 4 downsample)
    assert conv[0].module == "conv1" and conv[0].source == "torch_resnet50.py:57"
    assert conv[1].module == "layer1.0.downsample.0"  # Bottleneck runs it first
    assert conv[2].module == "layer1.0.conv1"
    assert all(c.phase == "forward" for c in conv)
    bwd = [c for c in tr.calls if c.op == "aten::convolution_backward"]
    assert len(bwd) == 53 and bwd[-1].module == "conv1"
    assert bwd[-1].overload == "aten::convolution_backward.default"
    # ids link producers to consumers: the stem conv's output feeds its batch norm.
    bn = next(c for c in tr.calls if c.module == "bn1" and "batch_norm" in c.op)
    assert bn.inputs[0].id == conv[0].outputs[0].id
    assert "optimizer SGD: foreach=True (npu default)" in tr.notes
    assert any(c.op == "aten::_foreach_add_.List" and c.phase == "optimizer" for c in tr.calls)


def test_tiny_decoder_meta_equals_real(adapted):
    real = _trace(FIX / "tiny_decoder.py", adapted, mode="real")
    meta = _trace(FIX / "tiny_decoder.py", adapted, mode="meta")
    assert Counter(c.op for c in real.calls) == Counter(c.op for c in meta.calls)
    assert any(c.op == "aten::scaled_dot_product_attention" for c in meta.calls)


@pytest.mark.slow
def test_7b_decoder_with_default_options_runs_meta_with_a_note(adapted):
    """`opscan examples/torch_decoder_7b.py` (mode auto) estimates ~108 GB for a real
    step from the meta trace and keeps the meta trace, saying so, instead of being
    killed by the OOM killer."""
    import resource

    from analyzer.trace import trace

    progress = []
    tr = trace(ROOT / "examples" / "torch_decoder_7b.py", framework="torch", adapted=adapted,
               progress=progress.append)
    assert tr.mode == "meta" and not tr.partial
    assert tr.notes[0].startswith("mode auto: meta, shapes and dtypes only (a real step "
                                  "would need about 108.")
    sdpa = [c for c in tr.calls if c.op == "aten::scaled_dot_product_attention"]
    assert [c.phase for c in sdpa] == ["forward"] * 32 + ["backward"] * 32
    assert sdpa[0].inputs[0].shape == (1, 32, 127, 128)
    shapes = {t.shape for c in tr.calls for t in c.inputs}
    assert (11008, 4096) in shapes and (32000, 4096) in shapes
    assert progress[0].startswith("mode auto: estimating") and progress[-1].startswith("step 1/1")
    # no storage was allocated for the 6.7e9 parameters
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 4 * 1024 * 1024


def _is_composite(name: str) -> bool:
    """Any overload of this op has a composite kernel (so it decomposes where not adapted)."""
    base = name.split("::", 1)[1]
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return False
    for ov in packet.overloads():
        qn = f"aten::{base}" + ("" if ov == "default" else f".{ov}")
        for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd",
                    "CompositeExplicitAutogradNonFunctional"):
            if torch._C._dispatch_has_kernel_for_dispatch_key(qn, key):
                return True
    return False


def test_profiler_recall(adapted):
    """Every aten kernel the torch profiler records ("dump op") is accounted for."""
    path = FIX / "recall_model.py"
    tr = _trace(path, adapted)
    entry = load_entry(path, "torch")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        entry.run_step()

    def base(n):
        # In-place and functional variants count as one op: the autograd engine sums
        # gradients with `add_` after a C++ backward node but with `add` after the
        # emulator's Python one (the gradient is still referenced when it arrives).
        n = n.split(".")[0]
        return n[:-1] if n.endswith("_") and not n.endswith("__") else n

    traced = {base(c.op) for c in tr.calls}
    replaced = {base(x) for c in tr.calls for x in c.cpu_ops}
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    children: dict[int, list] = {}
    for e in events:
        p = e.cpu_parent
        if p is not None and p.name.startswith("aten::"):
            children.setdefault(id(p), []).append(e)

    def accounted(e) -> bool:
        if base(e.name) in traced or base(e.name) in replaced:
            return True  # the same op, or a CPU kernel an NPU-level op replaced
        kids = children.get(id(e), [])
        # a composite the NPU decomposes too: its parts must be accounted for
        return _is_composite(e.name) and all(accounted(k) for k in kids)

    tops = [e for e in events
            if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")]
    missing = sorted({e.name for e in tops if not accounted(e)})
    assert missing == []
    # ...and the trace lists nothing the step would not run.
    # (The backward kernels torch_npu runs for adapted composites are NPU-only.)
    from analyzer.trace.torch.derivatives import backward_kernels

    npu_only = {base(k) for ks in backward_kernels(torch.__version__).values() for k in ks}
    profiled = {base(e.name) for e in events}
    assert sorted(traced - profiled - npu_only) == []


def test_inference_entry(adapted):
    tr = _trace(FIX / "tiny_infer.py", adapted)
    assert [c.op for c in tr.calls] == ["aten::as_strided", "aten::addmm", "aten::tanh"]
    assert {c.phase for c in tr.calls} == {"forward"}
    assert "inference-only entry: the step is one forward pass" in tr.notes


def test_missing_ops_are_recorded_from_the_fallback():
    # A target that adapts almost nothing: every kernel comes from the fallback, the
    # step still completes, and composites decompose as they would on that target.
    tr = trace_torch(FIX / "tiny_mlp.py", adapted={"aten::empty.memory_format"})
    ops = {c.op for c in tr.calls}
    # structured ops reach the backend as their out= variant (CompositeExplicitAutograd-
    # NonFunctional kernel), as on a real backend that only registers `addmm.out`
    assert {"aten::addmm.out", "aten::mm.out"} <= ops
    assert "aten::addmm" not in ops
    # no foreach kernels either: SGD's _foreach_add_ takes its slow composite path
    assert ("aten::add.out", "optimizer") in {(c.op, c.phase) for c in tr.calls}
    assert not tr.partial


def test_steps_and_phases(adapted):
    tr = _trace(FIX / "tiny_mlp.py", adapted, steps=2)
    assert {c.step for c in tr.calls} == {1, 2}
    first = [(c.op, c.phase) for c in tr.calls if c.step == 1]
    second = [(c.op, c.phase) for c in tr.calls if c.step == 2]
    assert first == second
    assert ("aten::ones_like", "backward") in first


def test_script_mode_and_partial_trace(adapted):
    tr = _trace(Script(FIX / "script_train.py", ["-c", "cfg.yml"]), adapted, steps=2)
    assert not tr.partial and tr.steps == 2
    assert {c.step for c in tr.calls if c.phase == "optimizer"} == {1, 2}
    assert "optimizer Adam: foreach=True (npu default)" in tr.notes

    tr = _trace(Script(FIX / "script_fails_in_backward.py"), adapted, steps=3)
    assert tr.partial
    assert tr.error == ("tests/fixtures/models/script_fails_in_backward.py: step 2 of the "
                        "script raised ValueError: bad batch at call 2") or \
        tr.error.endswith("script_fails_in_backward.py: step 2 of the script raised "
                          "ValueError: bad batch at call 2")
    assert {c.step for c in tr.calls} == {0, 1, 2}  # 0: setup (nn.Linear's init)
    assert {c.step for c in tr.calls if c.phase == "setup"} == {0}
    assert any(c.op == "aten::_foreach_add_.List" for c in tr.calls)


def test_broken_model_raises_model_error(adapted):
    with pytest.raises(ModelError, match="build\\(\\) raised ZeroDivisionError"):
        _trace(FIX / "broken_build_raises.py", adapted)
    with pytest.raises(ModelError, match="unknown mode 'fast'"):
        _trace(FIX / "tiny_mlp.py", adapted, mode="fast")


def test_trace_is_deterministic(adapted, real_trace):
    # a: the module's trace of the model (made by an earlier test when run in order);
    # b: a second, separate trace in the same process
    a = real_trace(ROOT / "examples" / "torch_transformer.py")
    b = _trace(ROOT / "examples" / "torch_transformer.py", adapted)
    assert a is not b
    assert a.calls == b.calls and a.notes == b.notes and a.cpu_only_ops == b.cpu_only_ops


@pytest.mark.parametrize("mode", ["real", "meta"])
def test_non_reentrant_checkpoint_recomputes_in_backward(mode):
    """torch.utils.checkpoint(use_reentrant=False) builds `torch.amp.autocast("npu")` for
    each recomputation in backward; torch requires the device module's
    `get_amp_supported_dtype` for that, and the error on the autograd engine's device
    thread aborted the whole process (std::terminate), so the trace runs in a child.
    The recomputation stops early by raising inside `block`'s forward: the module stack
    must still pop it, or every later call (the clipping) is put in `block`'s forward."""
    import json
    import subprocess
    import sys

    code = ("import json, sys\n"
            "from analyzer.trace.torch.tracer import trace_torch\n"
            "from tests.analyzer import npu_adapted\n"
            "tr = trace_torch(sys.argv[1], adapted=set(npu_adapted.adapted_ops()), "
            "mode=sys.argv[2])\n"
            "print(json.dumps([[c.op, c.phase, c.module] for c in tr.calls]))\n")
    proc = subprocess.run([sys.executable, "-c", code,
                           str(FIX / "checkpoint_nonreentrant.py"), mode],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = json.loads(proc.stdout.splitlines()[-1])
    phases = Counter((op, phase) for op, phase, _ in calls)
    # the checkpointed block (addmm, tanh) runs in forward and again in backward; the
    # uncheckpointed `b` runs its addmm in forward only
    assert phases[("aten::tanh", "forward")] == phases[("aten::tanh", "backward")] == 1
    assert phases[("aten::addmm", "forward")] == 2 and phases[("aten::addmm", "backward")] == 1
    assert phases[("aten::tanh_backward", "backward")] == 1
    # clip_grad_norm_ after backward: phase other, no module
    clip = [(phase, module) for op, phase, module in calls
            if op.startswith("aten::_foreach_norm")]
    assert clip == [("other", "")]


def test_autocast_on_npu_stops_with_what_is_missing(adapted, tmp_path):
    """torch.autocast("npu") needs torch_npu's per-op cast policy, which the emulator does
    not have: the step stops at the first op inside it with a one-line reason, and the
    calls before it are kept (a partial trace), instead of torch's dispatch error."""
    model = tmp_path / "amp_model.py"
    model.write_text(
        "import torch\n"
        "from torch import nn\n\n\n"
        "def build():\n"
        "    model = nn.Linear(4, 2)\n"
        "    x = torch.randn(2, 4)\n\n"
        "    def step():\n"
        "        h = torch.tanh(x.to(model.weight.device))\n"
        "        with torch.autocast('npu', dtype=torch.float16):\n"
        "            model(h).sum().backward()\n\n"
        "    return model, (x,), step\n")
    tr = _trace(model, adapted)
    assert tr.partial
    assert "raised NotImplementedError: torch.autocast on the npu device is not emulated " \
        "(reached by aten::linear)" in tr.error
    assert "aten::tanh" in {c.op for c in tr.calls}


def test_meta_mode_runs_ops_without_a_meta_kernel_on_stand_ins(adapted, tmp_path):
    """Ops whose output size depends on values (`nonzero`, `masked_select`: DeBERTa-v2's
    relative positions, wav2vec2's CTC lengths) have no meta kernel: meta mode runs them
    on CPU on ones of their inputs' shapes (every element selected) and goes on, so the
    backward and optimizer are traced as in real mode, with a note."""
    model = tmp_path / "select_model.py"
    model.write_text(
        "import torch\n"
        "from torch import nn\n\n\n"
        "def build():\n"
        "    torch.manual_seed(0)\n"
        "    model = nn.Linear(4, 4)\n"
        "    x = torch.ones(3, 4)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n"
        "    def step():\n"
        "        opt.zero_grad()\n"
        "        h = model(x)\n"
        "        idx = torch.nonzero(x[:, 0] > 0).squeeze(1)\n"
        "        picked = h.index_select(0, idx)\n"
        "        kept = torch.masked_select(h, x > 0)\n"
        "        (picked.sum() + kept.sum()).backward()\n"
        "        opt.step()\n\n"
        "    return model, (x,), step\n")
    real = _trace(model, adapted, mode="real")
    meta = _trace(model, adapted, mode="meta")
    assert not meta.partial, meta.error
    assert Counter((c.op, c.phase) for c in meta.calls) == \
        Counter((c.op, c.phase) for c in real.calls)
    # every element of x is selected, so the stand-ins give the real sizes here
    assert [(t.dtype, t.shape) for c in meta.calls for t in c.outputs] == \
        [(t.dtype, t.shape) for c in real.calls for t in c.outputs]
    assert any(n.startswith("meta mode: ops without a meta kernel ran on CPU") and
               "aten::masked_select x1" in n and "aten::nonzero x1" in n for n in meta.notes)
