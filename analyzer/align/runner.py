"""`opscan align dump`: run N training steps of a model file with statistics hooks.

Both sides of a comparison run the same model file; side A saves weights, inputs and the
seed (`save_inputs`), side B loads them (`inputs_from`). Dropout of every kind is disabled
and deterministic algorithms are on. Writes msprobe's layout plus opscan_align.json.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.align import layout, stats_worker
from analyzer.align.fault import Fault
from opdb.errors import OpscanError

DEVICES = ("cpu", "gpu", "npu")
AMPS = ("bf16", "fp16")
LEVELS = ("module", "op")


@dataclass
class DumpOptions:
    model: str
    framework: str
    output: str
    device: str = "cpu"
    steps: int = 1
    level: str = "module"
    amp: str | None = None
    reference: str | None = None  # "fp64"
    save_inputs: bool = False
    inputs_from: str | None = None
    scope: tuple[str, ...] = ()
    fault: Fault | None = None
    seed: int = 0
    force: bool = False
    timing: bool = False  # also time one undumped step first (overhead benchmark)


@dataclass
class DumpResult:
    output: Path
    steps: list[Path] = field(default_factory=list)
    losses: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @property
    def summary(self) -> str:
        calls = self.meta.get("calls_per_step", 0)
        return (f"dumped {len(self.steps)} step(s) of {self.meta.get('model')} "
                f"({self.meta.get('framework')}, {self.meta.get('device')}, {self.meta.get('dtype')}"
                f"{', amp ' + self.meta['amp'] if self.meta.get('amp') else ''}, level "
                f"{self.meta.get('level')}): {calls} call records per step")


def check_options(o: DumpOptions) -> None:
    """Every refusal before any user code runs."""
    if o.framework not in ("torch", "paddle"):
        raise OpscanError(f"unknown framework {o.framework!r}", hint="use --framework torch or paddle")
    if o.device not in DEVICES:
        raise OpscanError(f"unknown device {o.device!r}", hint=f"use one of {', '.join(DEVICES)}")
    if o.level not in LEVELS:
        raise OpscanError(f"unknown level {o.level!r}", hint="use --level module or op")
    if o.amp is not None and o.amp not in AMPS:
        raise OpscanError(f"unknown --amp {o.amp!r}", hint="use --amp bf16 or fp16")
    if o.reference is not None and o.reference != "fp64":
        raise OpscanError(f"unknown --reference {o.reference!r}", hint="use --reference fp64")
    if o.reference and o.amp:
        raise OpscanError("--reference fp64 and --amp exclude each other",
                          hint="the reference run is plain float64; dump the amp run separately")
    if o.reference and o.device != "cpu":
        raise OpscanError("the float64 reference runs on the CPU", hint="drop --device for --reference fp64")
    if o.steps < 1:
        raise OpscanError(f"--steps must be at least 1, got {o.steps}")
    if o.scope and o.level != "op":
        raise OpscanError(f"--scope {o.scope[0]} only applies at --level op",
                          hint="add --level op, or drop --scope")
    if not Path(o.model).is_file():
        raise OpscanError(f"{o.model}: no such model file", hint="pass a MODEL.py defining build()")
    if o.inputs_from is not None:
        if not (Path(o.inputs_from) / "inputs").is_dir():
            raise OpscanError(f"{o.inputs_from}: no saved inputs (inputs/ folder)",
                              hint="dump side A with --save-inputs first")
    layout.check_output_dir(Path(o.output), o.force)
    if o.inputs_from is not None:  # --force would overwrite the dump the inputs are read from
        from opdb.fsio import check_outside

        check_outside(o.output, {"the --inputs dump": o.inputs_from})


def check_scope(model, framework: str, scope) -> None:
    """Each --scope PATH names a module of the model, as the dump's keys spell it
    (`Module.PATH.Class...`): a path that matches nothing would dump no op silently."""
    if not scope:
        return
    named = model.named_modules() if framework == "torch" else model.named_sublayers()
    keys = [f"{p}.{type(m).__name__}." for p, m in named if p]
    for path in scope:
        if not any(k.startswith(f"{path}.") for k in keys):
            top = ", ".join(dict.fromkeys(k.split(".", 1)[0] for k in keys)) or "(none)"
            raise OpscanError(f"--scope {path}: the model has no module at that path",
                              hint=f"use a dotted module path; top-level modules: {top[:200]}")


def _session(entry, framework: str, device: str):
    if framework == "torch":
        from analyzer.align.session_torch import TorchSession
        return TorchSession(entry, device)
    from analyzer.align.session_paddle import PaddleSession
    return PaddleSession(entry, device)


def check_device(framework: str, device: str) -> None:
    """--device gpu/npu is refused before the model runs when this machine lacks it (the
    framework's own check: torch_npu importable, CUDA devices, Paddle's custom devices)."""
    if device == "cpu":
        return
    if framework == "torch":
        from analyzer.align.session_torch import device_missing
    else:
        from analyzer.align.session_paddle import device_missing
    why = device_missing(device)
    if why:
        raise OpscanError(f"--device {device}: {why}",
                          hint="run on a machine with that device, or drop --device (CPU)")


def _seed(framework: str, seed: int) -> None:
    if framework == "torch":
        from analyzer.align.session_torch import seed_all
    else:
        from analyzer.align.session_paddle import seed_all
    seed_all(seed)


def run_dump(o: DumpOptions, progress=None) -> DumpResult:
    check_options(o)
    from analyzer.align.loader import load_model

    seed = o.seed
    if o.inputs_from:
        seed = int(layout.read_meta(Path(o.inputs_from)).get("seed", seed))
    from analyzer.trace.entry import import_framework

    import_framework(o.framework)  # Ctrl-C while torch imports is not lost (trace.entry)
    _seed(o.framework, seed)
    check_device(o.framework, o.device)
    from analyzer.trace import user_stdout_to_stderr

    with user_stdout_to_stderr():  # stdout: the dump's summary only
        return _dump(o, seed, load_model, progress)


def _dump(o: DumpOptions, seed: int, load_model, progress) -> DumpResult:
    out = Path(o.output)
    entry = load_model(o.model, o.framework)
    s = _session(entry, o.framework, o.device)
    check_scope(s.model, o.framework, o.scope)
    notes = s.notes
    notes.append(f"deterministic algorithms on ({_deterministic(o.framework, s)})")
    created = not out.exists()
    if o.force and not created:  # the model built: now an earlier dump there is replaced
        gone = layout.clear_previous_dump(out)
        if gone:
            notes.append(f"--force: removed the earlier dump's {', '.join(gone)}")
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _run(o, out, entry, s, seed, notes, progress)
    except BaseException:
        # nothing to compare yet: the folder this run created goes (steps already written
        # stay, readable, as after an interrupt: docs/align.md)
        if created and not any(p.name.startswith("step") for p in out.iterdir()):
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        raise


def _run(o: DumpOptions, out: Path, entry, s, seed: int, notes: list, progress) -> DumpResult:
    from analyzer.align.loader import user_error

    if o.inputs_from:
        s.load_inputs(Path(o.inputs_from) / "inputs")
        notes.append(f"weights and build() inputs loaded from {o.inputs_from}; seed {seed}")
    saved = []
    if o.save_inputs:
        saved = s.save_inputs(out / "inputs")
    undumped = None
    try:
        s.set_precision(o.reference)
        s.to_device()
        s.disable_dropout()
        if o.timing:
            undumped = _time_undumped(s, entry, o)
        rec = (s.recorder(o.level, o.scope, o.fault, amp=o.amp) if o.framework == "paddle"
               else s.recorder(o.level, o.scope, o.fault))
        result = DumpResult(out)
        times = []
        calls = 0
        # step N's statistics are reduced, encoded and written by a worker process while
        # step N+1 runs (in-process, on a writer thread, where the worker cannot start)
        writer = stats_worker.open_writer(out, rec, notes)
        try:
            for step in range(o.steps):
                rec.begin_step(step)
                t0 = time.perf_counter()
                try:
                    with s.step_context(o.amp):
                        loss = entry.run_step()
                    s.sync()
                except Exception as e:  # the user's code failed: one line with their frames
                    rec.end_step()
                    raise user_error(e, o.model, f"step {step}") from None
                dump = rec.end_step()
                calls = len(dump.data)
                result.steps.append(writer.submit(dump))
                times.append(time.perf_counter() - t0)  # hooks + statistics (+ waiting for the writer)
                result.losses.append(s.loss_value(loss))
                if progress:
                    progress(f"step {step}: loss {result.losses[-1]}")
        except BaseException:
            writer.close(quiet=True)  # the steps before the failure stay written
            raise
        writer.close()
    finally:
        s.close()
    if o.fault is not None and rec.fault_hit is None:
        notes.append(f"planted fault {o.fault.kind}:{o.fault.occurrence} never fired: step "
                     f"{o.fault.step} has fewer forward calls of that kind inside modules")
    dtype = "float64" if o.reference else s.param_dtype()
    meta = {
        "tool": "opscan align dump", "schema": 1,
        "model": Path(o.model).name, "model_path": str(Path(o.model).resolve()),
        "framework": o.framework, "device": o.device, "dtype": dtype, "amp": o.amp,
        "compute_dtype": {"bf16": "bfloat16", "fp16": "float16"}.get(o.amp or "", dtype),
        "reference": o.reference, "level": o.level, "scope": list(o.scope), "steps": o.steps,
        "seed": seed, "losses": result.losses, "inputs_saved": saved,
        "inputs_from": str(o.inputs_from) if o.inputs_from else None,
        "fault": ({**o.fault.to_json(), "hit": rec.fault_hit} if o.fault else None),
        "dropout_intercepted": s.dropout_hits(),
        "notes": notes, "calls_per_step": calls,
    }
    if o.timing:
        meta["timing"] = {"undumped_step_s": undumped, "dumped_step_s": times,
                          "dump_json_bytes": [(p / "dump.json").stat().st_size for p in result.steps]}
    layout.write_file(out / layout.META_NAME,
                      (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    result.meta = meta
    return result


def _deterministic(framework: str, session) -> str:
    if framework == "torch":
        import torch

        from analyzer.align.session_torch import deterministic
        was = (torch.are_deterministic_algorithms_enabled(),
               torch.is_deterministic_algorithms_warn_only_enabled())
        session._undo.append(lambda: torch.use_deterministic_algorithms(was[0], warn_only=was[1]))
    else:
        from analyzer.align.session_paddle import deterministic
    return deterministic()


def _time_undumped(s, entry, o: DumpOptions, repeat: int = 3) -> list[float]:
    """One warm-up and `repeat` timed steps without hooks (they change the weights: timing only)."""
    with s.step_context(o.amp):
        entry.run_step()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with s.step_context(o.amp):
            entry.run_step()
        s.sync()
        times.append(time.perf_counter() - t0)
    return times
