"""Inputs, CPU reference and tolerance for an opgen single-op test of one phi kernel.
Copied verbatim next to the generated test; imports only paddle and numpy.

The generated test carries SPEC, the op's signature from Paddle's op YAML (the
`paddle._C_ops` function, its args in YAML order with types, defaults and which tensors
are optional, its outputs, its InferMeta function). From it:

- `cases(spec, dtype)`: inputs the op's own InferMeta accepts. Every tensor arg gets a
  shape from a few candidates (the main shape, a 1-element tensor, an int64 index
  vector; tensor lists hold two main-shaped tensors; optional tensors start absent) and
  attributes their YAML default (opgen fills a missing default from the same-named
  attribute of other Paddle ops, or from a reviewed test value). Assignments are tried
  in order of preference (most tensors main-shaped first); each one is checked by
  running the op on the CPU, which runs InferMeta and the CPU kernel. The first few
  that pass are the cases.
- `reference(spec, case)`: the CPU kernel's result, in float32 from the very same
  (rounded) inputs for float16/bfloat16. For a grad kernel (`spec["backward"]`), the
  forward op runs and `paddle.grad` gives the gradients the grad kernel computes.
- `compare(expected, got, dtype)`: the single-op criterion (mean absolute error vs the
  CPU): float32 1e-4; float16/bfloat16 1e-4 plus one ulp of the reference's mean
  magnitude (a correctly rounded result is up to half an ulp away). Non-floating outputs
  must be equal.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
CRITERION = 1e-4
MAIN_SHAPES = ((2, 3, 8, 8), (4, 8))
MAX_TRIES = 256


class NoReference(RuntimeError):
    """No CPU reference: the op is not in Paddle's op YAML or has no CPU kernel."""


def has_cpu_kernel(kernel: str) -> bool:
    paddle = _paddle()
    reg = paddle.base.core._get_registered_phi_kernels("function")
    return any("CPU" in str(k) for k in reg.get(kernel, ()))


@dataclass
class Case:
    values: list          # per YAML arg: numpy array, list of arrays, None, or attribute
    source: str = ""


def _choices(arg, main):
    t = arg["type"]
    if t == "Tensor[]":
        return [("list", [np.random.RandomState(1).uniform(-1, 1, main).astype("float32")
                          for _ in range(2)])]
    if not t.startswith("Tensor"):
        return [("attr", arg["value"])]
    rs = np.random.RandomState(len(arg["name"]))
    # the op's first tensor spans [-1, 1]; the others are positive (second moments,
    # variances, scales: a negative one makes a correct kernel return NaN)
    low = -1.0 if arg.get("first") else 0.1
    out = [("main", rs.uniform(low, 1, main).astype("float32")),
           ("one", rs.uniform(0.1, 0.9, (1,)).astype("float32")),
           ("index", rs.randint(0, min(main), (3,)).astype("int64"))]
    if arg.get("optional"):
        out.insert(0, ("absent", None))
    return out


def _marked(spec):
    """The args, the first tensor marked `first`."""
    first = next((i for i, a in enumerate(spec["args"]) if a["type"].startswith("Tensor")), -1)
    return [dict(a, first=(i == first)) for i, a in enumerate(spec["args"])]


_COST = {"main": 0, "list": 0, "attr": 0, "absent": 0, "one": 1, "index": 2}


def candidates(spec, main):
    """(shape, dtype) assignments to try for one main shape, most main-shaped first."""
    per_arg = [_choices(a, main) for a in _marked(spec)]
    combos = sorted(itertools.product(*per_arg), key=lambda c: sum(_COST[k] for k, _ in c))
    first = next((i for i, a in enumerate(spec["args"]) if a["type"].startswith("Tensor")), None)
    for c in combos[:MAX_TRIES]:
        if first is not None and c[first][0] not in ("main", "list"):
            continue  # the op's first tensor keeps the main shape and the tested dtype
        yield [v for _, v in c]


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _mentioned(message: str, spec) -> list[int]:
    """Tensor args an InferMeta error names, in the order it names them: identifiers
    compared without case and underscores, so `beta1_pow's size`, `LearningRate` (the
    fluid name) and `param_dims` all count."""
    by_norm = {_norm(a["name"]): i for i, a in enumerate(spec["args"])
               if a["type"] == "Tensor"}
    hits = []
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9_]*", message):
        n = _norm(tok)
        for cand in (n, re.sub(r"(out)?(dims?|shape|size|numel)?$", "", n)):
            if cand in by_norm and by_norm[cand] not in hits:
                hits.append(by_norm[cand])
    return hits


def repaired(spec, main, run, steps: int = 48):
    """Error-guided search: start from every tensor main-shaped (optional ones absent);
    while the CPU run fails, move the first tensor the error names to its next shape
    choice. Returns the values that ran, or None."""
    per_arg = [_choices(a, main) for a in _marked(spec)]
    pos = [0] * len(per_arg)
    for _ in range(steps):
        values = [c[p][1] for c, p in zip(per_arg, pos)]
        err = run(values)
        if err is None:
            return values
        named = [i for i in _mentioned(err, spec) if pos[i] + 1 < len(per_arg[i])]
        if not named:
            return None
        pos[named[0]] += 1
    return None


def _paddle():
    import paddle
    return paddle


