"""opscan zoo: sources, per-model processes with limits, the cache (resume), the greedy
backlog, the five formats, and Ray local giving the same backlog as the local pool."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.zoo.backlog import build_backlog
from analyzer.zoo.entries import ZooEntry, expand_sources
from analyzer.zoo.render import render_all, zoo_json
from analyzer.zoo.runner import ZooOptions, run_zoo
from opdb.errors import OpscanError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"
TARGET = "torch_npu==2.13.0"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPSCAN_HOME", str(tmp_path / "home"))


# ---- sources ---------------------------------------------------------------------------

def test_sources_directory_list_files_and_generators(tmp_path):
    (tmp_path / "a.py").write_text("def build():\n    pass\n")
    (tmp_path / "helper.py").write_text("X = 1\n")          # no build(): not a model
    (tmp_path / "_private.py").write_text("def build():\n    pass\n")
    (tmp_path / "list.txt").write_text("# comment\na.py --mode meta --steps 2\n"
                                       "hf:llama --name tiny-llama\n"
                                       "a.py --script -- -c cfg.yml\n")
    (tmp_path / "list.yaml").write_text("models:\n  - timm: resnet18\n  - model: a.py\n"
                                        "    mode: real\n  - script: a.py\n    args: [-c, x.yml]\n")
    entries = expand_sources([str(tmp_path), str(tmp_path / "list.txt"),
                              str(tmp_path / "list.yaml"), "paddle.vision:resnet50"])
    kinds = [(e.kind, e.mode, e.steps, e.args) for e in entries]
    assert kinds == [("file", None, None, ()), ("file", "meta", 2, ()), ("hf", None, None, ()),
                     ("script", None, None, ("-c", "cfg.yml")), ("timm", None, None, ()),
                     ("file", "real", None, ()), ("script", None, None, ("-c", "x.yml")),
                     ("paddle.vision", None, None, ())]
    names = [e.name for e in entries]
    assert len(set(names)) == len(names)  # duplicates made unique
    assert "tiny-llama" in names and "timm:resnet18" in names


@pytest.mark.parametrize("content,suffix,message", [
    ("a.py --bogus\n", ".txt", "unknown option '--bogus'"),
    ("missing.py\n", ".txt", "model file missing.py not found"),
    ("models: [{hf: llama, model: a.py}]\n", ".yaml", "name exactly one of"),
    ("models: [{hf: llama, colour: red}]\n", ".yaml", "unknown key(s) colour"),
    ("models: [{hf: llama, steps: 0}]\n", ".yaml", "steps must be a whole number"),
    ("models: [{hf: llama, mode: fast}]\n", ".yaml", "unknown mode 'fast'"),
    ("models: {a: [\n", ".yaml", "malformed YAML"),
    ("hf:\n", ".txt", "bad generator spec"),
])
def test_bad_sources_are_one_line_errors(tmp_path, content, suffix, message):
    (tmp_path / "a.py").write_text("def build():\n    pass\n")
    lst = tmp_path / f"zoo{suffix}"
    lst.write_text(content)
    with pytest.raises(OpscanError) as err:
        expand_sources([str(lst)])
    assert message in str(err.value) and err.value.hint


def test_missing_source_and_empty_directory(tmp_path):
    with pytest.raises(OpscanError, match="no such file or directory"):
        expand_sources([str(tmp_path / "nope")])
    with pytest.raises(OpscanError, match="no model file"):
        expand_sources([str(tmp_path)])


def test_generator_framework_must_match_the_zoo(tmp_path):
    from analyzer.zoo.cache import ResultCache
    from analyzer.zoo.runner import plan

    with pytest.raises(OpscanError, match="builds a torch model, but this zoo scans paddle"):
        plan(expand_sources(["hf:llama"]), ZooOptions(framework="paddle"),
             ResultCache(tmp_path))


# ---- backlog (synthetic results: the aggregation alone) --------------------------------

def _res(verdicts, islands=(), status="ok", steps=1):
    return {"status": status, "reason": "" if status == "ok" else "boom",
            "report": {"steps": steps, "verdicts": [
                {"op": op, "category": cat, "calls": calls, "action": f"fix {op}"}
                for op, cat, calls in verdicts],
                "islands": [{"ops": ops, "bytes": b, "calls": 1, "transfers": 2}
                            for ops, b in islands]}}


SUP = ("aten::mm", "supported", 4)


def test_greedy_backlog_completes_the_most_models_first():
    results = [
        ("T", "m1", "file", _res([SUP, ("aten::a", "needs-ascendc", 1)], [(["aten::a"], 100)])),
        ("T", "m2", "file", _res([SUP, ("aten::a", "needs-ascendc", 1),
                                  ("aten::b", "cann-available", 2)])),
        ("T", "m3", "file", _res([SUP, ("aten::b", "cann-available", 3)])),
        ("T", "m4", "file", _res([SUP, ("aten::b", "cann-available", 3)])),
        ("T", "m5", "file", _res([SUP, ("aten::c", "dtype-gap", 5), ("aten::b", "cann-available", 1)])),
        ("T", "m6", "file", _res([SUP])),
        ("T", "m7", "file", {"status": "timeout", "reason": "timeout: still running"}),
        ("T", "m8", "file", _res([SUP], status="partial")),
    ]
    bl = build_backlog(results)
    rows = bl.backlog.to_dict(orient="records")
    # b completes m3 and m4 (2 models) before a (m1) and c (m5 after b)
    assert [(r["op"], r["models_affected"], r["completes"], r["resident_after"]) for r in rows] == [
        ("aten::b", 4, 2, 3), ("aten::a", 2, 2, 5), ("aten::c", 1, 1, 6)]
    assert rows[1]["fallback_bytes_per_step"] == 100
    assert rows[0]["calls_per_step"] == 9.0
    models = bl.models.set_index("model")
    assert bool(models.loc["m6", "fully_npu_resident"]) is True
    assert bool(models.loc["m8", "fully_npu_resident"]) is False  # partial: never resident
    assert models.loc["m7", "status"] == "timeout"
    mat = bl.matrix["T"]
    assert list(mat.columns) == ["aten::b", "aten::a", "aten::c"]
    assert mat.loc["m5", "aten::c"] == 5


def test_release_comparison():
    results = [
        ("old", "m1", "file", _res([("aten::a", "needs-ascendc", 1)])),
        ("old", "m2", "file", _res([("aten::b", "needs-ascendc", 1)])),
        ("new", "m1", "file", _res([SUP])),
        ("new", "m2", "file", _res([("aten::b", "needs-ascendc", 1)])),
    ]
    bl = build_backlog(results)
    rel = bl.releases.set_index("op")
    assert rel.loc["aten::a", "arrived_in"] == "new"
    assert rel.loc["aten::b", "arrived_in"] == ""
    tg = bl.targets.set_index("target")
    assert tg.loc["new", "unblocked_vs_previous"] == 1


def test_rendered_formats_are_deterministic():
    results = [("T", "m1", "file", _res([SUP, ("aten::a", "needs-ascendc", 1)]))]
    docs = [render_all(zoo_json(build_backlog(results), {"framework": "torch", "mode": "meta",
                                                         "soc": "ascend910b", "steps": 1}))
            for _ in range(2)]
    assert docs[0] == docs[1]
    assert set(docs[0]) == {"zoo.md", "zoo.html", "zoo.csv", "zoo.xlsx", "zoo.json"}
    assert b"aten::a" in docs[0]["zoo.csv"] and b"<table class=\"heat\">" in docs[0]["zoo.html"]
    import io

    import openpyxl  # the workbook opens in a real reader: sheets, header, frozen pane, heat fill
    wb = openpyxl.load_workbook(io.BytesIO(docs[0]["zoo.xlsx"]))
    assert wb.sheetnames[:3] == ["backlog", "models", "matrix"] and wb.sheetnames[-1] == "targets"
    assert wb["backlog"]["A1"].font.bold and wb["backlog"].freeze_panes == "B2"
    heat = wb["matrix"]
    assert heat["A2"].value == "m1"
    filled = [c for c in heat[2][1:] if c.value is not None]
    assert filled and all(c.fill.fill_type == "solid" for c in filled)
    summary = json.loads(docs[0]["zoo.json"])["summary"]
    assert summary == ["T: 0/1 models fully NPU-resident; 1 gap ops; write first: aten::a "
                       "(1 models, completes 1)"]


# ---- real worker processes -------------------------------------------------------------

def _entries(*names):
    return [ZooEntry(name=n, kind="file", spec=str(FIX / n)) for n in names]


@pytest.mark.slow
def test_failures_are_rows_not_the_end_of_the_run():
    out = run_zoo(_entries("sleeps.py", "aborts.py", "hog.py", "mlp.py"),
                  ZooOptions(framework="torch", targets=[TARGET], mode="real", jobs=2,
                             timeout=20, memory_gb=1.5))
    status = {r.task.entry.name: (r.result["status"], r.result.get("reason", "")) for r in out}
    assert status["sleeps.py"][0] == "timeout" and "--timeout" in status["sleeps.py"][1]
    assert status["aborts.py"][0] == "crash" and "signal 6" in status["aborts.py"][1]
    assert status["hog.py"][0] == "oom" and "--memory" in status["hog.py"][1]
    assert status["mlp.py"][0] == "ok"


@pytest.mark.slow
def test_interrupted_run_resumes_without_rescanning(monkeypatch):
    import analyzer.zoo.runner as runner

    entries = _entries("mlp.py", "gelu_net.py")
    opts = ZooOptions(framework="torch", targets=[TARGET], mode="real", jobs=1)

    def stop_after_first(line, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_zoo(entries, ZooOptions(**{**opts.__dict__, "progress": stop_after_first}))
    started = []
    real = runner.run_worker
    monkeypatch.setattr(runner, "run_worker",
                        lambda payload, *a: started.append(payload["model"]) or real(payload, *a))
    again = run_zoo(entries, opts)
    assert [Path(m).name for m in started] == ["gelu_net.py"]  # mlp.py came from the cache
    assert [r.cached for r in again] == [True, False]
    third = run_zoo(entries, opts)
    assert all(r.cached for r in third) and len(started) == 1


@pytest.mark.slow
def test_cli_writes_five_formats_and_refuses_to_overwrite(tmp_path, capsys):
    from analyzer.cli import main

    out = tmp_path / "zoo"
    argv = ["zoo", str(FIX / "mlp.py"), "--framework", "torch", "--mode", "real", "-o", str(out), "-q"]
    assert main(argv) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(first) == {"zoo.md", "zoo.html", "zoo.csv", "zoo.xlsx", "zoo.json", "zoo-run.json"}
    assert "1/1 models fully NPU-resident" in capsys.readouterr().out
    assert main(argv) != 0
    assert "already exists" in capsys.readouterr().err
    assert main(argv + ["--force"]) == 0
    again = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {k: v for k, v in again.items() if k != "zoo-run.json"} == \
           {k: v for k, v in first.items() if k != "zoo-run.json"}
    with pytest.raises(SystemExit) as usage:  # a usage error, refused by argparse (exit 2)
        main(["zoo", str(FIX / "mlp.py"), "--framework", "torch", "--jobs", "0"])
    assert usage.value.code == 2


@pytest.mark.slow
def test_ray_local_gives_the_same_backlog_as_the_pool(tmp_path):
    import ray  # noqa: F401 - installed by scripts/setup.sh
    from analyzer.cli import main

    common = [str(FIX / "mlp.py"), str(FIX / "gelu_net.py"), "--framework", "torch",
              "--mode", "real", "--target", "torch_npu==2.1.0.post17", "-q"]
    assert main(["zoo", *common, "--jobs", "2", "-o", str(tmp_path / "pool"),
                 "--cache", str(tmp_path / "c1")]) == 0
    assert main(["zoo", *common, "--ray", "local", "--jobs", "2", "-o", str(tmp_path / "ray"),
                 "--cache", str(tmp_path / "c2")]) == 0
    for name in ("zoo.json", "zoo.csv", "zoo.md", "zoo.html", "zoo.xlsx"):
        assert (tmp_path / "pool" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name
    run = json.loads((tmp_path / "ray" / "zoo-run.json").read_text())
    assert run["ray"] == "local" and not any(s["cached"] for s in run["scans"])
