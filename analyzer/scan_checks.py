"""What `opscan` checks before any user code runs, and what it says about how a run ended.

- `refuse_early`: every check on arguments and outputs (report formats, --steps, the
  output directory and existing reports, the model file) before the model is imported, so
  a bad flag never costs a whole trace, and the outputs are absolute paths a model's
  `os.chdir` cannot move.
- `script_args_hint`: arguments meant for a `--script` training script given without `--`.
- `as_model_error`: an exception that escaped the tracer from the user's code (SystemExit,
  a custom BaseException, RecursionError) as the one-line ModelError.
- `coverage_notes`: a training step that never ran backward is said so, not reported as
  full training coverage; a script that ended before --steps steps is said so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import ModelError
from opdb.errors import OpscanError


@dataclass(frozen=True)
class Outputs:
    outdir: Path  # absolute
    formats: tuple[str, ...]


def refuse_early(model: str, framework: str, output: str | None, formats: str, force: bool,
                 steps: int, script: bool = False) -> Outputs:
    """Every check that needs no user code (the model file is read and compiled, not
    run: analyzer.trace.entry.check_model_file); returns the resolved outputs."""
    from analyzer.report.writer import check_formats, check_outputs

    fmts = check_formats(formats)  # its errors name --format
    if steps < 1:
        raise OpscanError(f"--steps must be at least 1, got {steps}")
    path = check_model(model, framework, script)
    if output is not None and not output.strip():
        raise OpscanError("-o/--output is empty", hint="pass a directory to -o/--output")
    outdir = Path(output or f"opscan-out/{path.stem}-{framework}")
    return Outputs(check_outputs(outdir, fmts, force), fmts)


def check_model(model: str, framework: str, script: bool = False) -> Path:
    """The model file exists, is a file, and compiles for `framework` (nothing of it runs)."""
    from analyzer.trace.entry import check_model_file

    path = Path(model)
    if not path.exists():
        raise ModelError(f"{model}: no such model file", "pass the path of your MODEL.py", path=model)
    if path.is_dir():
        raise ModelError(f"{model}: is a directory", "pass the path of your MODEL.py", path=model)
    check_model_file(path, framework, script)
    return path


def script_args_hint(unknown: list[str], script: bool) -> str:
    """The usage error for arguments argparse did not recognize."""
    shown = " ".join(unknown)
    if len(shown) > 120:
        shown = shown[:120] + "..."
    if script:
        return (f"unrecognized arguments: {shown} (arguments for the script go after `--`: "
                f"opscan train.py --script --framework F -- {shown})")
    return (f"unrecognized arguments: {shown} (to run a training script with its own arguments, "
            f"use --script and put them after `--`)")


def as_model_error(exc: BaseException, model: str) -> ModelError | None:
    """A ModelError when `exc` came out of the user's own code, else None (ours: re-raise)."""
    from analyzer.trace.entry import user_error, user_frames

    if isinstance(exc, (OpscanError, KeyboardInterrupt)):
        return None
    if not user_frames(exc):
        return None
    if isinstance(exc, SystemExit):
        return ModelError(f"{model}: the model called sys.exit({exc.code!r}) during the scan",
                          "opscan needs build() and the step to return", user_frames(exc), model)
    return user_error(exc, model, "the model")


def coverage_notes(trace, script: bool) -> list[str]:
    """Notes on what the traced step does not cover."""
    notes = []
    phases = {c.phase for c in trace.calls}
    inference = any(n.startswith(("inference-only", "build() returned no step_fn")) for n in trace.notes)
    if trace.calls and "backward" not in phases and not inference:
        notes.append("the step never ran backward: only forward" +
                     (" and optimizer" if "optimizer" in phases else "") +
                     " ops were traced, not full training coverage (call loss.backward() "
                     "in the step to cover the backward ops)")
    return notes


_FINISHED_EARLY = re.compile(r"the script finished after (\d+) optimizer step\(s\) of the (\d+) requested")


def steps_shortfall(notes: list[str]) -> str | None:
    """One line when a --script run ended before the --steps optimizer steps, else None
    (read from the note analyzer.trace.entry.run_script leaves)."""
    for note in notes:
        m = _FINISHED_EARLY.search(note)
        if m:
            done, asked = int(m.group(1)), int(m.group(2))
            return (f"the script ended after {done} of the {asked} optimizer steps asked for with "
                    f"--steps; the report covers {done} step(s)")
    return None