def _to_tensor(value, dtype, place, grad):
    paddle = _paddle()
    if isinstance(value, np.ndarray):
        t = paddle.to_tensor(value, place=place)
        if t.dtype == paddle.float32 and dtype != "float32":
            t = t.astype(dtype)
        if grad and t.dtype in (paddle.float32, paddle.float16, paddle.bfloat16):
            t.stop_gradient = False
        return t
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [_to_tensor(v, dtype, place, grad) for v in value]
    return value


def call(spec, case: Case, dtype: str, place):
    """Run the op (and, for a grad kernel, its backward) on `place`."""
    paddle = _paddle()
    backward = spec.get("backward", False)
    args = [_to_tensor(v, dtype, place, backward) for v in case.values]
    fn = getattr(paddle._C_ops, spec["api"])
    out = fn(*args)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if not backward:
        return [o for o in outs if o is not None]
    flat = [a for v in args for a in (v if isinstance(v, list) else [v])]
    inputs = [a for a in flat if isinstance(a, paddle.Tensor) and not a.stop_gradient]
    grads = paddle.grad([outs[0]], inputs, [paddle.ones_like(outs[0])], allow_unused=True)
    return [g for g in grads if g is not None]


def cases(spec, dtype: str = "float32", limit: int = 3) -> list[Case]:
    """Up to `limit` input sets the op's InferMeta and CPU kernel accept (see module doc)."""
    if spec is None:
        raise NoReference("Paddle's op YAML has no op that runs this kernel: no inputs, "
                          "no CPU reference")
    if not has_cpu_kernel(spec["kernel"]):
        raise NoReference(f"phi kernel {spec['kernel']} has no CPU registration: no CPU "
                          "reference")
    paddle = _paddle()
    paddle.set_device("cpu")
    found: list[Case] = []
    last = [""]

    def run(values):
        try:
            call(spec, Case(values), "float32", paddle.CPUPlace())
            return None
        except Exception as exc:  # InferMeta or the CPU kernel rejected these inputs
            text = " ".join(str(exc).split())
            last[0] = text[-300:] or type(exc).__name__
            return last[0]

    label = spec.get("infer_meta") or "InferMeta"
    for main in MAIN_SHAPES:
        values = repaired(spec, main, run)
        if values is not None:
            found.append(Case(values, f"shapes accepted by {label} (main {list(main)})"))
        for values in candidates(spec, main):
            if len(found) >= limit:
                return found
            if any(_same(values, c.values) for c in found) or run(values) is not None:
                continue
            found.append(Case(values, f"shapes accepted by {label} (main {list(main)})"))
    if not found:
        raise AssertionError(f"no inputs found that {spec['api']}'s InferMeta accepts; last "
                             f"error: {last[0]}")
    return found[:limit]


def _same(a, b) -> bool:
    def sig(v):
        if isinstance(v, np.ndarray):
            return ("t", v.shape, str(v.dtype))
        if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
            return ("l",) + tuple(sig(x) for x in v)
        return ("a", repr(v))
    return [sig(v) for v in a] == [sig(v) for v in b]


def _rounded(value, dtype):
    if dtype == "float32" or not isinstance(value, np.ndarray) or value.dtype != np.float32:
        if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            return [_rounded(v, dtype) for v in value]
        return value
    paddle = _paddle()
    return paddle.to_tensor(value).astype(dtype).astype("float32").numpy()


def reference(spec, case: Case, dtype: str = "float32"):
    """CPU outputs (numpy, float32 for floating outputs) from the inputs rounded to dtype."""
    paddle = _paddle()
    paddle.set_device("cpu")
    rounded = Case([_rounded(v, dtype) for v in case.values], case.source)
    return [o.numpy() for o in call(spec, rounded, "float32", paddle.CPUPlace())]


def tolerance(dtype: str, expected: np.ndarray) -> float:
    tol = CRITERION
    if dtype in EPS and expected.size:
        tol += EPS[dtype] * float(np.abs(expected.astype(np.float64)).mean())
    return tol


def compare(expected, got, dtype: str) -> list[str]:
    """`got`: paddle tensors (any place) or arrays. Raises AssertionError naming every
    output outside the tolerance; returns one line per output."""
    if len(expected) != len(got):
        raise AssertionError(f"{len(got)} outputs, the CPU reference has {len(expected)}")
    lines, bad = [], []
    for i, (e, g) in enumerate(zip(expected, got)):
        g = g if isinstance(g, np.ndarray) else g.astype("float32").numpy() \
            if str(g.dtype).endswith(("float16", "bfloat16")) else g.numpy()
        if g.shape != e.shape:
            ok = False
            lines.append(f"output {i}: shape {list(g.shape)} vs {list(e.shape)}")
        elif np.issubdtype(e.dtype, np.floating):
            e64, g64 = e.astype(np.float64), g.astype(np.float64)
            finite = bool((np.isfinite(e64) == np.isfinite(g64)).all())
            both = np.isfinite(e64) & np.isfinite(g64)
            err = float(np.abs(e64 - g64)[both].mean()) if both.any() else 0.0
            tol = tolerance(dtype, e)
            ok = finite and err <= tol
            lines.append(f"output {i}: mean abs error {err:.3g} (tolerance {tol:.3g})"
                         + ("" if finite else "; non-finite values differ"))
        else:
            ok = bool(np.array_equal(e, g))
            lines.append(f"output {i}: {'equal' if ok else 'differs'} ({e.dtype})")
        if not ok:
            bad.append(lines[-1])
    if bad:
        raise AssertionError("; ".join(bad))
    return lines
