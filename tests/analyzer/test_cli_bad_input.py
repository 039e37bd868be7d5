"""opscan under bad input (issue 8; issue 16 items 3 and 4): refusals before any user code
runs, outputs a model's os.chdir cannot move, one-line errors for what a model raises,
and honest notes on what a run did not cover. Each test failed before the fix."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from analyzer.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"

__import__("torch")  # installed by scripts/setup.sh


def _model(tmp_path: Path, body: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


# a model that leaves a file behind when it runs: proof that user code ran
SIDE_EFFECT = '''
    import pathlib, torch
    pathlib.Path({marker!r}).write_text("ran")
    def build():
        m = torch.nn.Linear(2, 2)
        x = torch.randn(1, 2)
        def step():
            m(x).sum().backward()
        return m, (x,), step
'''


def _side_effect_model(tmp_path):
    marker = tmp_path / "ran.txt"
    return _model(tmp_path, SIDE_EFFECT.format(marker=str(marker))), marker


@pytest.mark.parametrize("setup, argv_tail, needle", [
    ("existing", [], "report.json already exists"),
    ("file", [], "is a file, not a directory"),
    ("none", ["--format", "md,pdf"], "--format: unknown report format 'pdf'"),
    ("ro", [], "is not writable"),
])
def test_outputs_and_arguments_are_refused_before_user_code_runs(tmp_path, capsys, setup,
                                                                  argv_tail, needle):
    model, marker = _side_effect_model(tmp_path)
    out = tmp_path / "out"
    if setup == "existing":
        out.mkdir()
        (out / "report.json").write_text("{}")
    elif setup == "file":
        out.write_text("x")
    elif setup == "ro":
        if os.geteuid() == 0:
            out = Path("/proc/opscan-out")  # unwritable even for root
        else:
            out.mkdir(mode=0o500)
    rc = main([model, "--framework", "torch", "-o", str(out), *argv_tail])
    err = capsys.readouterr().err
    assert rc == 1 and needle in err, err
    assert err.count("\n") == 1
    assert not marker.exists(), "the model ran before the refusal"


def test_messages_spell_the_output_option_as_help_does(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("")
    model, _ = _side_effect_model(tmp_path)
    main([model, "--framework", "torch", "-o", str(tmp_path / "out"), "--format", "md"])
    err = capsys.readouterr().err
    assert "-o/--output" in err and "--out " not in err


def test_steps_zero_is_a_usage_error(tmp_path, capsys):
    model, marker = _side_effect_model(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([model, "--framework", "torch", "--steps", "0"])
    assert exc.value.code == 2 and "argument --steps: must be at least 1" in capsys.readouterr().err


def test_script_args_without_double_dash_get_the_hint(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(FIXTURES / "script_train.py"), "--script", "--framework", "torch",
              "-c", "configs/rec.yml"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "unrecognized arguments: -c configs/rec.yml" in err and "after `--`" in err


def test_script_that_ends_before_steps_exits_partial_with_one_line(tmp_path, capsys):
    rc = main([str(FIXTURES / "script_train.py"), "--script", "--framework", "torch",
               "--steps", "3", "-o", str(tmp_path / "o"), "--format", "json", "--",
               "-c", "x.yml", "--epochs", "2"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "opscan: the script ended after 2 of the 3 optimizer steps asked for with --steps" in err
    assert (tmp_path / "o" / "report.json").exists()


def test_os_chdir_in_the_model_does_not_move_the_reports(tmp_path, capsys, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model = _model(tmp_path, f'''
        import os, torch
        def build():
            os.chdir({str(elsewhere)!r})      # Hydra does this
            m = torch.nn.Linear(2, 2)
            x = torch.randn(1, 2)
            def step():
                m(x).sum().backward()
            return m, (x,), step
    ''')
    monkeypatch.chdir(tmp_path)
    assert main([model, "--framework", "torch", "-o", "out", "--format", "json,md"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "out" / "report.json").exists() and not (elsewhere / "out").exists()
    assert "wrote out/report.json" in out


@pytest.mark.parametrize("raise_stmt, needle", [
    ("raise KeyboardInterrupt", "interrupted"),
    ("raise SystemExit(3)", "raised SystemExit: 3"),
    ("class Stop(BaseException): pass\n            raise Stop('halt')", "raised Stop: halt"),
    ("import sys; sys.setrecursionlimit(200)\n            def f(n): return f(n + 1)\n            f(0)",
     "RecursionError"),
])
def test_base_exceptions_from_the_step_are_short(tmp_path, capsys, raise_stmt, needle):
    model = str(tmp_path / "model.py")
    body = textwrap.dedent(f'''
        import torch
        def build():
            m = torch.nn.Linear(2, 2)
            x = torch.randn(1, 2)
            def step():
                m(x).sum().backward()
            {raise_stmt}
            return m, (x,), step
    ''')
    Path(model).write_text(body)
    old = sys.getrecursionlimit()
    try:
        rc = main([model, "--framework", "torch", "-o", str(tmp_path / "o"), "-q"])
    finally:
        sys.setrecursionlimit(old)
    err = capsys.readouterr().err
    assert rc != 0 and needle in err, err
    assert "Traceback" not in err and len(err.splitlines()) <= 12, err
    assert not (tmp_path / "o").exists()


def test_a_step_without_backward_gets_a_note(tmp_path):
    from analyzer.scan import ScanOptions, scan

    model = _model(tmp_path, '''
        import torch
        def build():
            m = torch.nn.Linear(2, 2)
            x = torch.randn(1, 2)
            def step():
                with torch.no_grad():
                    return m(x).sum()
            return m, (x,), step
    ''')
    report = scan(ScanOptions(model=model, framework="torch")).report
    assert any("never ran backward" in n and "not full training coverage" in n for n in report.notes)
    full = scan(ScanOptions(model=str(FIXTURES / "tiny_mlp.py"), framework="torch")).report
    assert not any("never ran backward" in n for n in full.notes)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_reports_are_written_leaves_old_or_new_never_a_mix(tmp_path, sig):
    """Reports written in a child process that gets the signal in the middle of the set."""
    out = tmp_path / "out"
    out.mkdir()
    old = {n: b"old " + n.encode() for n in ("report.json", "report.md", "report.csv")}
    for n, data in old.items():
        (out / n).write_bytes(data)
    code = textwrap.dedent(f'''
        import os, signal, sys
        from opdb import fsio
        real = fsio._tmp_open
        n = 0
        def slow(dest, data):
            global n
            n += 1
            if n == 2:
                os.kill(os.getpid(), {int(sig)})   # arrives while the set is being written
            return real(dest, data)
        fsio._tmp_open = slow
        real_replace = os.replace
        def replace(a, b):
            real_replace(a, b)
            if os.fspath(b).endswith("report.json"):
                os.kill(os.getpid(), {int(sig)})   # and between two moves into place
        os.replace = replace
        fsio.write_files({str(out)!r}, {{n: b"new " + n.encode() for n in
                         ("report.json", "report.md", "report.csv")}}, force=True)
    ''')
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True)
    assert proc.returncode != 0  # the signal still ends the process, after the writes
    now = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(now) == sorted(old), f"leftovers: {sorted(now)}"
    assert all(v.startswith(b"new ") for v in now.values()), now  # the complete new set


def test_paddle_errors_are_not_preceded_by_the_ccache_warning(tmp_path):
    __import__("paddle")  # installed by scripts/setup.sh
    model = _model(tmp_path, '''
        import paddle
        def build():
            raise ValueError("bad")
    ''')
    proc = subprocess.run([sys.executable, "-m", "analyzer.cli", model, "--framework", "paddle",
                           "-o", str(tmp_path / "o"), "-q"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("opscan: error: "), proc.stderr
    assert "ccache" not in proc.stderr


def test_recursion_in_the_model_prints_a_short_error(tmp_path, capsys):
    model = _model(tmp_path, '''
        def f(n):
            return f(n + 1)
        def build():
            return f(0)
    ''')
    rc = main([model, "--framework", "torch", "-o", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and "RecursionError" in err
    # one line naming the innermost user frame (OPSCAN_DEBUG=1 prints them all)
    assert len(err.splitlines()) == 1 and "model.py:3 in f: return f(n + 1)" in err, err


def test_ctrl_c_while_torch_imports_is_not_lost(tmp_path):
    """torch's C start-up imports numpy and swallows whatever that import raises: a SIGINT
    landing there was lost and the run went on to exit 0 (docs/bad-input.md #25).
    import_framework holds the signal until the import is done. The SIGINT is sent once,
    from an import hook, when torch first asks for numpy."""
    code = textwrap.dedent('''
        import os, signal, sys
        class Once:
            fired = False
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" and not self.fired:
                    self.fired = True
                    os.kill(os.getpid(), signal.SIGINT)
                return None
        sys.meta_path.insert(0, Once())
        from analyzer.trace.entry import import_framework
        try:
            import_framework("torch")
        except KeyboardInterrupt:
            sys.exit(130)
        print("the interrupt was lost")
    ''')
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 130, (proc.returncode, proc.stdout, proc.stderr[-500:])


def test_what_the_model_prints_goes_to_stderr_not_into_the_summary_or_json(tmp_path, capsys):
    """stdout carries opscan's summary line (or a --json document): a model's print()s came
    first on it, and `opscan blacklist --json | jq` failed on "building..."."""
    model = _model(tmp_path, '''
        import torch
        print("module body says hi")
        def build():
            print("building")
            m = torch.nn.Linear(2, 2)
            x = torch.randn(1, 2)
            def step():
                print("step!")
                m(x).sum().backward()
            return m, (x,), step
    ''')
    assert main([model, "--framework", "torch", "--format", "json", "-q", "-o", str(tmp_path / "o")]) == 0
    out, err = capsys.readouterr()
    assert "building" not in out and "step!" not in out and "hi" not in out, out
    assert "building" in err and "step!" in err
    assert out.splitlines()[0].startswith("model.py on torch_npu"), out
