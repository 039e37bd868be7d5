"""Aggregate zoo results with pandas: which kernels to write first.

Tables (each a DataFrame, deterministic for the same results):
- `models`: one row per (target, model): status, reason, kernel ops, gap ops, whether the
  model is already fully NPU-resident.
- `backlog`: one row per (target, gap op), ordered greedily: the next op is always the one
  whose fix completes the most remaining models (every other gap of theirs already fixed
  above it), ties broken by models affected, then CPU-fallback bytes per step, then name.
  `completes` counts the models made fully NPU-resident by that row; `resident_after` the
  running total (models already resident included).
- `matrix`: models x gap ops (calls per step), columns in backlog order, per target.
- `releases` (two or more targets): per op, the targets where it is a gap and the first
  target, in the order given, from which it no longer is in any model ("arrived in").
- `targets`: per target, models scanned, fully resident, and how many more than the
  previous target.

Only scans that produced a report (ok or partial) have gaps; failed models are rows of
`models` with their reason and never count as resident. A partial scan's gaps are the ones
it saw; it is never counted as resident.
Fallback bytes of an op in a model: each fallback island's bytes per step split evenly
among the distinct ops of the island, summed over the islands the op is in.
"""
from __future__ import annotations

from dataclasses import dataclass

from analyzer.model import GAP_CATEGORIES

MODEL_COLUMNS = ["target", "model", "kind", "status", "reason", "kernel_ops", "gap_ops",
                 "fully_npu_resident"]
BACKLOG_COLUMNS = ["target", "rank", "op", "category", "models_affected", "completes",
                   "resident_after", "calls_per_step", "fallback_bytes_per_step", "action",
                   "models"]


@dataclass
class Backlog:
    models: "object"   # pandas.DataFrame
    backlog: "object"
    matrix: dict       # target -> DataFrame
    releases: "object | None"
    targets: "object"


def _op_rows(target: str, model: str, result: dict) -> list[dict]:
    rep = result["report"]
    steps = max(int(rep.get("steps") or 1), 1)
    share: dict[str, float] = {}
    for isl in rep.get("islands", []):
        ops = sorted(set(isl["ops"]))
        for op in ops:
            share[op] = share.get(op, 0.0) + isl["bytes"] / len(ops)
    rows: dict[str, dict] = {}
    for v in rep["verdicts"]:
        if v["category"] not in GAP_CATEGORIES:
            continue
        r = rows.setdefault(v["op"], {"target": target, "model": model, "op": v["op"],
                                      "categories": [], "calls": 0, "action": v.get("action", ""),
                                      "bytes": share.get(v["op"], 0.0)})
        if v["category"] not in r["categories"]:
            r["categories"].append(v["category"])
        r["calls"] += int(v.get("calls") or 0)
    for r in rows.values():
        r["calls_per_step"] = r.pop("calls") / steps
        r["category"] = "/".join(sorted(r.pop("categories")))
    return list(rows.values())


def _greedy(gaps: dict[str, set[str]], per_op: dict, resident0: int) -> list[dict]:
    """Order ops: most models completed next, then most affected, most bytes, name."""
    remaining = {m: set(ops) for m, ops in gaps.items() if ops}
    todo = sorted(per_op)
    out = []
    resident = resident0
    while todo:
        def score(op):
            completes = sum(1 for ops in remaining.values() if ops == {op})
            affected = sum(1 for ops in remaining.values() if op in ops)
            return (-completes, -affected, -per_op[op]["bytes"], op)

        op = min(todo, key=score)
        completes = -score(op)[0]
        todo.remove(op)
        for m in list(remaining):
            remaining[m].discard(op)
            if not remaining[m]:
                del remaining[m]
        resident += completes
        out.append({"op": op, "completes": completes, "resident_after": resident})
    return out


