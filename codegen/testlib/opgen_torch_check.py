"""Inputs, CPU reference and tolerance for an opgen single-op test of one ATen (or
torch_npu) overload. Copied verbatim next to the generated test; imports only torch.

- `cases(qualname, overload, dtype)`: inputs from torch's own OpInfo samples
  (`torch.testing._internal.common_methods_invocations.op_db`): every OpInfo whose name
  is related to the op is run on its CPU samples under a TorchDispatchMode, and each call
  that reaches exactly this overload is recorded with its real arguments (so
  `nn.functional.conv2d` samples give `aten::convolution` inputs, and a backward op gets
  the arguments autograd passes it). Samples are made in float32 and their floating
  tensors cast to the tested dtype (torch.testing._internal needs `pip install expecttest`).
  Without an OpInfo that reaches the overload, the
  schema-guessed fallback inputs of the generated test are used (and say so).
- `reference(case)`: the CPU result, computed in float32 from the very same (rounded)
  inputs: the op's CPU kernel when it has one (or a composite one), else its
  decomposition from `torch._decomp`, then `torch._inductor.decomposition`.
- `compare(expected, got, dtype)`: the single-op precision criterion (mean absolute
  error against the CPU): float32 1e-4; float16/bfloat16 1e-4 plus one unit in the last
  place of the mean magnitude of the reference (see `tolerance`). Non-floating outputs
  must be equal.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch
from torch.utils._pytree import tree_flatten, tree_map

# machine epsilon of the low-precision dtypes: 2**-10 (float16), 2**-7 (bfloat16)
EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}
CRITERION = 1e-4  # single op vs CPU: mean absolute error (the porting teams' criterion)


class NoReference(RuntimeError):
    """The op has neither a CPU kernel nor a decomposition: no CPU reference exists."""


@dataclass
class Case:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    source: str = ""

    def bound(self, op) -> dict:
        """Every schema argument by name, defaults filled in (the opgen binding's `run`
        takes them all by name)."""
        out = {}
        for i, a in enumerate(op._schema.arguments):
            if i < len(self.args) and not a.kwarg_only:
                out[a.name] = self.args[i]
            elif a.name in self.kwargs:
                out[a.name] = self.kwargs[a.name]
            elif a.has_default_value():
                out[a.name] = a.default_value
            else:
                raise ValueError(f"{op.name()}: no value for argument `{a.name}`")
        return out

    def to(self, device) -> "Case":
        move = lambda x: x.to(device) if isinstance(x, torch.Tensor) else x  # noqa: E731
        return Case(tree_map(move, self.args), tree_map(move, self.kwargs), self.source)


def overload(qualname: str, name: str) -> "torch._ops.OpOverload":
    """`aten::add`, `Tensor` -> torch.ops.aten.add.Tensor (`default` for no overload)."""
    ns, _, base = qualname.partition("::")
    return getattr(getattr(getattr(torch.ops, ns), base), name or "default")


def has_cpu_kernel(op) -> bool:
    """A CPU kernel, or a composite one that runs on the CPU."""
    name = op.name()
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(name, k) for k in
               ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd",
                "CompositeExplicitAutogradNonFunctional"))


def decomposition(op):
    """(callable, where) from torch._decomp, then torch._inductor.decomposition."""
    from torch._decomp import decomposition_table
    if op in decomposition_table:
        return decomposition_table[op], "torch._decomp"
    try:
        from torch._inductor.decomposition import decompositions
    except Exception:  # inductor unavailable: only the first source
        decompositions = {}
    if op in decompositions:
        return decompositions[op], "torch._inductor.decomposition"
    return None, ""


def reference_kind(op) -> str:
    """How `reference` computes: `cpu kernel`, `decomposition (<where>)` or `none`."""
    if has_cpu_kernel(op):
        return "cpu kernel"
    fn, where = decomposition(op)
    return f"decomposition ({where})" if fn is not None else "none"


def _upcast(x):
    if isinstance(x, torch.Tensor) and x.dtype in EPS:
        return x.float()
    return x


def reference(op, case: Case):
    """The CPU result of `op` on `case` in float32 (low-precision inputs upcast)."""
    args = tree_map(_upcast, case.to("cpu").args)
    kwargs = tree_map(_upcast, case.to("cpu").kwargs)
    if has_cpu_kernel(op):
        return op(*args, **kwargs)
    fn, _ = decomposition(op)
    if fn is None:
        raise NoReference(f"{op.name()} has no CPU kernel and no decomposition in torch._decomp "
                          "or torch._inductor.decomposition: no CPU reference")
    with _Decompose():  # ops the decomposition calls may lack a CPU kernel too
        return fn(*args, **kwargs)


class _Decompose(torch.utils._python_dispatch.TorchDispatchMode):
    """Runs every op without a CPU kernel through its decomposition, recursively."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not has_cpu_kernel(func):
            fn, _ = decomposition(func)
            if fn is not None:
                return fn(*args, **kwargs)
        return func(*args, **kwargs)


def tolerance(dtype: torch.dtype, expected: torch.Tensor) -> float:
    """Mean absolute error allowed for one output. float32: the criterion (1e-4).
    float16/bfloat16: even a correctly rounded NPU result is up to half an ulp away from
    the float32 reference, so one ulp of the reference's mean magnitude
    (eps * mean|expected|) is added to the criterion."""
    tol = CRITERION
    if dtype in EPS and expected.numel():
        tol += EPS[dtype] * expected.detach().float().abs().mean().item()
    return tol


