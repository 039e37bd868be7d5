"""analyzer.trace.entry: the build() contract, --script mode, and the errors users see."""
from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.trace.entry import Entry, load_entry, run_script
from analyzer.errors import ModelError
from opdb.errors import OpscanError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "models"


@pytest.fixture(autouse=True)
def _cwd_repo(monkeypatch):
    # Messages show paths relative to the working directory: pin it.
    monkeypatch.chdir(FIX.parents[2])


def rel(name: str) -> str:
    return f"tests/fixtures/models/{name}"


def test_training_entry_runs_a_step():
    e = load_entry(rel("tiny_mlp.py"), "torch")
    assert isinstance(e, Entry) and e.training and e.framework == "torch"
    assert e.path == Path(rel("tiny_mlp.py"))
    loss = e.run_step()
    assert loss.ndim == 0


def test_inference_entry_single_tensor():
    e = load_entry(rel("tiny_infer.py"), "torch")
    assert e.step_fn is None and not e.training
    assert tuple(e.run_step().shape) == (3, 4)


def test_inference_entry_tuple_and_dict_inputs():
    import torch

    lin = torch.nn.Linear(2, 2)
    x = torch.ones(1, 2)
    for inputs in ((x,), [x], {"input": x}, x):
        assert tuple(Entry(lin, inputs, None, Path("m.py"), "torch").run_step().shape) == (1, 2)


def test_eval_style_step_takes_model_and_inputs():
    """The harness convention `step_fn(model, inputs)` works unmodified."""
    e = load_entry(rel("eval_style_step.py"), "torch")
    assert e.training and e.step_arity == 2
    before = [p.detach().clone() for p in e.model.parameters()]
    loss = e.run_step()
    assert loss.ndim == 0
    assert any(not (a == p).all() for a, p in zip(before, e.model.parameters()))  # it trained


def test_dict_build_result_with_step_of_model():
    e = load_entry(rel("dict_build.py"), "torch")
    assert e.training and e.step_arity == 1 and e.run_step().ndim == 0


def test_step_arity_follows_the_signature():
    import functools

    from analyzer.trace.entry import step_arity

    def a(): ...
    def b(model): ...
    def c(model, inputs, scale=1.0): ...
    def d(*args): ...

    class Harness:
        def step(self, model, inputs): ...

    cases = [(a, 0), (b, 1), (c, 2), (d, 0), (Harness().step, 2),
             (functools.partial(c, 1), 1), (print, 0)]
    assert [step_arity(f, "m.py", Path("m.py")) for f, _ in cases] == [n for _, n in cases]
    with pytest.raises(ModelError) as ei:
        step_arity(lambda model, inputs, opt: None, "m.py", Path("m.py"))
    assert str(ei.value) == (
        "m.py: the step function takes (model, inputs, opt); opscan calls step(), step(model) "
        "or step(model, inputs) (give the other parameters defaults or bind them with "
        "functools.partial)")


