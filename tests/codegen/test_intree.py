"""`opgen ... --check-in-tree DIR` on minimal trees that mirror the real include layout
of PaddleCustomDevice (backends/npu/kernels/funcs/*.h) and op-plugin (op_plugin/utils,
op_plugin/*Interface.h). The stand-in headers in them are opgen's own shims (paddle) and
the torch_npu wheel's op-plugin utils headers (torch), copied at test time, never
committed.
One paddle and one torch compile (-fsyntax-only): the torch one takes ~30 s."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from opdb.errors import OpscanError

from codegen.api import CSRC_DIR, prepare
from codegen.cli import main
from codegen.intree import check_in_tree, first_error, tree_kind



def paddle_tree(root: Path) -> Path:
    funcs = root / "backends" / "npu" / "kernels" / "funcs"
    funcs.mkdir(parents=True)
    for h in (CSRC_DIR / "shim_paddle" / "kernels" / "funcs").glob("*.h"):
        shutil.copy(h, funcs / h.name)
    return root


def torch_tree(root: Path) -> Path:
    from codegen.toolchain import torch_npu_root
    wheel = torch_npu_root() / "include" / "third_party" / "op-plugin" / "op_plugin"
    shutil.copytree(wheel / "utils", root / "op_plugin" / "utils")
    # like a fresh checkout: OpApiInterface.h/AclOpsInterface.h are generated at build
    # time, so the check falls back to opgen's stand-ins and leaves acl_op:: out
    (root / "op_plugin" / "ops" / "opapi").mkdir(parents=True)
    return root


def test_paddle_adapter_compiles_in_tree_and_errors_name_the_line(db, tmp_path):
    tree = paddle_tree(tmp_path / "PaddleCustomDevice")
    r = prepare(db, "aclnnLayerNorm", "paddle", op="layer_norm", layout="in-tree")
    res = check_in_tree(r, tree)
    assert res.ok, res.first_error
    assert res.path == "backends/npu/kernels/layer_norm_kernel.cc" and res.kind == "paddle"
    # a broken adapter: the first error, with file and line, is what the user sees
    key = "in-tree/backends/npu/kernels/layer_norm_kernel.cc"
    bad = dataclasses.replace(r, files={**r.files, key: r.files[key].replace(
        "opgen_alloc<T>(dev_ctx, out);", "opgen_alloc<T>(dev_ctx, not_a_tensor);", 1)})
    res = check_in_tree(bad, tree)
    assert not res.ok
    assert res.first_error.startswith("layer_norm_kernel.cc:") and "not_a_tensor" in res.first_error
    # the tree itself is never written to
    assert sorted(p.name for p in tree.rglob("*") if p.is_file()) == \
        ["conv_util.h", "npu_funcs.h", "npu_op_runner.h"]


@pytest.mark.parametrize("api,op", [("aclnnConvolution", "conv2d"), ("aclnnAdd", "add")])
def test_paddle_conv_and_add_compile_in_tree(db, tmp_path, api, op):
    """conv2d with its grad: zero bias, paddings through conv_util.h's
    UpdatePaddingAndDilation, nullable grad outputs and the std::array outputMask."""
    tree = paddle_tree(tmp_path / "PaddleCustomDevice")
    r = prepare(db, api, "paddle", op=op, layout="in-tree")
    res = check_in_tree(r, tree)
    assert res.ok, res.first_error


def test_torch_adapter_compiles_in_op_plugin_tree(db, tmp_path):
    tree = torch_tree(tmp_path / "op-plugin")
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor", layout="in-tree")
    res = check_in_tree(r, tree)
    assert res.ok, res.first_error
    assert res.path == "op_plugin/ops/opapi/AddKernelNpuOpApi.cpp"


def test_bad_trees_are_one_line_errors(db, tmp_path, capsys):
    with pytest.raises(OpscanError, match="neither a PaddleCustomDevice nor an op-plugin"):
        tree_kind(tmp_path)
    tree = paddle_tree(tmp_path / "pcd")
    r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor", layout="in-tree")
    with pytest.raises(OpscanError, match="PaddleCustomDevice checkout but the adapter is for "
                                          "--target torch"):
        check_in_tree(r, tree)
    rc = main(["aclnn", "aclnnAdd", "--target", "paddle", "--op", "add", "--layout", "in-tree",
               "-o", str(tmp_path / "out"), "--check-in-tree", str(tmp_path / "missing")], db=db)
    assert rc == 1
    assert "no such directory" in capsys.readouterr().err


def test_first_error_picks_the_first_error_line():
    out = ("In file included from a.cc:1:\nx.h:3:5: warning: unused\n"
           "/t/k.cc:12:7: error: 'foo' was not declared in this scope\nk.cc:20:1: error: later\n")
    assert first_error(out) == "k.cc:12: 'foo' was not declared in this scope"
    assert first_error("x.h:1:10: fatal error: acl/acl.h: No such file or directory") == \
        "x.h:1: acl/acl.h: No such file or directory"
