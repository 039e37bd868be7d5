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

    from opdb.errors import OpscanError
    from opdb.fsio import check_outside

    out = Path(out)
    check_targets(out, formats, force)  # refuse before re-running any model code
    rep = compare_dumps(a, b, reference=reference, floors=tuple(floors), mapping=mapping, step=step)
    # the dumps are read (nothing written yet): refuse what would compare or write wrongly
    if Path(a).resolve() == Path(b).resolve():
        raise OpscanError(f"A and B are the same dump ({a})",
                          hint="pass side A (the reference run) and side B (the run to check)")
    dumps = {"dump A": a, "dump B": b, **({"the --reference dump": reference} if reference else {}),
             **{f"the --floor dump {f}": f for f in floors}}
    check_outside(out, dumps)  # reports mixed into a dump would be read back as part of it
    framework = rep.meta_a.get("framework") or ("paddle" if _is_paddle(a) else "torch")
    if target is not None and classify is None:  # an unknown release is refused before anything is re-run or written
        from opdb.query import OpDB

        OpDB.open().parse_target(framework, target)
    if repro and rep.op is None and rep.origin is not None and rep.origin.phase == "forward":
        rerun_op_level(rep, out)
    rep.suspects = suspects(rep, framework, target, soc, classify=classify)
    if repro and rep.op is not None:
        write_repro(rep, out)
    paths = write_reports(json.loads(json.dumps(rep.to_json(), default=str)), out, formats, force)
    return rep, paths


def rerun_op_level(rep: AlignReport, out: Path) -> bool:
    """Module-level dumps: re-run both sides on the CPU at --level op, scoped to the diverging
    module, and name its op. Only when both sides can run here (opscan dumps, side A saved its
    inputs, side B ran on the CPU); otherwise the printed next step says how on the device."""
    from analyzer.align.fault import Fault
    from analyzer.align.runner import DumpOptions, run_dump

    ma, mb = rep.meta_a, rep.meta_b
    if not (ma.get("model_path") and mb.get("model_path") and (Path(rep.a) / "inputs").is_dir()):
        return False
    if mb.get("device", "cpu") != "cpu" or ma.get("device", "cpu") != "cpu":
        return False
    if not Path(ma["model_path"]).is_file():
        return False
    scope = (rep.origin.name,)
    dumps = []
    for side, meta in (("a", ma), ("b", mb)):
        f = meta.get("fault")
        fault = Fault(f["kind"], f["occurrence"], f["rel"], f.get("step", 0)) if f else None
        d = Path(out) / "rerun" / side
        run_dump(DumpOptions(model=meta["model_path"], framework=meta["framework"], output=str(d),
                             level="op", scope=scope, amp=meta.get("amp"), reference=meta.get("reference"),
                             inputs_from=rep.a, fault=fault, force=True))
        dumps.append(d)
    sub = compare_dumps(dumps[0], dumps[1])
    origin = rep.origin.key
    bad = [r for r in sub.rows if r.kind == "op" and r.parent == origin and r.failed]
    if not bad:
        rep.descent.append(f"re-ran both sides on the CPU at --level op inside {rep.origin.name}: "
                           "none of its own ops fails above unit roundoff")
        return False
    op = bad[0]
    rep.rows.extend(r for r in sub.rows if r.kind == "op")
    rep.op = op
    rep.op_dumps = (str(dumps[0]), str(dumps[1]))
    rep.descent.append(f"re-ran both sides on the CPU at --level op inside {rep.origin.name} "
                       f"({dumps[0].parent}): first failing op of its own: {op.key} "
                       f"({op.name}, error {op.err:.3g} > {op.threshold:.3g})")
    rep.next_steps[:] = [s for s in rep.next_steps if not s.startswith("op level inside")]
    return True


def _is_paddle(dump) -> bool:
    from analyzer.align import layout
    return layout.read_step(Path(dump)).framework == "paddle"
