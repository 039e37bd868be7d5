"""Scan one zoo entry in this process and write its result file: the worker the runner
starts once per model (`python -m analyzer.zoo.worker TASK.json RESULT.json`).

The result keeps only what the backlog needs from the report (status, target, per-op
verdicts, fallback islands, notes) plus this process's peak RSS and wall time.
"""
from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def compact_report(report: dict) -> dict:
    keep = ("op", "category", "dtypes", "calls", "phases", "action", "aliases")
    return {
        "target": report["target"], "soc": report["soc"], "mode": report["mode"],
        "steps": report["steps"], "partial": report["partial"], "error": report["error"],
        "summary": report["summary"], "framework_version": report["framework_version"],
        "verdicts": [{k: v[k] for k in keep if k in v} for v in report["verdicts"]],
        "islands": [{"ops": i["ops"], "calls": i["calls"], "transfers": i["transfers"],
                     "bytes": i["bytes"]} for i in report["fallback"]["islands"]],
        "notes": list(report["notes"]),
    }


def run_task(task: dict) -> dict:
    """Scan the task's model; never raises for a failure of the model (that is a row)."""
    from analyzer.scan import ScanOptions, scan

    start = time.monotonic()
    out: dict = {"status": "ok", "reason": ""}
    try:
        result = scan(ScanOptions(model=task["model"], framework=task["framework"],
                                  mode=task["mode"], target=task["target"], soc=task["soc"],
                                  steps=task["steps"], script=task["script"],
                                  script_args=list(task["args"])))
        report = compact_report(result.report.to_json())
        out["report"] = report
        if report["partial"]:
            out["status"], out["reason"] = "partial", report["error"]
    except BaseException as e:  # noqa: BLE001 - every failure is this model's row
        if isinstance(e, KeyboardInterrupt):
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        hint = getattr(e, "hint", "")
        out["status"] = "error"
        out["reason"] = f"{type(e).__name__}: {first}" + (f" ({hint})" if hint else "")
    out["seconds"] = round(time.monotonic() - start, 3)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main(argv: list[str]) -> int:
    task = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    result = run_task(task)
    tmp = Path(argv[1] + ".part")
    tmp.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
    tmp.replace(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
