"""CLI behaviour: bad names, ambiguity, --pick, existing output, sanitized paths,
atomic writes, --from-report."""
from __future__ import annotations

import json

import pytest

from codegen import api
from codegen.cli import main
from opdb.errors import OpscanError, OutputExists


def test_adam_paddle_and_torch_write_files(db, tmp_path, capsys):
    assert main(["aclnn", "Adam", "--target", "paddle", "-o", str(tmp_path / "p")], db=db) == 0
    assert (tmp_path / "p/in-tree/backends/npu/kernels/adam_kernel.cc").is_file()
    assert (tmp_path / "p/standalone/CMakeLists.txt").is_file()
    assert main(["aclnn", "Adam", "--target", "torch", "-o", str(tmp_path / "t")], db=db) == 0
    assert (tmp_path / "t/in-tree/op_plugin/ops/opapi/NpuApplyAdamKernelNpuOpApi.cpp").is_file()
    assert (tmp_path / "t/in-tree/op_plugin/config/op_plugin_functions.yaml.entry").is_file()
    assert "TODO" in (tmp_path / "t/README.md").read_text()


def test_bad_name_lists_closest(db, tmp_path, capsys):
    assert main(["aclnn", "Abss", "--target", "torch", "-o", str(tmp_path / "x")], db=db) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "no aclnn API matches 'Abss'" in err and "aclnnAbs" in err
    assert not (tmp_path / "x").exists()


def test_ambiguous_lists_signatures_then_pick(db, tmp_path, capsys):
    rc = main(["aclnn", "adamw", "--target", "torch", "-o", str(tmp_path / "a")], db=db)
    err = capsys.readouterr().err
    assert rc == 3
    assert "aclnnStatus aclnnApplyAdamW" in err and "--pick" in err
    assert not (tmp_path / "a").exists()
    assert main(["aclnn", "adamw", "--target", "torch", "--pick", "1",
                 "-o", str(tmp_path / "a")], db=db) == 0


def test_ambiguous_name_without_pick(db):
    from codegen.resolve import AmbiguousName, resolve_api
    with pytest.raises(AmbiguousName) as exc:
        resolve_api(db, "adamw", "torch")
    assert len(exc.value.candidates) > 1
    api_, _, _, _ = resolve_api(db, "adamw", "torch", pick=2)
    assert api_.name == exc.value.candidates[1].name


def test_existing_output_refused_then_forced(db, tmp_path, capsys):
    argv = ["aclnn", "aclnnAbs", "--target", "torch", "--op", "aten::abs", "-o", str(tmp_path / "o")]
    assert main(argv, db=db) == 0
    out = tmp_path / "o"
    assert main(argv, db=db) == 1
    assert "exists (pass --force" in capsys.readouterr().err
    (out / "notes.txt").write_text("mine")        # a file the user added to the generated tree
    (out / "README.md").write_text("stale")
    assert main(argv + ["--force"], db=db) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "README.md").read_text() != "stale"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".o.")]
    assert leftovers == []


def test_force_never_replaces_a_directory_opgen_did_not_write(db, tmp_path, capsys, monkeypatch):
    """Issue 8: `opgen aclnn Adam --target paddle -o . --force` deleted the whole cwd."""
    (tmp_path / "keep.txt").write_text("mine")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print(1)")
    monkeypatch.chdir(tmp_path)
    assert main(["aclnn", "aclnnAbs", "--target", "paddle", "--op", "abs", "-o", ".", "--force"],
                db=db) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was not written by opgen" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "src"]
    assert (tmp_path / "src" / "train.py").read_text() == "print(1)"


def test_generated_tree_has_the_umask_modes(db, tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        assert main(["aclnn", "aclnnAbs", "--target", "torch", "--op", "aten::abs", "-o",
                     str(tmp_path / "o")], db=db) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "o").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "o" / "README.md").stat().st_mode) == 0o644


def test_unknown_op_is_one_line(db, tmp_path, capsys):
    assert main(["aclnn", "aclnnAbs", "--target", "paddle", "--op", "abz", "-o",
                 str(tmp_path / "x")], db=db) == 1
    assert "no paddle op 'abz'" in capsys.readouterr().err


