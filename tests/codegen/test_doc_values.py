"""The aclnn docs' values for "not given" (opdb/sources/cann/aclnn_doc_values.jsonl, read by
extract_doc_values.py) and their use in opgen: a required aclnn number fed by an unset
framework optional takes the doc's unset value (aclnnUniqueConsecutive: "传入1000表示不指定
维度", which op-plugin UniqueConsecutiveKernelNpuOpApi.cpp passes for torch's unset `dim`),
and one no framework value feeds takes the doc's stated default, with a review TODO."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codegen.api import prepare
from codegen.argmap import FwParam, map_args
from opdb.model import AclnnApi, Param, Source
from tests.codegen.torch_adapter_parts import shipped_db_fixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "opdb" / "sources" / "cann"))
import extract_doc_values  # noqa: E402

db = shipped_db_fixture()

FIXTURE = """\
## 参数说明

<table><thead><tr><th>参数名</th><th>输入/输出</th><th>描述</th><th>使用说明</th></tr></thead>
<tbody>
  <tr>
    <td>self（aclTensor*）</td><td>输入</td><td>输入张量。</td><td>-</td>
  </tr>
  <tr>
    <td>dim（int64_t）</td>
    <td>输入</td>
    <td>去重的维度。取值范围为[-self.dim(), self.dim())，传入1000表示不指定维度（展平）</td>
    <td>-</td>
  </tr>
  <tr>
    <td>scale（double）</td><td>输入</td><td>缩放。</td><td>默认值为1。</td>
  </tr>
  <tr>
    <td>mode（int64_t）</td><td>输入</td><td>模式。</td>
    <td>支持0(none)|1(mean)|2(sum)。当self为空时仅支持传入2。</td>
  </tr>
  <tr>
    <td>groups（int64_t）</td><td>输入</td><td>分组。</td><td>仅支持32/64。</td>
  </tr>
  <tr>
    <td>flag（bool）</td><td>输入</td><td>开关。</td><td>false表示不开启；仅支持传入false。</td>
  </tr>
</tbody></table>

| 参数名 | 输入/输出 | 描述 |
|---|---|---|
| eps（double） | 输入 | 取值为0.0代表不使用该参数。 |

- limit（int64_t，计算输入）：最大长度，
  -1表示不限制。
