"""Argument-name synonyms learned from PaddleCustomDevice's own aclnn call sites (paddle).

Upstream's `EXEC_NPU_CMD(aclnnXxx, dev_ctx, a1, a2, ...)` calls
(`opdb/sources/paddle/npu_aclnn_call_args.develop.jsonl`, extracted at `77090b64`) are
aligned with the API's parameter list (`opdb/sources/cann/aclnn_apis.jsonl`). Where an
argument is one of the enclosing function's parameters passed as it is (`x`, `*out`,
`w.get()`), upstream says: aclnn's `<param>` is Paddle's `<name>`. The pairs whose names
differ (after `argmap.norm_param`) are the synonyms: aclnnNLLLoss `target` <- `labels`
(nll_loss_kernel.cc's name; Paddle 3.3.1's phi kernel says `label`), aclnnSmoothL1Loss
`beta` <- `delta`, ...

Measured, not applied: `measure()` is the leave-one-file-out check over upstream's own
registered kernels, and the figures (docs/opgen.md "Batch G") are too poor for a rule
`argmap.map_args` would apply: upstream converts most values before the call (a local
`phi::Scalar`, an enum map, a cast copy), so a same-value synonym is rare, and among the
tensors it proposes helper scratch values. `measure_affix()` and `measure_paconvert()`
ask the same question of a shared prefix/suffix rule and of PaConvert's renamings (the
source `argmap` adopted, `opdb.arg_synonyms`). `propose()` gives the best-supported learned
name among candidates (none on a tie); `min_support` distinct upstream functions must
show a pair.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALLS = ROOT / "opdb" / "sources" / "paddle" / "npu_aclnn_call_args.develop.jsonl"
APIS = ROOT / "opdb" / "sources" / "cann" / "aclnn_apis.jsonl"
# how many distinct upstream functions must pass the pair (measured in docs/opgen.md)
MIN_SUPPORT = 1
_DIRECT = re.compile(r"^[*&]?\s*([A-Za-z_]\w*)(?:\s*(?:\.|->)\s*(?:get|get_ptr)\s*\(\s*\))?$")


@dataclass(frozen=True)
class Fed:
    """One aclnn parameter at one upstream call site and what upstream passed."""
    api: str
    param: str          # aclnn parameter name as declared
    arg: str            # the argument as spelled upstream
    direct: str         # the enclosing function's parameter passed as it is, else ""
    params: tuple[str, ...]  # the enclosing function's parameter names
    path: str
    function: str
    line: int
    registered: bool
    derived: str = ""   # the one function parameter a local argument is computed from


@lru_cache(maxsize=1)
def _api_params() -> dict[str, tuple[str, ...]]:
    out = {}
    for line in APIS.read_text().splitlines():
        r = json.loads(line)
        out[r["api"]] = tuple(p["name"] for p in r["params"])
    return out


@lru_cache(maxsize=1)
def fed_params() -> tuple[Fed, ...]:
    """Every aclnn parameter of every upstream call whose arity matches opdb's signature."""
    apis = _api_params()
    out = []
    for line in CALLS.read_text().splitlines():
        r = json.loads(line)
        names = apis.get(r["api"])
        if names is None or len(names) != len(r["args"]):
            continue
        params = tuple(p for p in r["params"] if p != "dev_ctx")
        for name, arg, src in zip(names, r["args"], r.get("derived") or [[]] * len(names)):
            m = _DIRECT.match(arg)
            direct = m.group(1) if m and m.group(1) in params else ""
            out.append(Fed(r["api"], name, arg, direct, params, r["path"], r["function"],
                           r["line"], r["registered"], src[0] if len(src) == 1 else ""))
    return tuple(out)


def _differs(aclnn_param: str, phi: str) -> bool:
    from codegen.argmap import name_keys
    return not (name_keys(aclnn_param) & name_keys(phi))


def learn(exclude_path: str = "", derived: bool = False
          ) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """{normalized aclnn name: {phi name: {(path, function), ...}}} for pairs whose names
    differ, from every call site outside `exclude_path`; with `derived`, also a local
    computed from one parameter (`phi::Scalar p = porder;`) counts as that parameter."""
    from codegen.argmap import norm_param
    table: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for f in fed_params():
        src = f.direct or (f.derived if derived else "")
        if src and f.path != exclude_path and _differs(f.param, src):
            table[norm_param(f.param)][src].add((f.path, f.function))
    return table


@lru_cache(maxsize=1)
def synonyms(min_support: int = MIN_SUPPORT) -> dict[str, tuple[tuple[str, int], ...]]:
    """{normalized aclnn name: ((phi name, support), ...)}, best supported first."""
    out = {}
    for key, names in learn().items():
        kept = sorted(((n, len(s)) for n, s in names.items() if len(s) >= min_support),
                      key=lambda t: (-t[1], t[0]))
        if kept:
            out[key] = tuple(kept)
    return out


