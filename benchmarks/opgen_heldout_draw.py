"""Draw a held-out sample of torch aclnn APIs to score opgen against op-plugin
(docs/opgen.md, "Held-out torch APIs"), reproducibly and without picking by hand.

    python benchmarks/opgen_heldout_draw.py [--seed 8] [-n 12] [--before N]

Population: the ATen ops (section `official`) of the shipped op-plugin facts
(`opdb/sources/torch/op_plugin_aclnn_map.jsonl`, op-plugin `517f2e7d`) that op-plugin
builds for the target torch and whose op_api adapter calls at least one aclnn API
(`aclnn_target`). One unit per aclnn API (the first API an op calls), taken with the
first op, in YAML order, that calls it first. Excluded: every API and every upstream
source file already in a table of docs/opgen.md (the 12 and `HELD_OUT_TORCH`), and the
ops the docs name as skimmed or picked for a gap. `--before N` counts only the first N
rows of `HELD_OUT_TORCH` as scored, to redraw an earlier sample (the eighth: `--seed 8
--before 70`; the ninth: `--seed 9 --before 82`; the tenth: `--seed 10 --before 94`).
The units are sorted by name and shuffled with `random.Random(seed)`; the first n are
the sample. Prints `API op file`.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "opdb" / "sources" / "torch" / "op_plugin_aclnn_map.jsonl"

# ops docs/opgen.md names outside the tables: skimmed for crashes, or picked for a gap
# (the Normal overloads, randperm, the sweep notes); kept out so the sample stays unseen
NAMED_IN_DOCS = {
    "aten::relu", "aten::threshold_backward", "aten::stack", "aten::tril",
    "aten::normal.Tensor_float", "aten::normal.float_Tensor", "aten::normal.Tensor_Tensor",
    "aten::normal.float_float", "aten::randperm", "aten::arange.start_out",
    "aten::eye", "aten::ones", "aten::linspace", "aten::native_dropout",
    "aten::dropout", "aten::std_mean.correction", "aten::var_mean.correction",
}


def scored(before: int | None = None) -> tuple[set[str], set[str]]:
    """The aclnn APIs and the upstream source files already scored (the first `before`
    held-out rows, all by default)."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from opgen_twelve import HELD_OUT_TORCH, TWELVE
    HELD_OUT_TORCH = HELD_OUT_TORCH[:before]
    apis = {a for a, *_ in TWELVE} | {a for a, _ in HELD_OUT_TORCH}
    ops = {t for _, t, _ in TWELVE} | {t for _, t in HELD_OUT_TORCH} | NAMED_IN_DOCS
    files = set()
    for line in MAP.open():
        r = json.loads(line)
        if r["op"] in ops or set(r.get("aclnn_target") or ()) & apis:
            files.update(r.get("source_paths") or ())
    return apis, files


def _functional(op: str) -> bool:
    """Not an `.out` overload and not an in-place op (`add_`)."""
    name, _, overload = op.removeprefix("aten::").partition(".")
    return not (overload.startswith("out") or overload.endswith("out") or name.endswith("_"))


def population(before: int | None = None) -> list[tuple[str, str, str]]:
    """(API, op, file) units: one per upstream source file (per API for yaml-generated
    adapters, which have no file), the file's first aclnn API, the functional op if the
    unit has one, else its first op in YAML order."""
    apis, files = scored(before)
    units: dict[str, list[tuple[str, str, str]]] = {}
    for line in MAP.open():
        r = json.loads(line)
        tgt = r.get("aclnn_target") or []
        if r["section"] != "official" or not r.get("built_for_target") or not tgt:
            continue
        if r["op"] in NAMED_IN_DOCS or set(tgt) & apis:
            continue
        src = r.get("source_paths") or []
        if set(src) & files:
            continue
        key = src[0] if src else "yaml:" + tgt[0]
        units.setdefault(key, []).append((tgt[0], r["op"], src[0] if src else
                                          "op_plugin_functions.yaml (gen_opapi)"))
    out = []
    for rows in units.values():
        api = rows[0][0]
        rows = [r for r in rows if r[0] == api]
        out.append(next((r for r in rows if _functional(r[1])), rows[0]))
    return sorted(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("-n", type=int, default=12)
    ap.add_argument("--before", type=int, default=None,
                    help="count only the first N rows of HELD_OUT_TORCH as scored")
    args = ap.parse_args(argv)
    units = population(args.before)
    random.Random(args.seed).shuffle(units)
    print(f"# population {len(units)} units, seed {args.seed}")
    for api, op, src in units[:args.n]:
        print(api, op, src)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