def build_backlog(results: list[tuple[str, str, str, dict]]) -> Backlog:
    """results: (target, model name, entry kind, worker result) in plan order."""
    import pandas as pd

    model_rows, op_rows = [], []
    for target, model, kind, res in results:
        status = res.get("status", "crash")
        has_report = status in ("ok", "partial") and "report" in res
        ops = _op_rows(target, model, res) if has_report else []
        kernel_ops = len({v["op"] for v in res["report"]["verdicts"]
                          if v["category"] != "not-a-kernel"}) if has_report else 0
        model_rows.append({"target": target, "model": model, "kind": kind, "status": status,
                           "reason": res.get("reason", ""), "kernel_ops": kernel_ops,
                           "gap_ops": len(ops),
                           "fully_npu_resident": bool(status == "ok" and not ops)})
        op_rows.extend(ops)
    models = pd.DataFrame(model_rows, columns=MODEL_COLUMNS)
    long = pd.DataFrame(op_rows, columns=["target", "model", "op", "category", "calls_per_step",
                                          "action", "bytes"])
    targets = list(dict.fromkeys(models["target"]))
    backlog_parts, matrix = [], {}
    for target in targets:
        sub = long[long["target"] == target]
        tm = models[models["target"] == target]
        per_op = {}
        for op, g in sub.groupby("op", sort=True):
            cats = g["category"].value_counts()
            top = sorted(cats.index, key=lambda c: (-cats[c], c))
            per_op[op] = {"category": "/".join(top), "models_affected": g["model"].nunique(),
                          "calls_per_step": round(float(g["calls_per_step"].sum()), 3),
                          "bytes": float(g["bytes"].sum()),
                          "action": g.sort_values("model")["action"].iloc[0],
                          "models": ", ".join(sorted(g["model"]))}
        gaps = {m: set(g["op"]) for m, g in sub.groupby("model", sort=True)}
        # partial scans never count as resident: keep them in `remaining` with a sentinel
        for m in tm[tm["status"] == "partial"]["model"]:
            gaps.setdefault(m, set()).add("\0partial")
        resident0 = int(tm["fully_npu_resident"].sum())
        order = _greedy(gaps, per_op, resident0)
        rows = []
        for rank, o in enumerate(order, 1):
            p = per_op[o["op"]]
            rows.append({"target": target, "rank": rank, "op": o["op"], "category": p["category"],
                         "models_affected": p["models_affected"], "completes": o["completes"],
                         "resident_after": o["resident_after"],
                         "calls_per_step": p["calls_per_step"],
                         "fallback_bytes_per_step": int(round(p["bytes"])),
                         "action": p["action"], "models": p["models"]})
        backlog_parts.append(pd.DataFrame(rows, columns=BACKLOG_COLUMNS))
        cols = [o["op"] for o in order]
        mat = sub.pivot_table(index="model", columns="op", values="calls_per_step",
                              aggfunc="sum", fill_value=0) if len(sub) else pd.DataFrame()
        mat = mat.reindex(index=list(tm["model"]), columns=cols, fill_value=0).fillna(0)
        mat.index.name, mat.columns.name = "model", None
        matrix[target] = mat
    backlog = (pd.concat(backlog_parts, ignore_index=True) if backlog_parts
               else pd.DataFrame(columns=BACKLOG_COLUMNS))
    return Backlog(models, backlog, matrix, _releases(long, models, targets),
                   _targets(models, targets))


def _releases(long, models, targets):
    import pandas as pd

    if len(targets) < 2:
        return None
    rows = []
    for op in sorted(set(long["op"])):
        gap_in = [t for t in targets if ((long["target"] == t) & (long["op"] == op)).any()]
        arrived = ""
        for prev, cur in zip(targets, targets[1:]):
            if prev in gap_in and cur not in gap_in:
                arrived = cur
            elif cur in gap_in:
                arrived = ""
        rows.append({"op": op, "gap_in": ", ".join(gap_in), "arrived_in": arrived})
    return pd.DataFrame(rows, columns=["op", "gap_in", "arrived_in"])


def _targets(models, targets):
    import pandas as pd

    rows, prev = [], None
    for t in targets:
        tm = models[models["target"] == t]
        resident = int(tm["fully_npu_resident"].sum())
        rows.append({"target": t, "models": len(tm),
                     "scanned": int(tm["status"].isin(["ok", "partial"]).sum()),
                     "fully_npu_resident": resident,
                     "unblocked_vs_previous": "" if prev is None else resident - prev})
        prev = resident
    return pd.DataFrame(rows, columns=["target", "models", "scanned", "fully_npu_resident",
                                       "unblocked_vs_previous"])