def compare(expected, got, dtype: torch.dtype) -> list[str]:
    """Check `got` (any device) against the CPU `expected`; returns one line per output
    and raises AssertionError naming every output outside the tolerance."""
    exp, _ = tree_flatten(expected)
    out, _ = tree_flatten(got)
    if len(exp) != len(out):
        raise AssertionError(f"{len(out)} outputs, the CPU reference has {len(exp)}")
    lines, bad = [], []
    for i, (e, g) in enumerate(zip(exp, out)):
        if not isinstance(e, torch.Tensor):
            ok = e == g
            lines.append(f"output {i}: {g!r} vs {e!r}")
        else:
            g = g.detach().cpu()
            if tuple(g.shape) != tuple(e.shape):
                ok = False
                lines.append(f"output {i}: shape {tuple(g.shape)} vs {tuple(e.shape)}")
            elif e.is_floating_point() or e.is_complex():
                diff = (g.to(torch.float64) - e.detach().to(torch.float64)).abs()
                finite = bool(torch.isfinite(g).eq(torch.isfinite(e)).all())
                both = torch.isfinite(e) & torch.isfinite(g)
                err = diff[both].mean().item() if bool(both.any()) else 0.0
                tol = tolerance(dtype, e)
                ok = finite and err <= tol
                lines.append(f"output {i}: mean abs error {err:.3g} (tolerance {tol:.3g})"
                             + ("" if finite else "; non-finite values differ"))
            else:
                ok = torch.equal(g.to(e.dtype), e)
                lines.append(f"output {i}: {'equal' if ok else 'differs'} ({e.dtype})")
        if not ok:
            bad.append(lines[-1])
    if bad:
        raise AssertionError("; ".join(bad))
    return lines


# ------------------------------------------------------------------ OpInfo samples

def _related(base: str) -> list[str]:
    """Names an OpInfo of this op may carry, best first: `native_layer_norm` ->
    layer_norm, `gelu_backward` -> gelu, `add_` -> add, `convolution` -> conv2d."""
    names = [base.rstrip("_")]
    for prefix in ("native_", "_"):
        names += [n[len(prefix):] for n in names if n.startswith(prefix)]
    for suffix in ("_backward", "_forward", "_out"):
        names += [n[: -len(suffix)] for n in names if n.endswith(suffix)]
    if "convolution" in names:
        names += ["conv2d", "conv1d", "conv3d", "conv_transpose2d"]
    return list(dict.fromkeys(names))


@functools.lru_cache(maxsize=None)
def _op_db():
    from torch.testing._internal.common_methods_invocations import op_db
    return tuple(op_db)


def opinfos(base: str) -> list:
    names = _related(base)
    rank = []
    for info in _op_db():
        short = info.name.rpartition(".")[2]
        hits = [names.index(n) for n in (short, info.aten_name, info.name) if n in names]
        if hits:
            rank.append((min(hits), len(rank), info))
    return [info for *_, info in sorted(rank, key=lambda r: r[:2])]


class _Capture(torch.utils._python_dispatch.TorchDispatchMode):
    def __init__(self, op):
        super().__init__()
        self.op, self.calls = op, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is self.op:
            keep = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa
            self.calls.append((tree_map(keep, args), tree_map(keep, kwargs)))
        return func(*args, **kwargs)


def _cast(x, dtype):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


def opinfo_cases(op, base: str, dtype: torch.dtype, limit: int = 6) -> list[Case]:
    """Up to `limit` argument sets of `op` recorded from OpInfo samples (see module doc)."""
    backward = base.endswith("_backward")
    inplace = base.endswith("_") and not base.endswith("__")
    found: list[Case] = []
    for info in opinfos(base):
        fn = info.inplace_variant if inplace else info.op
        if fn is None:
            continue
        if torch.float32 not in info.supported_dtypes("cpu"):
            continue
        try:
            samples = list(info.sample_inputs("cpu", torch.float32, requires_grad=backward))
        except Exception:  # a sample generator that needs what this build lacks
            continue
        for k, s in enumerate(samples):
            cap = _Capture(op)
            try:
                with cap:
                    first = s.input.clone() if inplace else s.input
                    res = fn(first, *s.args, **s.kwargs)
                    if backward:
                        outs = [t for t in tree_flatten(res)[0]
                                if isinstance(t, torch.Tensor) and t.requires_grad]
                        if outs:
                            torch.autograd.backward(outs, [torch.ones_like(t) for t in outs])
            except Exception:  # this sample does not run on the CPU build: next one
                continue
            for args, kwargs in cap.calls[:1]:
                found.append(Case(tree_map(lambda x: _cast(x, dtype), args),
                                  tree_map(lambda x: _cast(x, dtype), kwargs),
                                  f"OpInfo {info.name}{'.' + info.variant_test_name if info.variant_test_name else ''} sample {k}"))
            if len(found) >= limit:
                return found
    return found


def cases(qualname: str, overload_name: str, dtype: torch.dtype, fallback=None,
          limit: int = 6) -> list[Case]:
    """OpInfo-derived cases, else `fallback(dtype)` (the schema-guessed inputs)."""
    op = overload(qualname, overload_name)
    got = opinfo_cases(op, qualname.partition("::")[2], dtype, limit)
    if got:
        return got
    if fallback is None:
        return []
    args = fallback(dtype)
    return [Case(tuple(args), {}, "schema-guessed inputs (no OpInfo reaches this overload)")]
