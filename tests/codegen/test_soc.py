"""`opgen --soc`: the dtypes registered (paddle) and tested (both targets) are the aclnn
API's on that chip, from the per-product restrictions of the aclnn docs
(opdb/sources/cann/aclnn_soc_dtypes.jsonl). aclnnAdd: BFLOAT16 everywhere but the
Atlas training series (ascend910)."""
from __future__ import annotations

import sys

import pytest

from codegen.api import prepare
from codegen.cli import main

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]
                       / "opdb" / "sources" / "cann"))
import extract_soc_dtypes  # noqa: E402


def _registration(r, op):
    k = r.files[f"in-tree/backends/npu/kernels/{op}_kernel.cc"]
    return k[k.index(f"PD_REGISTER_PLUGIN_KERNEL({op},"):].split(")")[0]


def test_paddle_registers_the_chips_dtypes(db):
    a2 = prepare(db, "aclnnAdd", "paddle", op="add")
    a1 = prepare(db, "aclnnAdd", "paddle", op="add", soc="ascend910")
    assert "phi::dtype::bfloat16" in _registration(a2, "add")
    reg = _registration(a1, "add")
    assert "phi::dtype::bfloat16" not in reg and "phi::dtype::float16" in reg
    readme = a1.files["README.md"]
    assert "- SoC: ascend910\n" in readme
    assert ("aclnnAdd on ascend910: dtypes cut by hicann/ops-math "
            "math/add/docs/aclnnAdd&aclnnInplaceAdd.md:184") in readme
    assert "(no per-chip dtype restriction in the aclnn docs applies)" in a2.files["README.md"]


def test_torch_test_dtypes_follow_the_chip(db):
    def dtypes(soc):
        r = prepare(db, "aclnnAdd", "torch", op="aten::add.Tensor", soc=soc)
        test = next(v for k, v in r.files.items() if k.startswith("standalone/tests/test_"))
        return next(line for line in test.splitlines() if line.startswith("DTYPES"))
    assert dtypes("a2") == "DTYPES = ['float32', 'float16', 'bfloat16']"
    assert dtypes("910") == "DTYPES = ['float32', 'float16']"


