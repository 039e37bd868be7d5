"""What a scan is doing right now, on stderr, from its first second.

A `Progress` is the `progress` callable the tracers and `analyzer.scan` already take
(`progress("classifying 1,234 calls")` names the stage) plus `step(done, total, ops)`
for the training steps. `report_step()` lets a tracer report a step to either kind of
callable. Three renderings:
  - `LiveProgress`: a rich live line on a terminal (spinner, stage, step bar, ops seen,
    elapsed time), cleared when the scan ends;
  - `PlainProgress`: one `opscan: [12.3s] stage` line per stage and per step, and at most
    one "ops so far" line every `interval` seconds inside a long step (logs, CI, pipes);
  - `make_progress(quiet=True)` gives None: `-q` prints nothing on stderr.
The summary line and the written paths stay on stdout (analyzer.cli).
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

ProgressFn = Callable[[str], None]


class Progress:
    """Stage and step reporter; subclasses render it."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def __call__(self, text: str) -> None:
        raise NotImplementedError

    def step(self, done: int, total: int, ops: int) -> None:
        """`done` of `total` steps finished, `ops` kernel calls recorded so far (called at
        each step's end and now and then during a step)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop rendering (clears a live line)."""


def report_step(progress: ProgressFn | None, done: int, total: int, ops: int) -> None:
    """Report a step to a `Progress` (bar) or to a plain text callable."""
    if progress is None:
        return
    if isinstance(progress, Progress):
        progress.step(done, total, ops)
    else:
        progress(f"step {min(done + 1, total)}/{total}: {ops} ops so far")


class PlainProgress(Progress):
    """One line per stage and per finished step; inside a step at most one line per
    `interval` seconds."""

    def __init__(self, stream: TextIO, interval: float = 5.0):
        super().__init__()
        self.stream = stream
        self.interval = interval
        self._last_step = (-1, 0.0)  # (done, time of the last line)

    def _line(self, text: str) -> None:
        self.stream.write(f"opscan: [{self.elapsed():5.1f}s] {text}\n")
        self.stream.flush()

    def __call__(self, text: str) -> None:
        self._line(text)

    def step(self, done: int, total: int, ops: int) -> None:
        now = time.monotonic()
        last_done, last_t = self._last_step
        if done == last_done and now - last_t < self.interval:
            return
        self._last_step = (done, now)
        if done > last_done and done > 0:
            self._line(f"step {done}/{total} done: {ops} ops so far")
        else:
            self._line(f"step {min(done + 1, total)}/{total}: {ops} ops so far")


class LiveProgress(Progress):
    """A rich live line: spinner, stage text, a bar over the steps, ops, elapsed time."""

    def __init__(self, stream: TextIO):
        super().__init__()
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as Bar,
                                   SpinnerColumn, TextColumn, TimeElapsedColumn)

        self._bar = Bar(SpinnerColumn(), TextColumn("[bold]opscan[/]"),
                        TextColumn("{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TextColumn("{task.fields[ops]}"),
                        TimeElapsedColumn(), console=Console(file=stream), transient=True)
        self._task = self._bar.add_task("starting", total=None, ops="")
        self._bar.start()

    def __call__(self, text: str) -> None:
        self._bar.update(self._task, description=text)

    def step(self, done: int, total: int, ops: int) -> None:
        self._bar.update(self._task, total=total, completed=done,
                         description=f"step {min(done + 1, total)}/{total}",
                         ops=f"{ops} ops")

    def close(self) -> None:
        if self._bar.live.is_started:
            self._bar.stop()


def make_progress(quiet: bool = False, stream: TextIO | None = None) -> Progress | None:
    """The reporter for `opscan`: None when quiet, a live line on a terminal, plain
    lines otherwise."""
    if quiet:
        return None
    stream = sys.stderr if stream is None else stream
    if stream.isatty():
        return LiveProgress(stream)
    return PlainProgress(stream)