def test_dict_build_result_errors(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import torch\ndef build():\n    return {'model': torch.nn.Linear(2, 2), "
                 "'inputs': torch.ones(1, 2), 'optimizer': None}\n")
    with pytest.raises(ModelError, match="unexpected key.s. optimizer .use the keys model, "
                                         "inputs, step."):
        load_entry(f, "torch")
    f.write_text("import torch\ndef build():\n    return {'inputs': torch.ones(1, 2)}\n")
    with pytest.raises(ModelError, match="returned a dict without 'model'"):
        load_entry(f, "torch")
    f.write_text("import torch\ndef build():\n    m = torch.nn.Linear(2, 2)\n"
                 "    return {'model': m, 'inputs': (torch.ones(1, 2),)}\n")
    e = load_entry(f, "torch")
    assert not e.training and tuple(e.run_step().shape) == (1, 2)


def _err(name: str, framework: str = "torch") -> ModelError:
    with pytest.raises(ModelError) as ei:
        load_entry(rel(name), framework)
    assert isinstance(ei.value, OpscanError)
    return ei.value


def test_syntax_error_names_file_and_line():
    assert str(_err("broken_syntax.py")) == (
        "tests/fixtures/models/broken_syntax.py:5: syntax error: invalid syntax (fix the model file)")


def test_exception_in_build_shows_only_user_frames():
    assert str(_err("broken_build_raises.py")) == "\n".join([
        "tests/fixtures/models/broken_build_raises.py: build() raised ZeroDivisionError: "
        "integer division or modulo by zero",
        '  File "tests/fixtures/models/broken_build_raises.py", line 11, in build',
        "    model = make_layer(8)",
        '  File "tests/fixtures/models/broken_build_raises.py", line 7, in make_layer',
        "    return nn.Linear(width, width // 0)",
    ])


def test_missing_build():
    assert str(_err("broken_no_build.py")) == (
        "tests/fixtures/models/broken_no_build.py: no build() function (define build() "
        "returning (model, inputs, step_fn), (model, inputs) or a dict with keys model, "
        "inputs, step; or use --script)")


def test_missing_file():
    assert str(_err("nope.py")) == (
        "tests/fixtures/models/nope.py: no such model file (pass the path of your MODEL.py)")


def test_wrong_framework_by_import():
    assert str(_err("broken_wrong_framework.py")) == (
        "tests/fixtures/models/broken_wrong_framework.py: the model imports paddle, not torch "
        "(run with --framework paddle)")
    # ...and the other way round.
    assert str(_err("tiny_mlp.py", "paddle")) == (
        "tests/fixtures/models/tiny_mlp.py: the model imports torch, not paddle "
        "(run with --framework torch)")


def test_wrong_framework_by_returned_objects():
    assert str(_err("broken_wrong_return.py")) == (
        "tests/fixtures/models/broken_wrong_return.py: build() returned a paddle model "
        "(paddle.nn.layer.common.Linear), not torch (run with --framework paddle)")


def test_unknown_framework():
    assert str(_err("tiny_mlp.py", "jax")) == (
        "unknown framework 'jax' (use --framework torch or paddle)")


def test_script_stops_after_n_optimizer_steps():
    seen = []
    r = run_script(rel("script_train.py"), ["-c", "cfg.yml"], 3, "torch", on_step=seen.append)
    assert seen == [1, 2, 3]
    assert r.stopped and r.steps_completed == 3 and r.error is None and not r.partial


def test_script_sees_its_argv_and_restores_ours():
    import sys

    before = list(sys.argv)
    r = run_script(rel("script_train.py"), ["-c", "cfg.yml", "--epochs", "2"], 5, "torch")
    assert sys.argv == before
    assert not r.stopped and r.steps_completed == 2
    assert r.notes == ["the script finished after 2 optimizer step(s) of the 5 requested"]


def test_script_exception_in_step_n_is_partial():
    starts = []
    r = run_script(rel("script_train.py"), ["-c", "cfg.yml", "--fail-at-step", "3"], 5, "torch",
                   on_optimizer_start=starts.append)
    assert starts == [1, 2] and r.steps_completed == 2 and r.partial
    assert str(r.error) == "\n".join([
        "tests/fixtures/models/script_train.py: step 3 of the script raised RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (4x3 and 8x16)",
        '  File "tests/fixtures/models/script_train.py", line 33, in <module>',
        "    main()",
        '  File "tests/fixtures/models/script_train.py", line 22, in main',
        "    out = model(bad_batch)",
    ])


def test_script_bad_arguments_exit_status(capsys):
    r = run_script(rel("script_train.py"), [], 1, "torch")
    assert r.steps_completed == 0 and r.partial
    assert str(r.error).splitlines()[0] == (
        "tests/fixtures/models/script_train.py: the script exited with status 2")
    assert "required: -c/--config" in capsys.readouterr().err


def test_script_syntax_error_raises():
    with pytest.raises(ModelError, match=r"broken_syntax.py:5: syntax error"):
        run_script(rel("broken_syntax.py"), [], 1, "torch")


def test_paddle_script_step_and_minimize_hooks():
    import paddle  # noqa: F401 - installed by scripts/setup.sh
    r = run_script(rel("script_paddle_train.py"), [], 4, "paddle")
    assert r.stopped and r.steps_completed == 4
    r = run_script(rel("script_paddle_train.py"), ["--minimize"], 2, "paddle")
    assert r.stopped and r.steps_completed == 2


def test_framework_is_detected_from_the_imports(tmp_path):
    from analyzer.trace.entry import detect_framework

    assert detect_framework(rel("tiny_mlp.py")) == "torch"
    assert detect_framework(rel("script_paddle_train.py")) == "paddle"
    assert detect_framework("examples/hf_llama_decoder.py") == "torch"  # via transformers
    both = tmp_path / "both.py"
    both.write_text("import torch\nimport paddle\n")
    with pytest.raises(ModelError) as ei:
        detect_framework(both)
    assert str(ei.value).endswith("cannot tell the framework: the file imports both torch "
                                  "and paddle (pass --framework torch or --framework paddle)")


def test_cli_scan_without_framework(tmp_path):
    from analyzer.cli import main

    assert main([rel("tiny_mlp.py"), "--mode", "meta", "-o", str(tmp_path / "o"),
                 "--format", "json"]) == 0
    import json

    assert json.loads((tmp_path / "o" / "report.json").read_text())["framework"] == "torch"
