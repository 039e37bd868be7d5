"""The generated single-op tests: the parts that need no NPU run here on the CPU, from
the very files opgen writes (standalone/tests/): OpInfo-derived torch inputs, InferMeta-
checked paddle inputs, the CPU reference (kernel or decomposition) and the tolerance
logic, which must fail on a wrong result. The NPU comparison itself skips (marker npu)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from codegen.api import prepare, write_tree


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def torch_project(db, tmp_path_factory):
    root = tmp_path_factory.mktemp("singleop_torch")
    out = write_tree(prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor",
                             layout="standalone").files, root / "add")
    return out / "standalone" / "tests"


@pytest.fixture(scope="module")
def tcheck(torch_project):
    return _load(torch_project / "opgen_torch_check.py", "opgen_torch_check")


@pytest.fixture(scope="module")
def paddle_project(db, tmp_path_factory):
    root = tmp_path_factory.mktemp("singleop_paddle")
    out = write_tree(prepare(db, "aclnnLayerNorm", "paddle", op="layer_norm",
                             layout="standalone").files, root / "ln")
    return out / "standalone" / "tests"


@pytest.fixture(scope="module")
def pcheck(paddle_project):
    return _load(paddle_project / "opgen_paddle_check.py", "opgen_paddle_check")


# (API, torch op, OpInfo the inputs must come from)
TORCH_OPS = [
    ("aclnnAdd", "aten::add.Tensor", "OpInfo add"),
    ("aclnnGelu", "aten::gelu", "OpInfo nn.functional.gelu"),
    ("aclnnLayerNorm", "aten::native_layer_norm", "OpInfo native_layer_norm"),
    ("aclnnCat", "aten::cat", "OpInfo cat"),
    ("aclnnConvolution", "aten::convolution", "OpInfo nn.functional.conv2d"),
]


@pytest.mark.parametrize("api,op,source", TORCH_OPS, ids=[t[1] for t in TORCH_OPS])
def test_torch_reference_path_on_cpu(db, tcheck, tmp_path, api, op, source):
    import torch
    files = prepare(db, api, "torch", op=op, layout="standalone").files
    test = next(v for k, v in files.items() if k.startswith("standalone/tests/test_"))
    ns = {"__file__": "generated/tests/test_op.py"}
    exec(compile(test.split("\ndef _module")[0], "generated", "exec"), ns)  # noqa: S102
    qual, ov = ns["QUALNAME"], ns["OVERLOAD"]
    assert ns["pytestmark"].name == "npu"
    op_ = tcheck.overload(qual, ov)
    assert tcheck.reference_kind(op_) == "cpu kernel"
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        cases = tcheck.cases(qual, ov, dtype, ns["fallback_inputs"], limit=2)
        assert cases and all(c.source.startswith(source) for c in cases), [c.source for c in cases]
        for c in cases:
            bound = c.bound(op_)
            assert list(bound) == [a.name for a in op_._schema.arguments]
            exp = tcheck.reference(op_, c)
            outs = [t for t in (exp if isinstance(exp, tuple) else (exp,))]
            assert all(bool(torch.isfinite(t).all()) for t in outs if t.is_floating_point())
            assert all(t.dtype != torch.float16 and t.dtype != torch.bfloat16 for t in outs)
            # the NPU side would give low-precision values: a correctly rounded result passes
            got = tuple(t.to(dtype) for t in outs) if isinstance(exp, tuple) else exp.to(dtype)
            tcheck.compare(exp, got, dtype)


def test_torch_tolerance_can_fail(tcheck):
    import torch
    exp = torch.linspace(-1, 1, 1000)
    tcheck.compare(exp, exp + 5e-5, torch.float32)
    with pytest.raises(AssertionError, match="mean abs error 0.0002"):
        tcheck.compare(exp, exp + 2e-4, torch.float32)
    with pytest.raises(AssertionError, match="shape"):
        tcheck.compare(exp, exp[:10], torch.float32)
    with pytest.raises(AssertionError, match="non-finite"):
        tcheck.compare(exp, torch.where(exp > 0.9, float("nan"), exp), torch.float32)
    # float16: one ulp of the mean magnitude (0.5 * 2**-10) on top of 1e-4
    tcheck.compare(exp, exp.half(), torch.float16)
    with pytest.raises(AssertionError):
        tcheck.compare(exp, (exp + 2e-3).half(), torch.float16)
    with pytest.raises(AssertionError, match="differs"):
        tcheck.compare(torch.arange(4), torch.tensor([0, 1, 2, 4]), torch.float32)


def test_torch_reference_by_decomposition(tcheck):
    """aten::_fused_dropout has no CPU kernel (CUDA only): the reference is torch._decomp's,
    computed in float32 from the float16 inputs (keep probability 1: every element kept)."""
    import torch
    op = tcheck.overload("aten::_fused_dropout", "")
    assert tcheck.reference_kind(op) == "decomposition (torch._decomp)"
    x = torch.randn(3, 4)
    out, mask = tcheck.reference(op, tcheck.Case((x.half(), 1.0)))
    assert out.dtype == torch.float32 and torch.equal(out, x.half().float())
    assert bool(mask.eq(1).all())
    tcheck.compare((out, mask), (out.half(), mask), torch.float16)


def test_torch_no_reference_is_said(tcheck):
    import torch
    op = torch.ops.aten.cudnn_convolution.default
    assert tcheck.reference_kind(op) == "none"
    with pytest.raises(tcheck.NoReference, match="no CPU kernel and no decomposition"):
        tcheck.reference(op, tcheck.Case((torch.zeros(1),)))


PADDLE_OPS = [("aclnnLayerNorm", "layer_norm", 2), ("aclnnConvolution", "conv2d", 1),
              ("aclnnAdd", "add", 1), ("Adam", None, 1)]


@pytest.mark.parametrize("api,op,n", PADDLE_OPS, ids=[p[0] for p in PADDLE_OPS])
def test_paddle_reference_path_on_cpu(db, pcheck, api, op, n):
    import numpy as np
    files = prepare(db, api, "paddle", op=op, layout="standalone").files
    test = next(v for k, v in files.items() if k.startswith("standalone/tests/test_"))
    ns = {"__file__": "generated/tests/test_op.py"}
    exec(compile(test.split("\ndef _module")[0], "generated", "exec"), ns)  # noqa: S102
    specs = ns["SPECS"]
    assert len(specs) == n
    for spec in specs:
        for dtype in ("float32", "float16"):
            cases = pcheck.cases(spec, dtype, limit=2)
            assert cases
            for c in cases:
                exp = pcheck.reference(spec, c, dtype)
                assert exp and all(np.isfinite(e).all() for e in exp if e.dtype.kind == "f")
                pcheck.compare(exp, exp, dtype)
                bad = [e + 1e-3 if e.dtype.kind == "f" else e for e in exp]
                with pytest.raises(AssertionError, match="mean abs error"):
                    pcheck.compare(exp, bad, "float32")


def test_paddle_inputs_follow_infermeta(pcheck, paddle_project):
    """layer_norm: optional scale/bias absent, attributes from the YAML; the grad kernel
    goes through the forward op; adamw's scalar tensors are found from InferMeta's errors."""
    from codegen.testspec import paddle_spec
    ns = {"__file__": "generated/tests/test_op.py"}
    text = (paddle_project / "test_layer_norm.py").read_text()
    exec(compile(text.split("\ndef _module")[0], "generated", "exec"), ns)  # noqa: S102
    fwd, grad = ns["SPECS"]
    assert (fwd["kernel"], fwd["backward"], grad["kernel"], grad["backward"]) == \
        ("layer_norm", False, "layer_norm_grad", True)
    c = pcheck.cases(fwd, "float32", limit=1)[0]
    assert c.values[1] is None and c.values[3:] == [1e-05, 1]
    spec = paddle_spec("adamw", "aclnnApplyAdamW")
    c = pcheck.cases(spec, "float32", limit=1)[0]
    shapes = {a["name"]: getattr(v, "shape", None) for a, v in zip(spec["args"], c.values)}
    assert shapes["learning_rate"] == shapes["beta1_pow"] == shapes["beta2_pow"] == (1,)
    assert shapes["param"] == shapes["moment1"] == shapes["moment2"]
    pool = paddle_spec("pool2d", "aclnnAvgPool2d")
    vals = {a["name"]: (a.get("value"), a.get("how")) for a in pool["args"]}
    assert vals["pooling_type"] == ("avg", "reviewed test value")
    assert vals["data_format"] == ("NCHW", "default of `data_format` in other Paddle ops")
    assert pcheck.cases(pool, "float32", limit=1)


def test_paddle_no_cpu_kernel_is_said(pcheck):
    from codegen.testspec import paddle_spec
    spec = paddle_spec("flash_attn", "aclnnFlashAttentionScore")
    with pytest.raises(pcheck.NoReference, match="no CPU registration"):
        pcheck.cases(spec, "float32")
    with pytest.raises(pcheck.NoReference, match="no op that runs this kernel"):
        pcheck.cases(None, "float32")


@pytest.mark.parametrize("which", ["torch", "paddle"])
def test_generated_file_skips_with_the_npu_reason(torch_project, paddle_project, which):
    d = torch_project if which == "torch" else paddle_project
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-rs", "-W", "ignore", str(d)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-2000:]
    assert "is not built in" in res.stdout and " skipped" in res.stdout
    assert "failed" not in res.stdout
