"""The aclnn API op-plugin runs a torch op on when its adapter keeps an older API only as
a fallback (`compat` of `opdb/sources/torch/op_plugin_aclnn_map.jsonl`, op-plugin
517f2e7d): `DO_COMPATIBILITY(aclnnUpsampleBilinear2dBackwardV2,
op_api::upsample_bilinear2d_backward_old(...))`, where the fallback is a helper of the
same file (the record's `helpers`) that runs aclnnUpsampleBilinear2dBackward. The guarded
API is the op's main route; the older one runs only on a CANN without it. So is a newer
version the adapter runs when `check_aclnn_kernel_available` finds its kernel, the API it
keeps under DO_COMPATIBILITY being the older one (HardSwishBackwardKernelNpuOpApi.cpp).
`main_route(op)` gives (API, evidence) or None. Facts only; nothing keyed on a name.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from opdb.op_plugin_map import records


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for r in records():
        helpers = set(r.get("helpers") or ())
        for c in r.get("compat") or ():
            fb = (c.get("fallback") or "").removeprefix("op_api::")
            apis = c.get("aclnn") or []
            if c.get("macro") == "DO_COMPATIBILITY" and fb in helpers and len(apis) == 1:
                where = (r.get("op_api_source_lines") or r.get("source_paths") or [""])[0]
                out.setdefault(r["op"], (apis[0], f"op-plugin {where}: DO_COMPATIBILITY("
                                                  f"{apis[0]}, {c['fallback']}(...))"))
                break
        if r["op"] in out:
            continue
        # the other shape: the adapter asks whether a newer version's kernel is there
        # (`check_aclnn_kernel_available("aclnnHardswishBackwardV2")`) and runs the API
        # it guards with DO_COMPATIBILITY only when it is not
        guarded = {a for c in r.get("compat") or () if c.get("macro") == "DO_COMPATIBILITY"
                   for a in c.get("aclnn") or ()}
        checked = [a for c in r.get("compat") or ()
                   if c.get("macro") == "check_aclnn_kernel_available"
                   for a in c.get("aclnn") or ()
                   if any(re.fullmatch(re.escape(g) + r"V\d+", a) for g in guarded)]
        if len(checked) == 1:
            where = (r.get("op_api_source_lines") or r.get("source_paths") or [""])[-1]
            out[r["op"]] = (checked[0], f"op-plugin {where}: check_aclnn_kernel_available("
                                        f"\"{checked[0]}\") before the older API")
    return out


@functools.lru_cache(maxsize=1)
def _recorded() -> frozenset[str]:
    return frozenset(r["op"] for r in records())


def family_main_routes(ops: list[str]) -> dict[str, tuple[str, str]]:
    """`main_route` of each op of one schema family (functional, `.out`, in-place); a
    member op-plugin has no adapter for (`hardswish_backward.out`, which upstream leaves
    unregistered and opgen adds) takes the route of the first member that has one, so
    that the members it adds compute what the functional does."""
    out = {o: hit for o in ops if (hit := main_route(o)) is not None}
    if out:
        first = next(iter(out.values()))
        for o in ops:
            if o not in out and o not in _recorded():
                out[o] = (first[0], first[1] + f"; {o} has no op-plugin adapter: the family's route")
    return out


def main_route(op: str) -> tuple[str, str] | None:
    """(aclnn API, evidence) of op-plugin's main route for `op` (`aten::name.overload`),
    when its adapter keeps another route only as that API's fallback; else None. The
    `compat` list is per adapter file, so for a file of several overloads
    (ForeachMaximumKernelNpuOpApi.cpp) it can name another overload's API: a caller takes
    it only as one of the versions of the API it renders."""
    return _rows().get(op)


MODE_ROUTES = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_mode_routes.jsonl"


@dataclass(frozen=True)
class ModeRoute:
    """op-plugin runs `default_api` where `cond` holds (torch_npu's run mode:
    `c10_npu::IsAclnnOnly()`, `at_npu::native::env::CheckCompatibleImpl()`) and `api`
    otherwise (`opdb/sources/torch/op_plugin_mode_routes.jsonl`)."""

    api: str
    default_api: str
    cond: str
    evidence: str


@functools.lru_cache(maxsize=None)
def _rows_by_function(path: Path) -> dict[tuple[str, str], list[dict]]:
    """{(op_api source path, adapter function): rows} of one route jsonl (none: {})."""
    out: dict[tuple[str, str], list[dict]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out.setdefault((r["source"]["path"], r["function"]), []).append(r)
    return out


def _mode_rows() -> dict[tuple[str, str], list[dict]]:
    return _rows_by_function(MODE_ROUTES)


def mode_route(op: str) -> ModeRoute | None:
    """The mode route of op-plugin's adapter function for `op` (`aten::name.overload`):
    its record's `cpp_function` in its op_api source; None when the function has none, or
    several that disagree."""
    rec = next((r for r in records() if r["op"] == op), None)
    if rec is None or not rec.get("cpp_function"):
        return None
    hits = [row for path in rec.get("source_paths") or ()
            for row in _mode_rows().get((path, rec["cpp_function"]), ())]
    if len({(h["api"], h["default_api"], h["cond"]) for h in hits}) != 1:
        return None
    h = hits[0]
    src = h["source"]
    return ModeRoute(h["api"], h["default_api"], h["cond"],
                     f"op-plugin {src['commit'][:8]} {src['path']}:{src['line']}")


VALUE_ROUTES = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_value_routes.jsonl"


@dataclass(frozen=True)
class ValueRoute:
    """op-plugin runs `cpu_call` (torch's CPU kernel on CPU copies) instead of `api` where
    `cond` holds, and copies the result (cast to `result_dtype`) into the output; `{out}`
    in `cond` is the adapter's output (`opdb/sources/torch/op_plugin_value_routes.jsonl`)."""

    api: str
    cond: str
    cpu_call: str
    result_dtype: str
    evidence: str
    params: tuple[str, ...] = ()  # upstream's parameter names, in order, where recorded


def _value_rows() -> dict[tuple[str, str], list[dict]]:
    return _rows_by_function(VALUE_ROUTES)


def value_routes(op: str) -> list[ValueRoute]:
    """The value-limit CPU routes of op-plugin's adapter function for `op`
    (`aten::name.overload`): the rows of its record's `cpp_function` in its op_api
    source, in source order; [] when it has none."""
    rec = next((r for r in records() if r["op"] == op), None)
    if rec is None or not rec.get("cpp_function"):
        return []
    hits = [row for path in rec.get("source_paths") or ()
            for row in _value_rows().get((path, rec["cpp_function"]), ())]
    return [ValueRoute(h["api"], h["cond"], h["cpu_call"], h["result_dtype"],
                       f"op-plugin {h['source']['commit'][:8]} {h['source']['path']}:"
                       f"{h['source']['line']} `{h['helper']}`", tuple(h.get("params") or ()))
            for h in hits]