- count（int64_t，计算输入）：Atlas 训练系列产品：仅支持传入4。
"""

PARAMS = [{"name": n, "type": t} for n, t in [
    ("self", "const aclTensor*"), ("dim", "int64_t"), ("scale", "double"), ("mode", "int64_t"),
    ("groups", "int64_t"), ("flag", "bool"), ("eps", "double"), ("limit", "int64_t"),
    ("count", "int64_t")]]


def test_doc_values_are_read_from_every_table_form():
    rows = extract_doc_values.doc_values({"api": "aclnnX", "params": PARAMS}, FIXTURE)
    got = {(r["param"], r["kind"]): r["value"] for r in rows}
    assert got == {
        ("dim", "unset"): "1000",        # HTML table, after another parameter's `self.dim()`
        ("scale", "default"): "1.0",     # in the double's type
        ("mode", "unset"): "0",          # `0(none)`; `当self为空时` is a condition
        ("flag", "only"): "false",       # a bool has no unset value; `false表示不开启` is its meaning
        ("eps", "unset"): "0.0",         # markdown table
        ("limit", "unset"): "-1",        # a bullet's continuation line
    }  # groups: a list (32/64); count: only on one product
    line = {r["param"]: r["line"] for r in rows}
    assert FIXTURE.split("\n")[line["dim"] - 1].strip() == "<tr>"
    assert [r["phrase"] for r in rows if r["param"] == "dim"] == ["传入1000表示不指定维度（展平）"]


def test_doc_values_extract_is_sorted_and_has_provenance():
    lines = (ROOT / "opdb/sources/cann/aclnn_doc_values.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    assert [r["api"] for r in rows] == sorted(r["api"] for r in rows)
    assert all(set(r["source"]) == {"repo", "commit", "path", "line"} for r in rows)
    uc = [r for r in rows if r["api"] == "aclnnUniqueConsecutive"]
    assert [(r["param"], r["kind"], r["value"]) for r in uc] == [("dim", "unset", "1000")]
    assert uc[0]["source"]["path"] == "index/unique_consecutive/docs/aclnnUniqueConsecutive.md"


def test_extractor_refuses_a_missing_mirror_root(tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    assert extract_doc_values.main(["--mirror-root", str(tmp_path / "none"), "-o", str(out)]) == 2
    assert "is not a directory" in capsys.readouterr().err and not out.exists()


def test_torch_unset_dim_takes_the_doc_value(db):
    r = prepare(db, "aclnnUniqueConsecutive", "torch", op="aten::unique_consecutive")
    cpp = r.files["standalone/src/UniqueConsecutiveKernelNpuOpApi.cpp"]
    assert "int64_t acl_dim = static_cast<int64_t>(dim.value_or(1000));" in cpp
    assert ("// `dim` unset: 1000, the aclnn doc's unset value (hicann/ops-nn "
            "index/unique_consecutive/docs/aclnnUniqueConsecutive.md:109)") in cpp
    assert not any("`dim` unset -> 0" in t for t in r.todos)


@pytest.fixture
def fake_doc(monkeypatch):
    """Doc rows for a made-up API: the mechanism reads the extract, not a name."""
    import opdb.doc_values as dv
    rows = {("aclnnMadeUp", "depth"): {"unset": dv.DocValue("aclnnMadeUp", "depth", "-1", "unset",
                                                            "-1表示不限制", "r d.md:3")},
            ("aclnnMadeUp", "blockSize"): {"default": dv.DocValue(
                "aclnnMadeUp", "blockSize", "0", "default", "默认为0", "r d.md:9")}}
    monkeypatch.setattr(dv, "_rows", lambda: rows)
    return AclnnApi("aclnnMadeUp", (Param("self", "const aclTensor*", "input"),
                                    Param("depth", "int64_t", "input"),
                                    Param("blockSize", "int64_t", "input"),
                                    Param("out", "aclTensor*", "output")), Source("test"))


def test_absent_value_takes_the_doc_default_with_a_review_todo(fake_doc):
    from codegen.cppcall import default_arg
    fw = [FwParam("self", "tensor", "const at::Tensor&"),
          FwParam("depth", "int", "c10::optional<int64_t>", optional=True),
          FwParam("out", "tensor", "at::Tensor&", is_output=True)]
    m = {p.aclnn.name: p for p in map_args(fake_doc, fw, "torch").params}
    assert m["blockSize"].decision == "doc" and m["depth"].decision == "name"
    arg = default_arg(m["blockSize"])
    assert arg.prelude == ["int64_t acl_block_size = 0;  // the aclnn doc's default value (r d.md:9)"]
    assert "passing 0, the aclnn doc's default value (r d.md:9) -- review" in arg.todo


def test_torch_and_paddle_unset_optional_take_the_doc_unset_value(fake_doc):
    from codegen.paddle_target import PaddleDialect
    from codegen.torch_target import TorchDialect
    fw_t = [FwParam("self", "tensor", "const at::Tensor&"),
            FwParam("depth", "int", "c10::optional<int64_t>", optional=True),
            FwParam("out", "tensor", "at::Tensor&", is_output=True)]
    p = {q.aclnn.name: q for q in map_args(fake_doc, fw_t, "torch").params}["depth"]
    a = TorchDialect(api_name="aclnnMadeUp").convert(p, "self")
    assert a.prelude[-1] == "int64_t acl_depth = static_cast<int64_t>(depth.value_or(-1));"
    assert "the aclnn doc's unset value (r d.md:3)" in a.prelude[0] and not a.todo
    fw_p = [FwParam("x", "tensor", "const phi::DenseTensor&"),
            FwParam("depth", "int", "paddle::optional<int>", optional=True),
            FwParam("out", "tensor", "phi::DenseTensor*", is_output=True)]
    p = {q.aclnn.name: q for q in map_args(fake_doc, fw_p, "paddle").params}["depth"]
    a = PaddleDialect(api_name="aclnnMadeUp").convert(p, "x")
    assert a.prelude[-1] == "int64_t acl_depth = static_cast<int64_t>((depth ? *depth : -1));"
