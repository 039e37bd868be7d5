"""`opgen ... --check-in-tree DIR`: compile the generated adapter with `-fsyntax-only`
as if it sat inside a real PaddleCustomDevice or op-plugin checkout, and report the
first compiler error.

The tree is never written to: the generated file is compiled from a temp dir at the
path it would have in the tree, with the tree's own include roots first
(PaddleCustomDevice: `backends/npu`; op-plugin: the checkout root), then what the real
build gets from outside the tree:
- paddle: the installed Paddle wheel's headers (plus opgen's forced prelude for two
  wheel packaging problems, see csrc/opgen/paddle_prelude.h, and a glog stand-in
  when the system has none);
- torch: torch's and the torch_npu 2.13.0 wheel's headers, `-DCURRENT_VERSION=V2R13`,
  and opgen's stand-ins for the two headers op-plugin generates at build time
  (`op_plugin/OpApiInterface.h`, `AclOpsInterface.h`) when the tree has none; without
  a generated AclOpsInterface.h the `DO_COMPATIBILITY(..., acl_op::...)` lines are
  compiled out (-DOPGEN_STANDALONE): nothing declares acl_op:: then;
- CANN: `$ASCEND_HOME_PATH/include` when set, else the CANN headers the torch_npu wheel
  ships (`include/third_party/acl/inc`, `hccl/inc`) as stand-ins.
opgen's runtime headers come last, only for trees that lack a header they provide.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from opdb.errors import OpscanError

from codegen.api import CSRC_DIR, TORCH_NPU_VERSION_MACRO, Rendered


@dataclass(frozen=True)
class InTreeCheck:
    """The result: `ok`, the tree kind, the file's path inside the tree, the first
    error line (empty when ok), the command run and how long it took."""

    ok: bool
    kind: str
    path: str
    first_error: str
    command: tuple[str, ...]
    seconds: float

    def summary(self) -> str:
        if self.ok:
            return (f"in-tree check passed: {self.path} compiles with -fsyntax-only in the "
                    f"{self.kind} tree ({self.seconds:.1f}s)")
        return f"in-tree check failed for {self.path}: {self.first_error}"


def tree_kind(tree: Path) -> str:
    """`paddle` for a PaddleCustomDevice checkout, `torch` for an op-plugin one."""
    if (tree / "backends" / "npu" / "kernels").is_dir():
        return "paddle"
    if (tree / "op_plugin" / "utils").is_dir() or (tree / "op_plugin" / "ops").is_dir():
        return "torch"
    raise OpscanError(f"{tree} is neither a PaddleCustomDevice nor an op-plugin checkout",
                      hint="pass the repository root (it holds backends/npu/kernels or "
                           "op_plugin/)")


def _cann_dirs() -> list[Path]:
    home = os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")
    if home and (Path(home) / "include").is_dir():
        return [Path(home) / "include", Path(home) / "include" / "aclnn"]
    from codegen.toolchain import torch_npu_root
    inc = torch_npu_root() / "include"
    return [inc / "third_party" / "acl" / "inc", inc / "third_party" / "hccl" / "inc"]


def _cann_after() -> list[str]:
    """The wheel's hccl.h includes `third_party/hccl/inc/...` relative to the wheel's
    include/: searched last, so none of its other headers shadows the tree's."""
    if os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME"):
        return []
    from codegen.toolchain import torch_npu_root
    return ["-idirafter", str(torch_npu_root() / "include")]


def _has_glog() -> bool:
    return any(Path(p, "glog", "logging.h").is_file()
               for p in ("/usr/include", "/usr/local/include"))