def propose(aclnn_param: str, candidates: list[str], table=None) -> str:
    """The one candidate phi name learned for `aclnn_param`, or "" (none, or a tie)."""
    from codegen.argmap import norm_param
    table = synonyms() if table is None else table
    learned = [(n, s) for n, s in table.get(norm_param(aclnn_param), ()) if n in candidates]
    if not learned or (len(learned) > 1 and learned[0][1] == learned[1][1]):
        return ""
    return learned[0][0]


def _types() -> dict[tuple[str, str], str]:
    out = {}
    for line in APIS.read_text().splitlines():
        r = json.loads(line)
        for p in r["params"]:
            out[(r["api"], p["name"])] = p["type"]
    return out


def measure(min_support: int = MIN_SUPPORT, derived: bool = False
            ) -> dict[tuple[str, str], list[Fed]]:
    """Leave-one-file-out over upstream's registered kernels. Each aclnn parameter at a
    call site that name or reviewed-alias matching cannot feed (no parameter of the
    enclosing function answers to its name or an alias of it: the class-1 question) gets
    the synonym learned from the other files, and is counted by (kind, outcome): kind
    `tensor` or `value`; outcome `right` (upstream passes the proposed parameter),
    `wrong` (upstream passes something else: another parameter, a local, a constant),
    `missed` (upstream passes a parameter, no synonym proposed one), `none` (upstream
    passes a local or a constant and no synonym proposed anything). With `derived`, a
    local computed from one parameter counts as that parameter, when learning and when
    judging."""
    from codegen.argmap import _ALIASES, name_keys

    def covered(param: str, params: tuple[str, ...]) -> bool:
        wants = name_keys(param)
        for p in params:
            have = name_keys(p)
            if wants & have or any(h in _ALIASES.get(w, ()) for w in wants for h in have):
                return True
        return False

    types = _types()
    tables: dict[str, dict] = {}
    res: dict[tuple[str, str], list[Fed]] = {}
    for f in fed_params():
        if not f.registered or covered(f.param, f.params):
            continue
        if f.path not in tables:
            tables[f.path] = {k: tuple(sorted(((n, len(s)) for n, s in v.items()
                                               if len(s) >= min_support),
                                              key=lambda x: (-x[1], x[0])))
                              for k, v in learn(f.path, derived).items()}
        got = propose(f.param, list(f.params), tables[f.path])
        kind = "tensor" if "Tensor" in types.get((f.api, f.param), "") else "value"
        truth = f.direct or (f.derived if derived else "")
        outcome = ("right" if got == truth else "wrong") if got else (
            "missed" if truth else "none")
        res.setdefault((kind, outcome), []).append(f)
    return dict(sorted(res.items()))


def measure_affix() -> dict[tuple[str, str], list[Fed]]:
    """The same question for a rule without learning: the aclnn name and one function
    parameter name share a `_`-separated prefix or suffix (`fillValue` / `value`,
    `k` / `k_scalar`, `starts` / `starts_array`). Judged against the parameter upstream
    passes as it is or computes the argument from (`Fed.derived`); outcome `none` when
    not exactly one parameter fits."""
    from codegen.argmap import norm_param

    types = _types()
    res: dict[tuple[str, str], list[Fed]] = {}
    for f in fed_params():
        if not _unfed_by_name(f):
            continue
        a = norm_param(f.param)
        fits = [p for p in f.params if len(p) > 1 and (
            a.endswith("_" + p) or p.startswith(a + "_") or a.startswith(p + "_"))]
        kind = "tensor" if "Tensor" in types.get((f.api, f.param), "") else "value"
        outcome = "none" if len(fits) != 1 else (
            "right" if fits[0] == (f.direct or f.derived) else "wrong")
        res.setdefault((kind, outcome), []).append(f)
    return dict(sorted(res.items()))


def _unfed_by_name(f: Fed) -> bool:
    """A registered kernel's aclnn parameter that no function parameter feeds by name or
    reviewed alias: the ones a synonym source is asked about."""
    from codegen.argmap import _ALIASES, name_keys

    wants = name_keys(f.param)
    return f.registered and not any(
        wants & name_keys(p) or any(h in _ALIASES.get(w, ()) for w in wants
                                    for h in name_keys(p)) for p in f.params)


def measure_paconvert() -> dict[tuple[str, str], list[Fed]]:
    """The same question for PaConvert's torch -> paddle keyword renamings
    (`opdb.arg_synonyms`, adopted as `argmap`'s `synonym` step): the renaming of the aclnn
    name (ATen's) shown by the most APIs among the function's parameters, judged against the
    parameter upstream passes as it is or computes the argument from."""
    from opdb.arg_synonyms import load

    from codegen.argmap import norm_param

    table = load()
    types = _types()
    res: dict[tuple[str, str], list[Fed]] = {}
    for f in fed_params():
        if not _unfed_by_name(f):
            continue
        names = table.get(norm_param(f.param), {})
        fits = sorted((p for p in f.params if p in names), key=lambda p: -names[p])
        kind = "tensor" if "Tensor" in types.get((f.api, f.param), "") else "value"
        truth = f.direct or f.derived
        outcome = ("right" if fits[0] == truth else "wrong") if fits else (
            "missed" if truth else "none")
        res.setdefault((kind, outcome), []).append(f)
    return dict(sorted(res.items()))
