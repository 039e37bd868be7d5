"""Library entry points the CLI and tests call: compare two dumps and write the reports."""
from __future__ import annotations

import json
from pathlib import Path

from analyzer.align.compare import AlignReport, compare_dumps


def compare_and_report(a, b, out, reference=None, floors=(), mapping=None, step=None,
                       formats="md,html,csv,xlsx,json", target=None, soc=None, repro=True,
                       force=False, classify=None) -> tuple[AlignReport, list[Path]]:
    """compare -> suspects with their coverage verdicts -> repro -> reports (nothing is written
    when a report file exists and force is false)."""
    from analyzer.align.coverage import suspects
    from analyzer.align.localize import write_repro
    from analyzer.align.report import check_targets, write_reports

    out = Path(out)
    check_targets(out, formats, force)  # refuse before re-running any model code
    rep = compare_dumps(a, b, reference=reference, floors=tuple(floors), mapping=mapping, step=step)
    framework = rep.meta_a.get("framework") or ("paddle" if _is_paddle(a) else "torch")
    rep.suspects = suspects(rep, framework, target, soc, classify=classify)
    if repro and rep.op is not None:
        write_repro(rep, out)
    paths = write_reports(json.loads(json.dumps(rep.to_json(), default=str)), out, formats, force)
    return rep, paths


def _is_paddle(dump) -> bool:
    from analyzer.align import layout
    return layout.read_step(Path(dump)).framework == "paddle"