def compile_flags(kind: str, tree: Path) -> list[str]:
    """Include roots and defines for a file of `kind` inside `tree` (tree first)."""
    flags = ["-std=c++17", "-fsyntax-only", "-Wno-deprecated-declarations"]
    if kind == "paddle":
        from codegen.toolchain import paddle_include_dir
        inc = paddle_include_dir()
        flags += ["-I", str(tree / "backends" / "npu"), "-I", str(tree)]
        flags += ["-include", str(CSRC_DIR / "paddle_prelude.h")]
        import sysconfig
        # PaddleCustomDevice's build puts Python's headers on the path (pybind11 via phi)
        flags += ["-isystem", str(inc), "-isystem", str(inc / "third_party"),
                  "-isystem", sysconfig.get_paths()["include"]]
        if not _has_glog():
            flags += ["-isystem", str(CSRC_DIR / "compat")]
        for d in _cann_dirs():
            flags += ["-isystem", str(d)]
        flags += _cann_after()
        flags += ["-idirafter", str(CSRC_DIR / "shim_paddle"), "-idirafter", str(CSRC_DIR.parent)]
        return flags
    import torch
    import torch.utils.cpp_extension as ext

    from codegen.toolchain import torch_npu_root
    npu = torch_npu_root() / "include"
    flags += ["-I", str(tree)]
    if not (tree / "op_plugin" / "AclOpsInterface.h").is_file():
        # op-plugin generates AclOpsInterface.h at build time: without it the acl_op::
        # fallbacks cannot be declared, so their DO_COMPATIBILITY lines are left out
        flags += ["-DOPGEN_STANDALONE"]
    flags += [f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
              f"-DCURRENT_VERSION={TORCH_NPU_VERSION_MACRO}"]
    import sysconfig
    for p in ext.include_paths() + [sysconfig.get_paths()["include"]]:
        flags += ["-isystem", p]
    flags += ["-isystem", str(npu)]
    for d in _cann_dirs():
        flags += ["-isystem", str(d)]
    flags += ["-idirafter", str(npu / "third_party" / "op-plugin"),
              "-idirafter", str(CSRC_DIR / "shim_torch"), "-idirafter", str(CSRC_DIR.parent)]
    return flags


_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<msg>.*)$",
                    re.M)


def first_error(output: str) -> str:
    m = _ERROR.search(output)
    if m:
        return f"{Path(m['file']).name}:{m['line']}: {m['msg'].strip()}"
    lines = [x for x in output.splitlines() if x.strip()]
    return lines[0] if lines else "the compiler failed without a message"


def check_tree(tree: Path, target: str) -> tuple[Path, str]:
    """(absolute tree, its kind) when `tree` is a checkout for `target`; OpscanError naming
    the fix otherwise. Needs nothing rendered: `opgen` calls it before writing anything."""
    tree = Path(tree).resolve()
    if not tree.is_dir():
        what = "is not a directory" if tree.exists() else "no such directory"
        raise OpscanError(f"--check-in-tree {tree}: {what}", hint="pass a PaddleCustomDevice or "
                          "op-plugin checkout to --check-in-tree")
    kind = tree_kind(tree)
    if kind != target:
        raise OpscanError(f"{tree} is a {'PaddleCustomDevice' if kind == 'paddle' else 'op-plugin'}"
                          f" checkout but the adapter is for --target {target}",
                          hint=f"use --target {kind} or another tree")
    return tree, kind


def check_in_tree(rendered: Rendered, tree: Path, compiler: str | None = None,
                  timeout: int = 600) -> InTreeCheck:
    """Compile the rendered in-tree adapter inside `tree` with -fsyntax-only."""
    tree, kind = check_tree(tree, rendered.target)
    files = [k for k in rendered.files if k.startswith("in-tree/") and k.endswith((".cc", ".cpp"))]
    if not files:
        raise OpscanError("nothing to check: the in-tree adapter was not rendered",
                          hint="use --layout in-tree or both")
    rel = files[0][len("in-tree/"):]
    cxx = compiler or os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        raise OpscanError("no C++ compiler found", hint="install g++ or set CXX")
    with tempfile.TemporaryDirectory(prefix="opgen-intree-") as tmp:
        src = Path(tmp) / rel
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(rendered.files[files[0]])
        cmd = [cxx, *compile_flags(kind, tree), str(src)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise OpscanError(f"the in-tree check of {rel} took over {timeout}s")
        secs = time.perf_counter() - t0
    out = (proc.stderr or "") + (proc.stdout or "")
    ok = proc.returncode == 0
    return InTreeCheck(ok, kind, rel, "" if ok else first_error(out), tuple(cmd), secs)
