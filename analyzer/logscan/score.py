"""Score the log scanner against hand labels (`labels.json`: per file the framework and the
(op, kind, count) a human reads from it), as `tests/fixtures/logs/public/` holds them.

Per file: the expected and reported (op, kind) pairs, hits (both), misses (expected, not
reported), extras (reported, not expected) and hits whose count differs. Recall is hits over
expected pairs, precision hits over reported pairs, summed over all files.

    rows = score_labels("tests/fixtures/logs/public/labels.json")
    print(render_table(rows))
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.logscan.model import scan_logs


@dataclass
class FileScore:
    file: str
    framework: str
    expected: dict[tuple[str, str], int]
    reported: dict[tuple[str, str], int]
    hits: list[tuple[str, str]] = field(default_factory=list)
    misses: list[tuple[str, str]] = field(default_factory=list)
    extras: list[tuple[str, str]] = field(default_factory=list)
    count_off: list[tuple[str, str]] = field(default_factory=list)


def score_labels(labels: str | Path, prefilter: str = "auto") -> list[FileScore]:
    """Run `scan_logs` on every labelled file (paths relative to the labels file)."""
    path = Path(labels)
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for f in data["files"]:
        rep = scan_logs([path.parent / f["file"]], f["framework"], prefilter=prefilter)
        got = {(o.op, o.kind): o.count for o in rep.ops}
        exp = {(e["op"], e["kind"]): e["count"] for e in f["expect"]}
        s = FileScore(f["file"], f["framework"], exp, got)
        s.hits = sorted(k for k in exp if k in got)
        s.misses = sorted(k for k in exp if k not in got)
        s.extras = sorted(k for k in got if k not in exp)
        s.count_off = [k for k in s.hits if exp[k] != got[k]]
        rows.append(s)
    return rows


def totals(rows: list[FileScore]) -> dict:
    exp = sum(len(r.expected) for r in rows)
    got = sum(len(r.reported) for r in rows)
    hits = sum(len(r.hits) for r in rows)
    exact = sum(len(r.hits) - len(r.count_off) for r in rows)
    return {"files": len(rows), "expected": exp, "reported": got, "hits": hits,
            "count_exact": exact,
            "recall": hits / exp if exp else 1.0, "precision": hits / got if got else 1.0,
            "clean_files": sum(1 for r in rows if not (r.misses or r.extras or r.count_off))}


def _pairs(keys, counts=None) -> str:
    return "; ".join(f"{op} ({kind}{', %dx' % counts[(op, kind)] if counts else ''})"
                     for op, kind in keys) or "-"


def render_table(rows: list[FileScore]) -> str:
    """A Markdown table, one row per file, and a totals line."""
    out = ["| file | expected | hits | missed | extra | count differs |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        off = "; ".join(f"{op} ({kind}): {r.reported[(op, kind)]} vs {r.expected[(op, kind)]}"
                        for op, kind in r.count_off) or "-"
        out.append(f"| `{r.file}` | {len(r.expected)} | {len(r.hits)} | {_pairs(r.misses)} | "
                   f"{_pairs(r.extras, r.reported)} | {off} |")
    t = totals(rows)
    out.append("")
    out.append(f"{t['files']} files, {t['expected']} expected (op, kind) pairs, {t['reported']} "
               f"reported: {t['hits']} hits ({t['count_exact']} with the right count), recall "
               f"{t['recall']:.2f}, precision {t['precision']:.2f}; {t['clean_files']} files "
               f"exactly right")
    return "\n".join(out) + "\n"