def test_bad_soc_is_a_one_line_error(db, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:  # a usage error, as in opscan and opdb (exit 2)
        main(["aclnn", "aclnnAdd", "--target", "paddle", "--op", "add", "-o",
              str(tmp_path / "o"), "--soc", "ascend999"], db=db)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown SoC 'ascend999'" in err[0] and "ascend910b" in err[0]
    assert not (tmp_path / "o").exists()


def test_extractor_reads_allow_and_deny_lines():
    text = ("  - <term>Atlas 推理系列产品</term>、<term>Atlas 训练系列产品</term>："
            "数据类型支持FLOAT、FLOAT16。\n"
            "- <term>Atlas 训练系列产品</term>：不支持BFLOAT16数据类型。\n"
            "- <term>Atlas A2 训练系列产品/Atlas A2 推理系列产品</term>：支持\n"
            "- <term>Atlas 训练系列产品</term>：`selfRef`数据类型支持FLOAT16\n")
    assert extract_soc_dtypes.restrictions(text) == [
        {"line": 1, "products": ["Atlas 推理系列产品", "Atlas 训练系列产品"],
         "allow": ["FLOAT", "FLOAT16"], "param": None},
        {"line": 2, "products": ["Atlas 训练系列产品"], "deny": ["BFLOAT16"], "param": None},
        {"line": 4, "products": ["Atlas 训练系列产品"], "allow": ["FLOAT16"],
         "param": "selfRef"}]


@pytest.mark.parametrize("soc,expected", [("ascend910b", ["float32", "float16", "bfloat16"]),
                                          ("ascend910", ["float32", "float16"]),
                                          ("ascend310p", ["float32", "float16"])])
def test_soc_dtypes_of_gelu(soc, expected):
    from opdb.soc_dtypes import soc_dtypes
    keep, why = soc_dtypes("aclnnGelu", soc, ["float32", "float16", "bfloat16"], "self")
    assert keep == expected
    assert bool(why) == (soc != "ascend910b")


# the nested form, as in hicann/ops-nn pooling/max_pool3d_grad_with_argmax/docs/
# aclnnMaxPool2dWithIndicesBackward.md:213-226 and ops-transformer's IncreFlashAttention doc
NESTED = """\
  <!-- npu="950" id7 -->
  - <term>Ascend 950PR/Ascend 950DT</term>：
    - gradOutput和self数据类型支持FLOAT、FLOAT16、BFLOAT16，数据格式支持ND、NCHW、NHWC。
    - indices数据类型支持INT32、INT64。
    - 支持dilation中的元素值大于0，支持1维或者2维输入。

  <!-- end id7 -->
  - <term>Atlas A2 训练系列产品/Atlas A2 推理系列产品</term>、<term>Atlas A3 训练系列产品/Atlas A3 推理系列产品</term>：
    - 当输入数据类型为FLOAT32时不支持cubeMathType=0；
    - indices数据类型支持INT32。仅支持dilation为（1，1）。
    - query数据类型支持FLOAT16、BFLOAT16，attentionOut、key和value数据类型支持FLOAT16、INT8。
    - 参数`x1`、`gamma`的数据类型不支持BFLOAT16。
      - 不支持INT8数据类型。
- **返回值：**
"""


def test_extractor_reads_nested_bullets_under_a_product_heading():
    rows = [(r["line"], r["param"], r.get("allow") or ("deny", r["deny"]))
            for r in extract_soc_dtypes.restrictions(NESTED)]
    assert rows == [
        (3, "gradOutput", ["FLOAT", "FLOAT16", "BFLOAT16"]),
        (3, "self", ["FLOAT", "FLOAT16", "BFLOAT16"]),
        (4, "indices", ["INT32", "INT64"]),
        (10, "indices", ["INT32"]),
        (11, "query", ["FLOAT16", "BFLOAT16"]),
        (11, "attentionOut", ["FLOAT16", "INT8"]),
        (11, "key", ["FLOAT16", "INT8"]),
        (11, "value", ["FLOAT16", "INT8"]),
        (12, "x1", ("deny", ["BFLOAT16"])),
        (12, "gamma", ("deny", ["BFLOAT16"]))]  # the condition (line 9), the grand-child (13): not read
    r = extract_soc_dtypes.restrictions(NESTED)[3]
    assert r["nested"] and r["products"][1].startswith("Atlas A3")


def test_nested_rows_are_kept_only_where_the_cpp_confirms_them():
    code = {("aclnnX", "self"): {"ascend910b": (["FLOAT", "FLOAT16"], "x.cpp:7"),
                                 "ascend910_93": (["FLOAT", "FLOAT16"], "x.cpp:7")}}
    socs = {"A2": ["ascend910b"], "A3": ["ascend910_93"], "950": ["ascend950"]}.get

    def row(param, products, **kw):
        return {"api": "aclnnX", "param": param, "products": products, **kw,
                "source": {"line": 5}}
    ok = row("self", ["A2", "A3"], deny=["BFLOAT16"])
    assert extract_soc_dtypes.review(ok, code, {}, socs) is None
    assert ok["confirmed_by"] == "x.cpp:7"
    assert "accepts ['FLOAT16']" in extract_soc_dtypes.review(
        row("self", ["A2"], allow=["FLOAT32"]), code, {}, socs)
    assert "no C++ list for ascend950" in extract_soc_dtypes.review(
        row("self", ["950"], deny=["BFLOAT16"]), code, {}, socs)
    assert "no per-chip list" in extract_soc_dtypes.review(
        row("out", ["A2"], deny=["BFLOAT16"]), code, {}, socs)
    assert extract_soc_dtypes.review(row("out", ["A2"], deny=["BFLOAT16"]), code,
                                     {("aclnnX", "out", 5): "x.cpp:9"}, socs) is None


@pytest.mark.parametrize("soc,param,expected", [
    ("ascend910b", "indices", ["int32"]), ("ascend950", "indices", ["int32", "int64"]),
    ("ascend910b", "self", ["float32"]), ("ascend950", "self", ["float32", "float16", "bfloat16"])])
def test_soc_dtypes_of_the_max_pool_backward(soc, param, expected):
    from opdb.soc_dtypes import soc_dtypes
    union = ["int32", "int64"] if param == "indices" else ["float32", "float16", "bfloat16"]
    keep, why = soc_dtypes("aclnnMaxPool2dWithIndicesBackward", soc, union, param)
    assert keep == expected


def test_extractor_refuses_a_missing_mirror_root(tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    with pytest.raises(SystemExit) as exc:
        extract_soc_dtypes.main(["--mirror-root", str(tmp_path / "none"), "-o", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a directory" in err[0]
    assert not out.exists()
