"""Errors between two statistics records that stay meaningful near zero.

`stat_error` is norm-relative: the difference of the L2 norms over the norm, and the
differences of mean, max and min over the RMS (norm / sqrt(numel)) of side A, so a mean of
1e-8 on a LayerNorm output does not blow up the way msprobe's MeanRelativeErr does.
The guide's criterion ("mean within 1%, absolute or relative") is `mean_within`.
"""
from __future__ import annotations

import math

from analyzer.align.stats import as_float, numel

TINY = 1e-30
# unit roundoff of each dtype: the smallest noise floor a comparison may assume
EPS = {"float64": 2.2e-16, "float32": 1.19e-7, "bfloat16": 7.8e-3, "float16": 9.8e-4}
# how many times its own float64 error a module may show before it fails
K = {"float64": 2.0, "float32": 2.0, "bfloat16": 3.0, "float16": 3.0}
MEAN_CRITERION = 0.01  # module forward/backward mean within 1% (absolute or relative)
LOSS_STEP_CRITERION = 0.05  # single step loss within 5%
LOSS_CURVE_CRITERION = 0.02  # multi-step mean relative error under 2%


def short_dtype(dtype: str | None) -> str:
    return (dtype or "").replace("torch.", "").replace("paddle.", "")


def stat_error(a: dict | None, b: dict | None) -> float | None:
    """max(|dNorm|/Norm, |dMean|/RMS, |dMax|/RMS, |dMin|/RMS); inf for shape/NaN/Inf mismatches;
    None when either side is missing or is not a tensor."""
    if not isinstance(a, dict) or not isinstance(b, dict) or "Norm" not in a or "Norm" not in b:
        return None
    if list(a.get("shape") or []) != list(b.get("shape") or []):
        return math.inf
    if int(a.get("NanCount", 0) or 0) != int(b.get("NanCount", 0) or 0) or \
            int(a.get("InfCount", 0) or 0) != int(b.get("InfCount", 0) or 0):
        return math.inf
    na, nb = as_float(a.get("Norm")), as_float(b.get("Norm"))
    if math.isnan(na) and math.isnan(nb):
        return 0.0
    if not (math.isfinite(na) and math.isfinite(nb)):
        return math.inf if na != nb else 0.0
    n = max(numel(a), 1)
    rms = max(na / math.sqrt(n), TINY)
    errs = [abs(na - nb) / max(na, TINY)]
    for k in ("Mean", "Max", "Min"):
        x, y = as_float(a.get(k)), as_float(b.get(k))
        if math.isfinite(x) and math.isfinite(y):
            errs.append(abs(x - y) / rms)
        elif not (math.isnan(x) and math.isnan(y)) and x != y:
            errs.append(math.inf)
    return max(errs)


def mean_within(a: dict | None, b: dict | None, tol: float = MEAN_CRITERION) -> bool | None:
    if not isinstance(a, dict) or not isinstance(b, dict) or "Mean" not in a:
        return None
    x, y = as_float(a.get("Mean")), as_float(b.get("Mean"))
    if not (math.isfinite(x) and math.isfinite(y)):
        return (math.isnan(x) and math.isnan(y)) or x == y
    d = abs(x - y)
    return d <= tol or d <= tol * abs(x)


def worst(values) -> float | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def list_error(xs: list, ys: list) -> float | None:
    """Worst stat_error over two lists of records matched by position."""
    if not isinstance(xs, list) or not isinstance(ys, list):
        return None
    if len([x for x in xs if isinstance(x, dict) and "Norm" in x]) != \
            len([y for y in ys if isinstance(y, dict) and "Norm" in y]):
        return math.inf
    return worst(stat_error(x, y) for x, y in zip(xs, ys))


def list_mean_within(xs: list, ys: list) -> bool | None:
    if not isinstance(xs, list) or not isinstance(ys, list):
        return None
    res = [mean_within(x, y) for x, y in zip(xs, ys)]
    res = [r for r in res if r is not None]
    return all(res) if res else None


def dtype_of(records: list) -> str | None:
    for r in records or []:
        if isinstance(r, dict) and r.get("dtype") and "Norm" in r:
            return short_dtype(r["dtype"])
    return None


def loss_errors(a: list, b: list) -> dict:
    """Per-step relative loss differences and the multi-step mean relative error."""
    pairs = [(x, y) for x, y in zip(a or [], b or []) if x is not None and y is not None]
    rel = [abs(x - y) / max(abs(x), TINY) for x, y in pairs]
    out = {"steps": len(pairs), "relative": rel,
           "step0_within_5pct": (rel[0] <= LOSS_STEP_CRITERION) if rel else None,
           "mean_relative_error": (sum(rel) / len(rel)) if rel else None}
    out["mean_within_2pct"] = (out["mean_relative_error"] < LOSS_CURVE_CRITERION) if rel else None
    return out
