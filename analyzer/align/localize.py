"""Down to the op: re-run side A on its saved inputs, capture the named op's inputs and
output, and write a runnable single-op repro (script + inputs + both sides' outputs).

Runs on the CPU here; `repro.py --device npu` (or cuda) does the same on the device.
"""
from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

from analyzer.align import layout
from analyzer.align.compare import AlignReport

REPRO_SCRIPT = Path(__file__).with_name("repro_script.py")


def _occurrence(rep: AlignReport) -> int:
    op = rep.op
    return sum(1 for r in rep.rows if r.kind == "op" and r.parent == op.parent
               and r.name == op.name and r.phase == op.phase and r.order < op.order)


def capture_op(meta: dict, dump_a: Path, parent: str, name: str, occurrence: int) -> dict | None:
    """Re-run one step of side A (its model file, saved weights and inputs, amp) and return
    {"op", "args", "kwargs", "out"} of the op call (parent, name, occurrence), or None."""
    from analyzer.align.loader import load_model
    from analyzer.align.runner import _seed, _session

    fw = meta["framework"]
    _seed(fw, int(meta.get("seed", 0)))
    entry = load_model(meta["model_path"], fw)
    s = _session(entry, fw, "cpu")
    try:
        s.load_inputs(dump_a / "inputs")
        s.disable_dropout()
        cap = (parent, name, occurrence)
        rec = s.recorder("module", (), None, cap, amp=meta.get("amp")) if fw == "paddle" \
            else s.recorder("module", (), None, cap)
        rec.begin_step(0)
        try:
            with s.step_context(meta.get("amp")):
                entry.run_step()
        finally:
            rec.end_step()
            rec.remove()
        return rec.captured
    finally:
        s.close()


def write_repro(rep: AlignReport, outdir: Path) -> Path | None:
    """OUT/repro/<op>/: repro.py, repro.json, inputs.pt|inputs.pkl (A's inputs and output).
    None (with a note) when side A saved no inputs or the op could not be captured."""
    if rep.op is None:
        return None
    meta = rep.meta_a
    a = Path(rep.a)
    if not meta.get("model_path") or not (a / "inputs").is_dir():
        rep.notes.append("no single-op repro: side A was not dumped by opscan with --save-inputs")
        return None
    if not Path(meta["model_path"]).is_file():
        rep.notes.append(f"no single-op repro: {meta['model_path']} is gone")
        return None
    op = rep.op
    cap = capture_op(meta, a, op.parent, op.name, _occurrence(rep))
    if cap is None:
        rep.notes.append(f"no single-op repro: {op.key} was not reached when re-running side A")
        return None
    fw = meta["framework"]
    folder = Path(outdir) / "repro" / op.key
    folder.mkdir(parents=True, exist_ok=True)
    if fw == "torch":
        import torch
        torch.save({"args": cap["args"], "kwargs": cap["kwargs"], "out": cap["out"]}, folder / "inputs.pt")
    else:
        with open(folder / "inputs.pkl", "wb") as f:
            pickle.dump({"args": cap["args"], "kwargs": cap["kwargs"], "out": cap["out"]}, f)
    stats_b = _stats_b(rep)
    dtype_b = (rep.meta_b.get("compute_dtype") or op.dtype_b or "float32")
    info = {"framework": fw, "op": cap["op"].replace("aten.", "aten.", 1), "call": op.key,
            "module": op.parent, "dtype_b": dtype_b, "stats_b": stats_b,
            "err_recorded": op.err, "threshold": op.threshold,
            "side_a": rep.a, "side_b": rep.b}
    layout.write_file(folder / "repro.json", (json.dumps(info, indent=1, sort_keys=True) + "\n").encode())
    shutil.copyfile(REPRO_SCRIPT, folder / "repro.py")
    rep.repro = str(folder / "repro.py")
    rep.next_steps.append(f"single-op repro: python {folder / 'repro.py'} --device npu (on the device; "
                          "--device cpu here)")
    return folder


def _stats_b(rep: AlignReport) -> dict | None:
    a, b = rep.op_dumps or (rep.a, rep.b)
    try:
        db = layout.read_step(Path(b), rep.step)
        da = layout.read_step(Path(a), rep.step)
    except Exception:  # B unreadable now: the repro still runs without B's numbers
        return None
    from analyzer.align.compare import identities
    ida = identities(da)
    idb = identities(db)
    ident = next((i for i, k in ida.items() if k == rep.op.key), None)
    kb = idb.get(ident)
    if kb is None:
        return None
    outs = db.data[kb].get("output") or []
    return outs[0] if outs and isinstance(outs[0], dict) else None
