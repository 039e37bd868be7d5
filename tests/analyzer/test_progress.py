"""Issue 16: a scan says what it is doing on stderr from its first second (importing,
building, step k/N with the ops so far, classifying, writing); -q silences it; the summary
line stays on stdout. A terminal gets a rich live line, anything else plain lines."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.progress import LiveProgress, PlainProgress, make_progress, report_step

ROOT = Path(__file__).resolve().parents[2]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_for_stages_and_steps():
    out = io.StringIO()
    p = PlainProgress(out, interval=3600)
    p("importing torch")
    report_step(p, 0, 2, 0)
    report_step(p, 0, 2, 500)  # within the interval, same step: no line
    report_step(p, 1, 2, 812)
    report_step(p, 2, 2, 1624)
    p.close()
    lines = [re.sub(r"\[\s*[\d.]+s\] ", "", x) for x in out.getvalue().splitlines()]
    assert lines == ["opscan: importing torch", "opscan: step 1/2: 0 ops so far",
                     "opscan: step 1/2 done: 812 ops so far",
                     "opscan: step 2/2 done: 1624 ops so far"]


def test_report_step_to_a_plain_callable():
    seen = []
    report_step(seen.append, 1, 3, 40)
    report_step(None, 1, 3, 40)  # no reporter: nothing
    assert seen == ["step 2/3: 40 ops so far"]


def test_terminal_gets_a_live_line_pipes_plain_lines_quiet_nothing():
    assert make_progress(quiet=True, stream=_Tty()) is None
    assert isinstance(make_progress(stream=io.StringIO()), PlainProgress)
    tty = _Tty()
    live = make_progress(stream=tty)
    assert isinstance(live, LiveProgress)
    live("classifying 10 calls")
    live.step(1, 2, 99)
    live.close()
    live.close()  # idempotent


def _opscan(tmp_path, *extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "analyzer.cli", "tests/fixtures/models/script_setup_torch.py",
           "--framework", "torch", "--steps", "2", "--script", "-o", str(tmp_path / "out"),
           "--format", "json", *extra, "--", "-c", "configs/rec.yml"]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_cli_progress_on_stderr_summary_on_stdout(tmp_path):
    import torch  # noqa: F401 - installed by scripts/setup.sh
    proc = _opscan(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    stages = [re.sub(r"^opscan: \[\s*[\d.]+s\] ", "", x) for x in proc.stderr.splitlines()
              if x.startswith("opscan: [")]
    want = [r"scanning .*script_setup_torch.py \(torch, \w+ mode, 2 steps\)", "opening opdb",
            "target ", "importing torch", "running script_setup_torch.py",
            r"step 1/2 done: \d+ ops so far", r"step 2/2 done: \d+ ops so far",
            r"classifying \d+ calls", "building the op graph", "writing reports to "]
    pos = 0
    for pattern in want:  # in this order, other lines may come between
        while pos < len(stages) and not re.match(pattern, stages[pos]):
            pos += 1
        assert pos < len(stages), (pattern, stages)
    assert proc.stdout.startswith("script_setup_torch.py on torch_npu")
    assert "opscan: [" not in proc.stdout

    quiet = _opscan(tmp_path, "-q", "--force")
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert "opscan: [" not in quiet.stderr
    assert quiet.stdout.splitlines()[0] == proc.stdout.splitlines()[0]


PADDLE_LOOP = '''
import paddle


def build():
    w = paddle.create_parameter([4], "float32")
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])

    def step():
        x = w
        for _ in range(150):  # 300 API calls a step
            x = paddle.tanh(x) * 0.5
        x.sum().backward()
        opt.step()
        opt.clear_grad()

    return w, (), step
'''


def test_paddle_ops_so_far_lines_name_the_step_running(tmp_path):
    # the 500th API call runs in step 2 of 3: its line said "step 1/3" before
    import paddle  # noqa: F401 - installed by scripts/setup.sh
    from analyzer.trace.paddle.tracer import trace_paddle

    model = tmp_path / "loop.py"
    model.write_text(PADDLE_LOOP, encoding="utf-8")
    seen: list[str] = []
    trace_paddle(model, mode="real", steps=3, progress=seen.append)
    assert [x for x in seen if re.match(r"step \d/3: 500 ops so far", x)] == [
        "step 2/3: 500 ops so far"], seen
