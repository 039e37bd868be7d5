"""Bad input over every command (opscan and its subcommands, opgen, opdb): each case gives
one bad argument (missing, empty, the wrong kind of path, a corrupt or truncated file,
non-UTF-8 bytes, a negative or huge number) and asserts what DEVELOPERS.md promises:

- a non-zero exit (2 where argparse would say "usage"),
- exactly one line on stderr, starting with the program's name, without a traceback,
  naming the problem (the case's `needle`),
- the working directory byte for byte as it was: no partial output, nothing overwritten or
  deleted (the result cache under $OPSCAN_CACHE is the only thing a command may add).

pytest runs the cases in-process through each CLI's `main()`; `python
tests/test_bad_input_matrix.py [-k SUBSTRING]` runs them as real subprocesses (the console
scripts as users start them) and prints one line per failing case.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
FX = ROOT / "tests" / "fixtures"
MODELS = FX / "models"

TOOLS = {"opscan": "analyzer.cli", "opgen": "codegen.cli", "opdb": "opdb.cli"}
# the `python -m` tools the README and docs/ name (maintainers refresh opdb's sources with them)
TOOLS.update({f"python -m {m}": m for m in (
    "opdb.agreement", "opdb.wheels", "opdb.sources.torch_npu.fetch", "opdb.sources.paddle.extract",
    "opdb.sources.torch.extract_call_limits")})


# --------------------------------------------------------------------------- set-ups
def write(rel: str, data: str | bytes) -> Callable[[Path], None]:
    def setup(t: Path) -> None:
        p = t / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else textwrap.dedent(data).encode())
    return setup


def mkdir(rel: str) -> Callable[[Path], None]:
    return lambda t: (t / rel).mkdir(parents=True, exist_ok=True)


def both(*setups) -> Callable[[Path], None]:
    def setup(t: Path) -> None:
        for s in setups:
            s(t)
    return setup


# a model that leaves a marker when its module body runs: a refusal must come before that
MARKER_MODEL = '''
    import pathlib, torch
    pathlib.Path(__file__).with_name("ran.txt").write_text("ran")
    def build():
        m = torch.nn.Linear(2, 2)
        x = torch.randn(1, 2)
        def step():
            m(x).sum().backward()
        return m, (x,), step
'''
STEP_RAISES = '''
    import torch
    def build():
        m = torch.nn.Linear(2, 2)
        x = torch.randn(1, 2)
        def step():
            raise RuntimeError("the step failed")
        return m, (x,), step
'''
model = write("m.py", MARKER_MODEL)
# a model with sub-modules and no marker (refusals that need the built model: --scope)
SEQ_MODEL = write("q.py", STEP_RAISES.replace("torch.nn.Linear(2, 2)",
                                              "torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())"))
paddle_model = write("p.py", MARKER_MODEL.replace("import pathlib, torch", "import pathlib, paddle"))


def dump_copy(rel: str, edit: Callable[[Path], None] | None = None) -> Callable[[Path], None]:
    """A copy of a real `opscan align dump` of tiny_mlp.py, then `edit` breaks it."""
    def setup(t: Path) -> None:
        shutil.copytree(_reference_dump(), t / rel)
        if edit:
            edit(t / rel)
    return setup


def _dump_json(d: Path) -> Path:
    return next(d.rglob("dump.json"))


_DUMP: list[Path] = []


def _reference_dump() -> Path:
    """One real dump per session (a CPU run of tests/fixtures/models/tiny_mlp.py, ~2 s)."""
    if not _DUMP:
        import tempfile
        out = Path(tempfile.mkdtemp(prefix="opscan-matrix-dump-")) / "dump"
        subprocess.run([sys.executable, "-m", "analyzer.cli", "align", "dump",
                        str(MODELS / "tiny_mlp.py"), "--framework", "torch", "-o", str(out)],
                       check=True, capture_output=True, env=_env(out.parent))
        _DUMP.append(out)
    return _DUMP[0]


# --------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple                   # argv[0] is the tool; {t} = the case's directory, {fx} = fixtures
    needle: str                   # must appear in the one stderr line
    setup: Callable[[Path], None] | None = None
    code: int | None = None       # exact exit status; None: any non-zero
    env: dict = field(default_factory=dict)  # extra environment ({t} expanded)

    def args(self, t: Path) -> list[str]:
        return [a.format(t=t, fx=FX) for a in self.argv]


def C(id, argv, needle, setup=None, code=None, env=None) -> Case:
    return Case(id, tuple(argv.split()) if isinstance(argv, str) else tuple(argv), needle,
                setup, code, env or {})


SCAN = [
    C("scan-model-missing", "opscan {t}/nope.py -f torch -o {t}/out", "nope.py", code=2),
    C("scan-model-is-dir", "opscan {t}/d -f torch -o {t}/out", "directory", mkdir("d"), code=2),
    C("scan-model-empty", "opscan {t}/e.py -f torch -o {t}/out", "build()", write("e.py", ""), code=2),
    C("scan-model-not-python", "opscan {t}/m.txt -f torch -o {t}/out", "m.txt",
      write("m.txt", "this is a README, not a model\n"), code=2),
    C("scan-model-binary", "opscan {t}/m.py -f torch -o {t}/out", "m.py",
      write("m.py", bytes(range(256)) * 4), code=2),
    C("scan-model-non-utf8", "opscan {t}/m.py -f torch -o {t}/out", "m.py",
      write("m.py", b"# caf\xe9\nimport torch\ndef build():\n    return 1\n"), code=2),
    C("scan-model-syntax", ["opscan", str(MODELS / "broken_syntax.py"), "-f", "torch", "-o", "{t}/out"],
      "syntax error", code=2),
    C("scan-model-no-build", ["opscan", str(MODELS / "broken_no_build.py"), "-f", "torch",
                              "-o", "{t}/out"], "build()", code=2),
    C("scan-build-raises", ["opscan", str(MODELS / "broken_build_raises.py"), "-f", "torch",
                            "-o", "{t}/out", "-q"], "ZeroDivisionError", code=2),
    C("scan-step-raises", "opscan {t}/s.py -f torch -o {t}/out -q --mode real", "the step failed",
      write("s.py", STEP_RAISES), code=2),
    C("scan-framework-unknown", "opscan {t}/m.py --framework tensorflow -o {t}/out",
      "--framework", model, code=2),
    C("scan-framework-empty", ["opscan", "{t}/m.py", "--framework", "", "-o", "{t}/out"],
      "--framework", model, code=2),
    C("scan-framework-not-used", "opscan {t}/m.py --framework paddle -o {t}/out", "paddle",
      model, code=2),
    C("scan-steps-zero", "opscan {t}/m.py -f torch --steps 0 -o {t}/out", "--steps", model, code=2),
    C("scan-steps-negative", "opscan {t}/m.py -f torch --steps -3 -o {t}/out", "--steps", model, code=2),
    C("scan-steps-text", "opscan {t}/m.py -f torch --steps many -o {t}/out", "--steps", model, code=2),
    C("scan-steps-huge", "opscan {t}/m.py -f torch --steps 1000000000000 -o {t}/out", "--steps",
      model, code=2),
    C("scan-mode-bad", "opscan {t}/m.py -f torch --mode fast -o {t}/out", "--mode", model, code=2),
    C("scan-soc-bad", "opscan {t}/m.py -f torch --soc ascend999 -o {t}/out", "--soc", model, code=2),
    C("scan-soc-empty", ["opscan", "{t}/m.py", "-f", "torch", "--soc", "", "-o", "{t}/out"],
      "--soc", model, code=2),
    C("scan-target-bad", "opscan {t}/m.py -f torch --target torch_npu==0.0.1 -o {t}/out",
      "torch_npu==0.0.1", model),
    C("scan-target-other-framework", "opscan {t}/m.py -f torch --target PaddleCustomDevice@develop "
      "-o {t}/out", "PaddleCustomDevice", model),
    C("scan-target-empty", ["opscan", "{t}/m.py", "-f", "torch", "--target", "", "-o", "{t}/out"],
      "--target", model, code=2),
    C("scan-format-bad", "opscan {t}/m.py -f torch --format md,pdf -o {t}/out", "--format", model),
    C("scan-format-empty", ["opscan", "{t}/m.py", "-f", "torch", "--format", "", "-o", "{t}/out"],
      "--format", model),
    C("scan-out-exists", "opscan {t}/m.py -f torch --format json -o {t}/out", "--force",
      both(model, write("out/report.json", "{}"))),
    C("scan-out-is-file", "opscan {t}/m.py -f torch -o {t}/out", "file", both(model, write("out", "x"))),
    C("scan-out-unwritable", "opscan {t}/m.py -f torch -o /proc/opscan-out", "/proc/opscan-out", model),
    C("scan-out-empty", ["opscan", "{t}/m.py", "-f", "torch", "-o", ""], "-o/--output", model),
    C("scan-script-without-dashdash", ["opscan", str(MODELS / "script_train.py"), "--script", "-f",
                                       "torch", "-o", "{t}/out", "-c", "x.yml"], "--", code=2),
    C("scan-no-model", "opscan", "model", code=2),
]

CLASSIFY = [
    C("classify-no-ops", "opscan classify -f torch", "ops", code=2),
    C("classify-no-framework", "opscan classify aten::add.Tensor", "--framework", code=2),
    C("classify-unknown-op", "opscan classify aten::no_such_op_xyz -f torch", "no_such_op_xyz", code=2),
    C("classify-empty-op", ["opscan", "classify", "", "-f", "torch"], "op", code=2),
    C("classify-dtype-bad", "opscan classify aten::abs -f torch --dtype float99", "float99"),
    C("classify-soc-bad", "opscan classify aten::abs -f torch --soc x", "--soc", code=2),
    C("classify-target-bad", "opscan classify aten::abs -f torch --target torch_npu==0.0.1",
      "torch_npu==0.0.1"),
    C("classify-target-empty", ["opscan", "classify", "aten::abs", "-f", "torch", "--target", ""],
      "--target", code=2),
    C("classify-huge-name", ["opscan", "classify", "a" * 100000, "-f", "torch"], "aaaa"),
]

BLACKLIST = [
    C("blacklist-model-missing", "opscan blacklist {t}/nope.py -f paddle -o {t}/out", "nope.py", code=2),
    C("blacklist-torch", "opscan blacklist {t}/m.py -f torch -o {t}/out", "paddle", model),
    C("blacklist-out-exists", "opscan blacklist {t}/p.py -f paddle --format json -o {t}/out", "--force",
      both(paddle_model, write("out/report.json", "{}"))),
    C("blacklist-out-is-file", "opscan blacklist {t}/p.py -f paddle -o {t}/out", "file",
      both(paddle_model, write("out", "x"))),
    C("blacklist-steps-negative", "opscan blacklist {t}/m.py -f paddle --steps -1", "--steps", model, code=2),
]

LOG = [
    C("log-missing", "opscan log {t}/nope.log -f paddle -o {t}/out", "nope.log"),
    C("log-is-dir", "opscan log {t}/d -f paddle -o {t}/out", "directory", mkdir("d")),
    C("log-no-framework", "opscan log {t}/a.log -o {t}/out", "--framework", write("a.log", "x\n"), code=2),
    C("log-scan-missing", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --scan {t}/r.json "
      "-o {t}/out", "r.json"),
    C("log-scan-corrupt", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --scan {t}/r.json "
      "-o {t}/out", "r.json", write("r.json", '{"ops": [')),
    C("log-scan-not-a-report", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --scan {t}/r.json "
      "-o {t}/out", "r.json", write("r.json", '[1, 2, 3]')),
    C("log-scan-non-utf8", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --scan {t}/r.json "
      "-o {t}/out", "r.json", write("r.json", b'{"x": "\xff\xfe"}')),
    C("log-scan-is-dir", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --scan {t}/d -o {t}/out",
      "d", mkdir("d")),
    C("log-out-exists", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --format json -o {t}/out",
      "--force", write("out/log.json", "{}")),
    C("log-out-is-file", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle -o {t}/out", "file",
      write("out", "x")),
    C("log-out-empty", ["opscan", "log", "{fx}/logs/paddle_npu_glog.log", "-f", "paddle", "-o", ""],
      "-o/--output", code=2),
    C("log-format-bad", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --format pdf -o {t}/out",
      "--format"),
]

ALIGN = [
    C("align-no-sub", "opscan align", "dump", code=2),
    C("align-bad-sub", "opscan align frobnicate", "frobnicate", code=2),
    C("dump-model-missing", "opscan align dump {t}/nope.py -f torch -o {t}/out", "nope.py"),
    C("dump-no-output", "opscan align dump {t}/m.py -f torch", "-o", model, code=2),
    C("dump-out-not-empty", "opscan align dump {t}/m.py -f torch -o {t}/out", "--force",
      both(model, write("out/keep.txt", "mine"))),
    C("dump-out-is-file", "opscan align dump {t}/m.py -f torch -o {t}/out", "not a directory",
      both(model, write("out", "x"))),
    C("dump-steps-zero", "opscan align dump {t}/m.py -f torch --steps 0 -o {t}/out", "--steps",
      model, code=2),
    C("dump-fault-bad", "opscan align dump {t}/m.py -f torch --fault bogus -o {t}/out", "--fault",
      model),
    C("dump-out-empty", ["opscan", "align", "dump", "{t}/m.py", "-f", "torch", "-o", ""], "--output",
      model, code=2),
    C("dump-inputs-missing", "opscan align dump {t}/m.py -f torch --inputs {t}/nodump -o {t}/out",
      "nodump", model),
    C("dump-seed-negative", "opscan align dump {t}/m.py -f torch --seed -1 -o {t}/out", "--seed",
      model, code=2),
    C("dump-seed-huge", "opscan align dump {t}/m.py -f torch --seed 99999999999999999999 -o {t}/out",
      "--seed", model, code=2),
    C("dump-scope-no-module", "opscan align dump {t}/q.py -f torch --scope layer9 -o {t}/out",
      "--scope layer9", SEQ_MODEL),
    C("dump-seed-text", "opscan align dump {t}/m.py -f torch --seed x -o {t}/out", "--seed", model, code=2),
    C("dump-framework-not-used", "opscan align dump {t}/m.py -f paddle -o {t}/out", "paddle",
      model, code=2),
    C("compare-a-missing", "opscan align compare {t}/nope {t}/b -o {t}/out", "nope", dump_copy("b")),
    C("compare-a-is-file", "opscan align compare {t}/a.txt {t}/b -o {t}/out", "a.txt",
      both(write("a.txt", "x"), dump_copy("b"))),
    C("compare-a-empty-dir", "opscan align compare {t}/a {t}/b -o {t}/out", "dump.json",
      both(mkdir("a"), dump_copy("b"))),
    C("compare-dump-json-broken", "opscan align compare {t}/a {t}/b -o {t}/out", "dump.json",
      both(dump_copy("a", lambda d: _dump_json(d).write_text('{"data": {"Module.fc')), dump_copy("b"))),
    C("compare-dump-json-empty", "opscan align compare {t}/a {t}/b -o {t}/out", "dump.json",
      both(dump_copy("a", lambda d: _dump_json(d).write_text("")), dump_copy("b"))),
    C("compare-dump-json-wrong-shape", "opscan align compare {t}/a {t}/b -o {t}/out", "dump.json",
      both(dump_copy("a", lambda d: _dump_json(d).write_text('{"data": [1, 2]}')), dump_copy("b"))),
    C("compare-dump-json-non-utf8", "opscan align compare {t}/a {t}/b -o {t}/out", "dump.json",
      both(dump_copy("a", lambda d: _dump_json(d).write_bytes(b'{"data": "\xff"}')), dump_copy("b"))),
    C("compare-map-missing", "opscan align compare {t}/a {t}/b --map {t}/map.yaml -o {t}/out",
      "map.yaml", both(dump_copy("a"), dump_copy("b"))),
    C("compare-map-corrupt", "opscan align compare {t}/a {t}/b --map {t}/map.yaml -o {t}/out",
      "map.yaml", both(dump_copy("a"), dump_copy("b"), write("map.yaml", "a: [b\n"))),
    C("compare-map-not-a-mapping", "opscan align compare {t}/a {t}/b --map {t}/map.yaml -o {t}/out",
      "map.yaml", both(dump_copy("a"), dump_copy("b"), write("map.yaml", "- a\n- b\n"))),
    C("compare-step-negative", "opscan align compare {t}/a {t}/b --step -1 -o {t}/out", "--step",
      both(dump_copy("a"), dump_copy("b"))),
    C("compare-step-huge", "opscan align compare {t}/a {t}/b --step 99999 -o {t}/out", "99999",
      both(dump_copy("a"), dump_copy("b"))),
    C("compare-reference-missing", "opscan align compare {t}/a {t}/b --reference {t}/r -o {t}/out",
      "r", both(dump_copy("a"), dump_copy("b"))),
    C("compare-format-bad", "opscan align compare {t}/a {t}/b --format pdf -o {t}/out", "--format",
      both(dump_copy("a"), dump_copy("b"))),
    C("compare-soc-bad", "opscan align compare {t}/a {t}/b --soc x -o {t}/out", "--soc",
      both(dump_copy("a"), dump_copy("b")), code=2),
    C("compare-out-exists", "opscan align compare {t}/a {t}/b --format json --no-repro -o {t}/out",
      "--force", both(dump_copy("a"), dump_copy("b"), write("out/align.json", "{}"))),
]

ZOO = [
    C("zoo-source-missing", "opscan zoo {t}/nope.py -f torch -o {t}/out", "nope.py"),
    C("zoo-list-empty", "opscan zoo {t}/list.txt -f torch -o {t}/out", "list.txt", write("list.txt", "")),
    C("zoo-list-corrupt-yaml", "opscan zoo {t}/list.yaml -f torch -o {t}/out", "list.yaml",
      write("list.yaml", "models: [a\n")),
    C("zoo-list-non-utf8", "opscan zoo {t}/list.txt -f torch -o {t}/out", "list.txt",
      write("list.txt", b"\xff\xfe\x00m\x00")),
    C("zoo-dir-empty", "opscan zoo {t}/d -f torch -o {t}/out", "d", mkdir("d")),
    C("zoo-generator-unknown", "opscan zoo bogus:thing -f torch -o {t}/out", "bogus"),
    C("zoo-jobs-zero", "opscan zoo {t}/m.py -f torch -j 0 -o {t}/out", "--jobs", model, code=2),
    C("zoo-jobs-negative", "opscan zoo {t}/m.py -f torch -j -2 -o {t}/out", "--jobs", model, code=2),
    C("zoo-timeout-negative", "opscan zoo {t}/m.py -f torch --timeout -1 -o {t}/out", "--timeout",
      model, code=2),
    C("zoo-memory-text", "opscan zoo {t}/m.py -f torch --memory lots -o {t}/out", "--memory",
      model, code=2),
    C("zoo-cache-is-file", "opscan zoo {t}/m.py -f torch --cache {t}/c -o {t}/out", "c",
      both(model, write("c", "x"))),
    C("zoo-out-exists", "opscan zoo {t}/m.py -f torch --format json -o {t}/out", "--force",
      both(model, write("out/zoo.json", "{}"))),
    C("zoo-out-is-file", "opscan zoo {t}/m.py -f torch -o {t}/out", "file", both(model, write("out", "x"))),
    C("zoo-format-bad", "opscan zoo {t}/m.py -f torch --format pdf -o {t}/out", "--format", model),
    C("zoo-no-framework", "opscan zoo {t}/m.py -o {t}/out", "--framework", model, code=2),
]

OPGEN = [
    C("opgen-no-sub", "opgen", "aclnn", code=2),
    C("opgen-unknown-api", "opgen aclnn aclnnNoSuchThingXyz --target torch -o {t}/out",
      "aclnnNoSuchThingXyz"),
    C("opgen-empty-api", ["opgen", "aclnn", "", "--target", "torch", "-o", "{t}/out"], "name"),
    C("opgen-unknown-target", "opgen aclnn Abs --target tensorflow -o {t}/out", "--target", code=2),
    C("opgen-soc-bad", "opgen aclnn Abs --target torch --soc ascend999 -o {t}/out", "--soc", code=2),
    C("opgen-layout-bad", "opgen aclnn Abs --target torch --layout flat -o {t}/out", "--layout", code=2),
    C("opgen-pick-zero", "opgen aclnn Abs --target torch --pick 0 -o {t}/out", "--pick"),
    C("opgen-pick-huge", "opgen aclnn Abs --target torch --pick 999 -o {t}/out", "--pick"),
    C("opgen-op-unknown", "opgen aclnn Abs --target torch --op aten::no_such_op -o {t}/out",
      "no_such_op"),
    C("opgen-out-exists", "opgen aclnn Abs --target torch -o {t}/out", "--force",
      write("out/mine.txt", "mine")),
    C("opgen-out-empty", ["opgen", "aclnn", "Abs", "--target", "torch", "-o", ""], "--out", code=2),
    C("opgen-out-is-file", "opgen aclnn Abs --target torch -o {t}/out", "file", write("out", "x")),
    C("opgen-out-unwritable", "opgen aclnn Abs --target torch -o /proc/opgen-out", "/proc/opgen-out"),
    C("opgen-check-in-tree-missing", "opgen aclnn Abs --target paddle --check-in-tree {t}/nope "
      "-o {t}/out", "nope"),
    C("opgen-check-in-tree-file", "opgen aclnn Abs --target paddle --check-in-tree {t}/f -o {t}/out",
      "f", write("f", "x")),
    C("opgen-check-in-tree-not-a-tree", "opgen aclnn Abs --target paddle --check-in-tree {t}/d "
      "-o {t}/out", "PaddleCustomDevice", mkdir("d")),
    C("opgen-from-report-missing", "opgen --from-report {t}/r.json --target torch -o {t}/out", "r.json"),
    C("opgen-from-report-corrupt", "opgen --from-report {t}/r.json --target torch -o {t}/out", "r.json",
      write("r.json", '{"verdicts": [')),
    C("opgen-from-report-wrong-shape", "opgen --from-report {t}/r.json --target torch -o {t}/out",
      "r.json", write("r.json", '{"hello": 1}')),
    C("opgen-from-report-non-utf8", "opgen --from-report {t}/r.json --target torch -o {t}/out",
      "r.json", write("r.json", b"\xff\xfe\xfd")),
    C("opgen-snapshot-missing", "opgen --snapshot {t}/snap aclnn Abs --target torch -o {t}/out", "snap"),
    C("opgen-snapshot-corrupt", "opgen --snapshot {t}/snap aclnn Abs --target torch -o {t}/out", "snap",
      write("snap/manifest.json", "{not json")),
]

OPDB = [
    C("opdb-no-sub", "opdb", "stats", code=2),
    C("opdb-show-no-name", "opdb show", "name", code=2),
    C("opdb-show-unknown", "opdb show no_such_op_xyz", "no_such_op_xyz"),
    C("opdb-show-soc-bad", "opdb show adam --soc x", "--soc", code=2),
    C("opdb-search-empty", ["opdb", "search", ""], "text", code=2),
    C("opdb-search-limit-zero", "opdb search adam --limit 0", "--limit", code=2),
    C("opdb-search-limit-negative", "opdb search adam --limit -5", "--limit", code=2),
    C("opdb-diff-unknown", "opdb diff torch_npu==0.0.1 torch_npu==0.0.2", "torch_npu==0.0.1"),
    C("opdb-diff-garbage", "opdb diff foo bar", "foo"),
    C("opdb-diff-mixed", "opdb diff torch_npu==2.13.0 PaddleCustomDevice@develop", "PaddleCustomDevice"),
    C("opdb-sql-syntax", ["opdb", "sql", "SELEC x"], "SELEC"),
    C("opdb-sql-empty", ["opdb", "sql", ""], "query"),
    C("opdb-corrupt-overlay", "opdb stats", "overlay.sqlite",
      write("home/overlay.sqlite", b"SQLite format 3\x00" + b"\x00" * 100),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-cache-is-file", "opdb stats", "cache", write("cachefile", "x"),
      env={"OPSCAN_CACHE": "{t}/cachefile"}),
    C("opdb-build-sources-missing", "opdb build --sources {t}/nope --out {t}/snap", "nope"),
    C("opdb-build-sources-file", "opdb build --sources {t}/f --out {t}/snap", "f", write("f", "x")),
    C("opdb-build-out-exists", "opdb build --out {t}/snap", "--force",
      write("snap/manifest.json", '{"tables": {}}')),
    C("opdb-build-out-is-file", "opdb build --out {t}/snap", "snap", write("snap", "x")),
    C("opdb-sync-cann-missing", "opdb sync cann --home {t}/nope", "nope", env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-cann-empty", "opdb sync cann --home {t}/d", "d", mkdir("d"),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-wheel-missing", "opdb sync torch-npu --wheel {t}/x.whl", "x.whl",
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-wheel-corrupt", "opdb sync torch-npu --wheel {t}/x.whl", "x.whl",
      write("x.whl", b"PK\x03\x04garbage"), env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-wheel-is-dir", "opdb sync torch-npu --wheel {t}/d", "d", mkdir("d"),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-installed-file", "opdb sync torch-npu --installed {t}/f", "f", write("f", "x"),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-op-plugin-missing", "opdb sync op-plugin --src {t}/nope", "nope",
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-op-plugin-not-a-checkout", "opdb sync op-plugin --src {t}/d --release 0.0.1",
      "op_plugin_functions.yaml",
      mkdir("d"), env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-pcd-empty", "opdb sync paddle-custom-device --src {t}/d", "d", mkdir("d"),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-no-what", "opdb sync", "cann", code=2),
]

# An empty string given for a path or a name (docs/bad-input.md #14-16, #22, #24): Path("")
# is the current directory, where `opdb build -o ""` once wrote the snapshot.
EMPTY = [
    C("empty-opdb-build-out", ["opdb", "build", "-o", ""], "--output", code=2),
    C("empty-opdb-build-sources", ["opdb", "build", "--sources", "", "-o", "{t}/snap"], "--sources", code=2),
    C("empty-opdb-sync-wheel", ["opdb", "sync", "torch-npu", "--wheel", ""], "--wheel", code=2,
      env={"OPSCAN_HOME": "{t}/home"}),
    C("empty-opdb-sync-home", ["opdb", "sync", "cann", "--home", ""], "--home", code=2,
      env={"OPSCAN_HOME": "{t}/home"}),
    C("empty-opdb-show", ["opdb", "show", ""], "name", code=2),
    C("empty-opdb-diff", ["opdb", "diff", "", "torch_npu==2.13.0"], "argument a", code=2),
    C("empty-classify-dtype", ["opscan", "classify", "aten::abs", "-f", "torch", "--dtype", ""], "--dtype",
      code=2),
    C("empty-zoo-source", ["opscan", "zoo", "", "-f", "torch", "-o", "{t}/out"], "sources", code=2),
    C("empty-log-scan", ["opscan", "log", "{fx}/logs/paddle_npu_glog.log", "-f", "paddle", "--scan", ""],
      "--scan", code=2),
    C("empty-compare-map", ["opscan", "align", "compare", "{t}/a", "{t}/b", "--map", "", "-o", "{t}/out"],
      "--map", code=2),
    C("empty-opgen-snapshot", ["opgen", "--snapshot", "", "aclnn", "Abs", "--target", "torch", "-o", "{t}/out"],
      "--snapshot", code=2),
    C("empty-scan-model", ["opscan", "", "-f", "torch", "-o", "{t}/out"], "model", code=2),
]

# Outputs refused before any work (docs/bad-input.md #1-10): a directory where a report file
# goes is refused with --force too, and before the model runs (fsio.check_files); a dump's
# output is checked up its path, its device before the model runs; a comparison's reports
# never go inside a dump.
OUTPUTS = [
    C("scan-force-report-is-dir", "opscan {t}/m.py -f torch --format json --force -o {t}/out",
      "report.json", both(model, mkdir("out/report.json"))),
    C("scan-force-graphml-is-dir", "opscan {t}/m.py -f torch --format json --force -o {t}/out",
      "op_graph.graphml", both(model, mkdir("out/op_graph.graphml"))),
    C("scan-companion-exists", "opscan {t}/m.py -f torch --format csv -o {t}/out", "--force",
      both(model, write("out/fallback_islands.csv", "mine"))),
    C("blacklist-force-report-is-dir", "opscan blacklist {t}/p.py -f paddle --format json --force "
      "-o {t}/out", "report.json", both(paddle_model, mkdir("out/report.json"))),
    C("zoo-force-report-is-dir", "opscan zoo {t}/m.py -f torch --format json --force -o {t}/out",
      "zoo.json", both(model, mkdir("out/zoo.json"))),
    C("log-format-bad-without-output", "opscan log {fx}/logs/paddle_npu_glog.log -f paddle --format pdf",
      "--format"),
    C("dump-out-under-file", "opscan align dump {t}/m.py -f torch -o {t}/f/out", "file in the way",
      both(model, write("f", "x"))),
    C("dump-device-missing", "opscan align dump {t}/m.py -f torch --device npu -o {t}/out", "--device npu",
      model),
    C("dump-step-raises-leaves-no-folder", "opscan align dump {t}/s.py -f torch -o {t}/out",
      "the step failed", write("s.py", STEP_RAISES)),
    C("dump-scope-without-level-op", "opscan align dump {t}/q.py -f torch --scope 0 -o {t}/out",
      "--level op", SEQ_MODEL),
    C("dump-fault-negative-index", "opscan align dump {t}/m.py -f torch --fault gelu:-1 -o {t}/out",
      "--fault", model),
    C("compare-same-dump", "opscan align compare {t}/a {t}/a --no-repro -o {t}/out", "same dump",
      dump_copy("a")),
    C("compare-out-inside-a-dump", "opscan align compare {t}/a {t}/b --no-repro -o {t}/a/rep",
      "inside dump A", both(dump_copy("a"), dump_copy("b"))),
    C("compare-target-unknown", "opscan align compare {t}/a {t}/b --no-repro --target torch_npu==0.0.1 "
      "-o {t}/out", "torch_npu==0.0.1", both(dump_copy("a"), dump_copy("b"))),
]

def _cut_gzip(rel: str, keep: int) -> Callable[[Path], None]:
    def setup(t: Path) -> None:
        import gzip
        (t / rel).write_bytes(gzip.compress((FX / "logs" / "paddle_npu_glog.log").read_bytes())[:keep])
    return setup


# A log that cannot be read as this framework's log is an error, not "no fallback lines"
# (docs/bad-input.md #17-19)
LOG_CONTENT = [
    C("log-empty-file", "opscan log {t}/a.log -f paddle", "empty", write("a.log", "")),
    C("log-binary", "opscan log {t}/a.log -f paddle", "binary", write("a.log", bytes(range(256)) * 16)),
    C("log-gzip-garbage", "opscan log {t}/a.log.gz -f paddle", "gzip", write("a.log.gz", b"\x1f\x8bgarbage")),
    C("log-gzip-cut-before-any-text", "opscan log {t}/a.log.gz -f paddle", "gzip", _cut_gzip("a.log.gz", 12)),
    C("log-torch-log-as-paddle", "opscan log {fx}/logs/torch_npu_run.log -f paddle", "--framework torch"),
    C("log-paddle-log-as-torch", "opscan log {fx}/logs/paddle_npu_glog.log -f torch", "--framework paddle"),
    C("log-same-file-twice", "opscan log {fx}/logs/paddle_npu_glog.log {fx}/logs/paddle_npu_glog.log "
      "-f paddle -o {t}/out", "twice"),
]

# opgen options given before and after `aclnn` with different values, or that exclude each
# other, are usage errors (docs/bad-input.md #11-13)
OPGEN_CONFLICTS = [
    C("opgen-target-twice", "opgen --target paddle aclnn Abs --target torch -o {t}/out", "--target", code=2),
    C("opgen-output-twice", "opgen -o {t}/o1 aclnn Abs --target torch -o {t}/o2", "-o/--output", code=2),
    C("opgen-layout-twice", "opgen --layout in-tree aclnn Abs --target torch --layout standalone -o {t}/out",
      "--layout", code=2),
    C("opgen-soc-twice", "opgen --soc ascend910b aclnn Abs --target torch --soc ascend310p -o {t}/out",
      "--soc", code=2),
    C("opgen-report-and-aclnn", "opgen --from-report {t}/r.json aclnn Abs --target torch -o {t}/out",
      "--from-report", write("r.json", "{}"), code=2),
    C("opgen-check-in-tree-standalone", "opgen aclnn Abs --target paddle --layout standalone "
      "--check-in-tree {t}/d -o {t}/out", "--layout", mkdir("d"), code=2),
]

# zoo inputs refused before any model runs (docs/bad-input.md #21, #23)
ZOO_INPUTS = [
    C("zoo-list-same-model-twice", "opscan zoo {t}/list.txt -f torch -o {t}/out", "listed twice",
      both(model, write("list.txt", "m.py\n./m.py\n"))),
    C("zoo-dir-and-its-file", "opscan zoo {t}/d {t}/d/m.py -f torch -o {t}/out", "listed twice",
      write("d/m.py", MARKER_MODEL)),
    C("zoo-list-names-itself", "opscan zoo {t}/list.txt -f torch -o {t}/out", "do not nest",
      write("list.txt", "list.txt\n")),
    C("zoo-yaml-names-a-list", "opscan zoo {t}/a.yaml -f torch -o {t}/out", "do not nest",
      both(write("a.yaml", "models:\n  - b.txt\n"), write("b.txt", "m.py\n"), model)),
    C("zoo-ray-nothing-listening", "opscan zoo {t}/m.py -f torch --ray 127.0.0.1:1 -o {t}/out",
      "--ray 127.0.0.1:1", model),
    C("zoo-ray-not-an-address", "opscan zoo {t}/m.py -f torch --ray cluster -o {t}/out", "--ray cluster",
      model),
]

# the documented `python -m` tools share the CLI's parser and error boundary (docs/bad-input.md #26)
AGREE, EXTRACT = "python -m opdb.agreement", "python -m opdb.sources.paddle.extract"
PYTHON_M = [
    C("agreement-mirror-root-missing", [AGREE, "--mirror-root", "{t}/nope"], "--mirror-root"),
    C("agreement-mirror-root-empty", [AGREE, "--mirror-root", "{t}/d", "--only", "cann"], "none of the mirrors",
      mkdir("d")),
    C("agreement-mirror-not-a-clone", [AGREE, "--mirror-root", "{t}/d", "--only", "paddle"], "failed in",
      mkdir("d/PaddlePaddle+PaddleCustomDevice/repo")),
    C("agreement-only-bad", [AGREE, "--mirror-root", "{t}", "--only", "bogus"], "--only", code=2),
    C("agreement-examples-negative", [AGREE, "--mirror-root", "{t}", "--examples", "-1"], "--examples",
      code=2),
    C("paddle-extract-repo-missing", [EXTRACT, "--repo", "{t}/nope", "--check"], "nope"),
    C("paddle-extract-repo-is-file", [EXTRACT, "--repo", "{t}/f", "--check"], "f", write("f", "x")),
    C("paddle-extract-no-repo", [EXTRACT], "--repo", code=2),
    C("torch-extract-repo-missing", ["python -m opdb.sources.torch.extract_call_limits", "--repo",
                                     "{t}/nope", "--check"], "nope", code=2),
    C("torch-npu-fetch-cache-empty", ["python -m opdb.sources.torch_npu.fetch", "--cache", "", "--check"],
      "--cache", code=2),
    C("wheels-version-empty", ["python -m opdb.wheels", ""], "versions", code=2),
]

# $OPSCAN_HOME / $OPSCAN_CACHE that cannot be a directory: the error names the variable
ENV_DIRS = [
    C("env-home-is-a-file", ["opdb", "sync", "cann", "--home", str(FX / "cann" / "home")], "OPSCAN_HOME=",
      write("homefile", "x"), env={"OPSCAN_HOME": "{t}/homefile"}),
    C("env-home-under-a-file", ["opdb", "sync", "cann", "--home", str(FX / "cann" / "home")],
      "OPSCAN_HOME=", write("homefile", "x"), env={"OPSCAN_HOME": "{t}/homefile/sub"}),
    C("env-cache-is-a-file", "opscan classify aten::abs -f torch", "OPSCAN_CACHE=", write("cachefile", "x"),
      env={"OPSCAN_CACHE": "{t}/cachefile"}),
    C("env-cache-unwritable", "opdb stats", "OPSCAN_CACHE=", env={"OPSCAN_CACHE": "/proc/opscan-cache"}),
    C("env-xdg-cache-is-a-file", "opdb stats", "the default OPSCAN_CACHE", write("xdg", "x"),
      env={"OPSCAN_CACHE": "", "XDG_CACHE_HOME": "{t}/xdg"}),
]

# an output inside what the command reads, which --force would overwrite (fsio.check_outside)
def _snapshot_copy(rel: str, edit: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(t: Path) -> None:
        from opdb.snapshot import SNAPSHOT_DIR
        shutil.copytree(SNAPSHOT_DIR, t / rel)
        edit(t / rel)
    return setup


def _manifest_version(v) -> Callable[[Path], None]:
    def edit(d: Path) -> None:
        import json
        m = json.loads((d / "manifest.json").read_text())
        (d / "manifest.json").write_text(json.dumps({**m, "schema_version": v}))
    return edit


def _foreign_overlay(rel: str) -> Callable[[Path], None]:
    """An SQLite file with opdb's table names and other columns (another opscan's layout)."""
    def setup(t: Path) -> None:
        import sqlite3

        from opdb.store import TABLE_NAMES
        (t / rel).parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(t / rel)
        for table in TABLE_NAMES:
            con.execute(f"CREATE TABLE {table} (x TEXT)")
        con.commit()
        con.close()
    return setup


LONG_LINES = [
    C("zoo-list-200k-line", "opscan zoo {t}/list.txt -f torch -o {t}/out", "characters cut",
      write("list.txt", "x" * 200_000 + ".py\n")),
    C("log-scan-200k-name", ["opscan", "log", "{fx}/logs/paddle_npu_glog.log", "-f", "paddle", "--scan",
                             "{t}/" + "r" * 5000 + ".json"], "characters cut"),
]

SNAPSHOTS = [
    C("opdb-overlay-other-columns", "opdb stats", "other columns", _foreign_overlay("home/overlay.sqlite"),
      env={"OPSCAN_HOME": "{t}/home"}),
    C("opdb-sync-into-other-overlay", ["opdb", "sync", "cann", "--home", str(FX / "cann" / "home")],
      "overlay.sqlite", _foreign_overlay("home/overlay.sqlite"), env={"OPSCAN_HOME": "{t}/home"}),
    C("opgen-snapshot-schema-version-future", "opgen --snapshot {t}/snap aclnn Abs --target torch -o {t}/out",
      "schema_version 999", _snapshot_copy("snap", _manifest_version(999))),
    C("opgen-snapshot-table-truncated", "opgen --snapshot {t}/snap aclnn Abs --target torch -o {t}/out",
      "aclnn_apis.jsonl", _snapshot_copy("snap", lambda d: (d / "aclnn_apis.jsonl").write_bytes(
          (d / "aclnn_apis.jsonl").read_bytes()[:100000]))),
]

INSIDE_INPUT = [
    C("opdb-build-out-inside-sources", "opdb build --sources {t}/src -o {t}/src/snap --force", "inside the sources",
      mkdir("src")),
    C("opdb-build-force-table-is-dir", "opdb build --force -o {t}/snap", "aclnn_apis.jsonl",
      mkdir("snap/aclnn_apis.jsonl")),
    C("dump-out-is-its-inputs-dump", "opscan align dump {t}/m.py -f torch --inputs {t}/a --force -o {t}/a",
      "--inputs dump", both(model, dump_copy("a", lambda d: (d / "inputs").mkdir()))),
]

CASES = (SCAN + CLASSIFY + BLACKLIST + LOG + ALIGN + ZOO + OPGEN + OPDB + EMPTY + OUTPUTS
         + LOG_CONTENT + OPGEN_CONFLICTS + ZOO_INPUTS + PYTHON_M + ENV_DIRS + INSIDE_INPUT + SNAPSHOTS
         + LONG_LINES)


# --------------------------------------------------------------------------- checks
def state(t: Path) -> dict[str, str]:
    """Every path under `t` with its kind and content digest."""
    out = {}
    for p in sorted(t.rglob("*")):
        rel = str(p.relative_to(t))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def problems(case: Case, code: int, err: str, before: dict, after: dict) -> list[str]:
    found = []
    if code == 0:
        found.append("exit 0")
    elif case.code is not None and code != case.code:
        found.append(f"exit {code}, expected {case.code}")
    lines = err.splitlines()
    if "Traceback" in err:
        found.append("traceback")
    if len(lines) != 1:
        found.append(f"{len(lines)} stderr lines")
    if len(err) > 2200:  # opdb.errors.shorten cuts a quoted input in the middle
        found.append(f"a stderr line of {len(err)} characters")
    prog = case.argv[0]
    if lines and not lines[-1].startswith(prog):
        found.append(f"stderr does not start with {prog!r}")
    if case.needle not in err:
        found.append(f"{case.needle!r} not named")
    if before != after:
        added = sorted(set(after) - set(before))
        gone = sorted(set(before) - set(after))
        changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        found.append(f"files changed: added {added[:4]} removed {gone[:4]} modified {changed[:4]}")
    return found


def _env(t: Path, extra: dict | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPSCAN_HOME=str(t / "home-default"))
    env.setdefault("OPSCAN_CACHE", str(ROOT / ".state" / "cache"))
    env.pop("OPSCAN_DEBUG", None)
    env.update({k: v.format(t=t) for k, v in (extra or {}).items()})
    return env


def _prepare(case: Case, t: Path) -> dict:
    if case.setup:
        case.setup(t)
    return state(t)


# --------------------------------------------------------------------------- pytest (in-process)
def _main(tool: str):
    import importlib
    return importlib.import_module(TOOLS[tool]).main


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One SQLite build of the shipped snapshot for the module (the cache, not the case's files)."""
    return tmp_path_factory.mktemp("opscan-cache")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path, monkeypatch, capsys, shared_cache):
    t = tmp_path / "work"
    t.mkdir()
    monkeypatch.setenv("OPSCAN_HOME", str(t / "home-default"))
    monkeypatch.setenv("OPSCAN_CACHE", str(shared_cache))
    monkeypatch.delenv("OPSCAN_DEBUG", raising=False)
    for k, v in case.env.items():
        monkeypatch.setenv(k, v.format(t=t))
    monkeypatch.chdir(t)
    before = _prepare(case, t)
    modules = set(sys.modules)
    try:
        code = _main(case.argv[0])(case.args(t)[1:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        for name in set(sys.modules) - modules:  # the user's model modules, not opscan's
            if name in ("m", "s", "e") or name.startswith("opscan_user_"):
                sys.modules.pop(name, None)
    err = capsys.readouterr().err
    after = state(t)
    found = problems(case, code, err, before, after)
    assert not found, f"{case.id}: {'; '.join(found)}\nstderr: {err}"


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_a_utf16_log_is_read_not_silently_empty(tmp_path, capsys, bom, codec):
    """PowerShell's `Tee-Object` writes UTF-16: the log used to read as 'no fallback lines'."""
    from analyzer.cli import main
    text = (FX / "logs" / "paddle_npu_glog.log").read_text(encoding="utf-8")
    log = tmp_path / "run.log"
    log.write_bytes(bom + text.encode(codec))
    assert main(["log", str(log), "--framework", "paddle"]) == 0
    plain = main(["log", str(FX / "logs" / "paddle_npu_glog.log"), "--framework", "paddle"])
    out = capsys.readouterr().out.splitlines()
    assert plain == 0 and "3 fallback, 2 blacklisted, 1 failed" in out[0], out
    assert out[0] == next(line for line in out[1:] if line.startswith("1 log file(s)")), out


def test_one_line_model_error_names_the_innermost_user_frame(tmp_path, capsys):
    from analyzer.cli import main
    rc = main([str(MODELS / "broken_build_raises.py"), "-f", "torch", "-q", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert "build() raised ZeroDivisionError" in err
    assert "broken_build_raises.py:7 in make_layer: return nn.Linear(width, width // 0)" in err


def _parsers():
    """Every argparse parser of every command, subcommands included."""
    import argparse

    from analyzer import cli
    from analyzer.align.cli import _compare_parser, _dump_parser
    from analyzer.cli_blacklist import _parser as blacklist
    from analyzer.logscan.cli import _parser as log
    from analyzer.zoo.cli import parser as zoo
    from codegen.cli import _parser as opgen
    from opdb.cli import _parser as opdb

    todo = [cli._scan_parser(), cli._classify_parser(), blacklist(), log(), zoo(), _dump_parser(),
            _compare_parser(), opgen(), opdb()]
    while todo:
        p = todo.pop()
        yield p
        for act in p._actions:
            if isinstance(act, argparse._SubParsersAction):
                todo.extend(act.choices.values())


# options where "" is a real value (an empty list: `--current "$CUSTOM_DEVICE_BLACK_LIST"`), or
# that the library refuses with its own words (`opdb sql ""`: "empty SQL query", as for ";")
EMPTY_IS_A_VALUE = {("opscan blacklist", "--suspect"), ("opscan blacklist", "--current"),
                    ("opdb sql", "query")}


def test_every_option_refuses_an_empty_string_at_parse_time():
    """A path or name option given "" is a usage error (exit 2, `argument X: empty ...`),
    whatever the command: each option's argparse type or choices refuse it."""
    import argparse

    loose = []
    for p in _parsers():
        for act in p._actions:
            if act.nargs == 0 or act.choices or isinstance(act, argparse._SubParsersAction):
                continue
            name = act.option_strings[-1] if act.option_strings else act.dest
            if (p.prog, name) in EMPTY_IS_A_VALUE:
                continue
            try:
                act.type("") if act.type else None
            except argparse.ArgumentTypeError:
                continue
            loose.append(f"{p.prog} {name}")
    assert not loose, f"options that take an empty string: {loose}"


# --------------------------------------------------------------------------- subprocess runner
def run_subprocess(case: Case) -> tuple[Case, list[str], str]:
    import tempfile
    with tempfile.TemporaryDirectory(prefix="opscan-matrix-") as tmp:
        t = Path(tmp) / "work"
        t.mkdir()
        before = _prepare(case, t)
        argv = case.args(t)
        try:
            proc = subprocess.run([sys.executable, "-m", TOOLS[argv[0]], *argv[1:]], cwd=t,
                                  env=_env(t, case.env), capture_output=True, text=True,
                                  errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            return case, ["still running after 120 s"], ""
        after = state(t)
        return case, problems(case, proc.returncode, proc.stderr, before, after), proc.stderr


if __name__ == "__main__":
    import argparse
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(ROOT))  # setups import opdb: not tests/opdb, which sys.path[0] holds
    ap = argparse.ArgumentParser(description="run the bad-input matrix as subprocesses")
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("-v", action="store_true", help="print every case's stderr")
    a = ap.parse_args()
    cases = [c for c in CASES if a.k in c.id]
    if any(c.setup and "dump_copy" in getattr(c.setup, "__qualname__", "") for c in cases) or \
            any(c.id.startswith("compare") for c in cases):
        _reference_dump()
    bad = 0
    with ThreadPoolExecutor(a.j) as pool:
        for case, found, err in pool.map(run_subprocess, cases):
            if found:
                bad += 1
            if found or a.v:
                print(f"{'FAIL' if found else 'ok  '} {case.id}: {'; '.join(found)}")
                for line in err.splitlines()[-6:]:
                    print(f"     | {line[:300]}")
    print(f"{bad} of {len(cases)} cases failed")
    sys.exit(1 if bad else 0)