def test_names_are_sanitized_and_paths_cannot_escape(tmp_path):
    assert api.sanitize("../../etc/passwd") == "etc_passwd"
    assert api.sanitize("aten::add.Tensor") == "aten_add_Tensor"
    with pytest.raises(OpscanError):
        api.write_tree({"../evil.txt": "x"}, tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "out").exists()
    (tmp_path / "mine.txt").write_text("x")
    with pytest.raises(OutputExists):
        api.write_tree({"a": "x"}, tmp_path)
    with pytest.raises(OutputExists):
        api.write_tree({"a": "x"}, tmp_path, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_from_report(db, tmp_path, capsys):
    report = {"framework": "torch", "verdicts": [
        {"op": "aten::abs", "category": "cann-available", "candidates": [{"api": "aclnnAbs"}]},
        {"op": "aten::add.Tensor", "category": "supported", "candidates": []},
        {"op": "aten::constant_pad_nd", "category": "cann-available",
         "candidates": [{"api": "aclnnConstantPadNd"}]}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    out = tmp_path / "gen"
    assert main(["--from-report", str(path), "--target", "torch", "-o", str(out)], db=db) == 0
    assert sorted(p.name for p in out.iterdir()) == [".opscan-generated.json", "torch_abs",
                                                     "torch_constant_pad_nd"]
    assert main(["--from-report", str(path), "--target", "paddle", "-o", str(tmp_path / "g2")],
                db=db) == 1
    assert "is a torch report" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--from-report", str(bad), "--target", "torch", "-o", str(tmp_path / "g3")],
                db=db) == 1
    assert "bad.json:1: not JSON" in capsys.readouterr().err


def test_usage_errors(db, capsys):
    assert main(["aclnn", "aclnnAbs"], db=db) == 2
    assert main(["--target", "torch"], db=db) == 2


def test_build_with_in_tree_layout_is_refused_before_writing(db, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["aclnn", "aclnnAbs", "--target", "torch", "--op", "aten::abs", "--layout",
                 "in-tree", "--build", "-o", str(out)], db=db) == 2
    assert "--build needs the standalone layout" in capsys.readouterr().err
    assert not out.exists()


def test_report_of_an_unknown_framework_gets_no_impossible_hint(db, tmp_path, capsys):
    import json as _json
    report = tmp_path / "report.json"
    report.write_text(_json.dumps({"framework": "mxnet", "verdicts": []}))
    assert main(["--from-report", str(report), "--target", "torch", "-o", str(tmp_path / "g")],
                db=db) == 1
    err = capsys.readouterr().err
    assert "neither torch nor paddle" in err and "--target mxnet" not in err


@pytest.mark.parametrize("content", [b"\xff\xfe{", b"[1, 2]", b'{"verdicts": [1]}',
                                     b'{"verdicts": [{"category": "cann-available"}]}',
                                     b"[" * 100000],
                         ids=["not-utf8", "not-object", "verdict-not-object", "no-candidates",
                              "nested-too-deep"])
def test_malformed_report_json_is_one_line(db, tmp_path, capsys, content):
    report = tmp_path / "report.json"
    report.write_bytes(content)
    assert main(["--from-report", str(report), "--target", "torch", "-o", str(tmp_path / "g")],
                db=db) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(report) in err
    assert not (tmp_path / "g").exists()


def test_output_option_is_spelled_as_in_every_opscan_command():
    """`-o/--output` names the output directory in opgen and `opdb build` as in opscan's
    commands (the shared clikit group); `--out`, opgen's first spelling, still works."""
    from pathlib import Path

    from codegen.cli import _parser as opgen_parser
    from opdb.cli import _parser as opdb_parser

    for flag in ("-o", "--output", "--out"):
        assert Path(opgen_parser().parse_args(["aclnn", "Adam", flag, "d"]).out_sub) == Path("d")
        assert Path(opgen_parser().parse_args([flag, "d", "aclnn", "Adam"]).out) == Path("d")
        assert Path(opdb_parser().parse_args(["build", flag, "d"]).out) == Path("d")
    assert "-o OUT, --output OUT, --out OUT" in opgen_parser().format_help()
