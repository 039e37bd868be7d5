"""The argument mapper and the schema/type classification, on hand-built records."""
from __future__ import annotations

import pytest

from codegen.argmap import FwParam, map_args, norm_param
from codegen.kinds import aclnn_kind, paddle_kind, parse_torch_schema, torch_cpp_type
from codegen.paddle_target import params_from_signature, qualify
from opdb.errors import ParseError
from opdb.model import AclnnApi, Param, Source

SRC = Source("test")


def api(name, *params):
    return AclnnApi(name, tuple(Param(n, t, r) for n, t, r in params), SRC)


def test_norm_param():
    assert norm_param("gradOutput") == "grad_output"
    assert norm_param("maxGradNormOptional") == "max_grad_norm"
    assert norm_param("varRef") == "var"
    assert norm_param("out") == "out"


def test_aclnn_kinds():
    assert aclnn_kind("const aclTensor*") == "tensor"
    assert aclnn_kind("const aclIntArray*") == "int_array"
    assert aclnn_kind("const int64_t") == "int"
    assert aclnn_kind("char*") == "string"
    assert aclnn_kind("void*") == "other"


def test_torch_schema_parse():
    s = parse_torch_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, "
                           "*, ScalarType? dtype=None) -> Tensor")
    assert (s.name, s.overload) == ("aten::sum", "dim_IntList")
    assert [a.name for a in s.args] == ["self", "dim", "keepdim", "dtype"]
    assert s.args[1].kind == "int_array" and s.args[1].optional
    assert s.args[3].kwarg_only and s.args[2].default == "False"
    assert torch_cpp_type(s.args[1]) == "at::OptionalIntArrayRef"
    o = parse_torch_schema("aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    assert o.args[1].mutable and o.returns[0].alias == "a!"
    with pytest.raises(ParseError):
        parse_torch_schema("not a schema")


def test_paddle_kinds_and_signature():
    assert paddle_kind("const paddle::optional<DenseTensor>&") == ("tensor", True, False)
    assert paddle_kind("DenseTensor*") == ("tensor", False, True)
    assert paddle_kind("const std::vector<const DenseTensor*>&")[0] == "tensor_list"
    assert paddle_kind("const IntArray&")[0] == "int_array"
    assert paddle_kind("const Scalar&")[0] == "scalar"
    params = params_from_signature("void K(const Context& dev_ctx, const DenseTensor& x, "
                                   "const std::vector<int>& axis, float eps, DenseTensor* out)")
    assert [(p.name, p.ctype, p.role) for p in params] == [
        ("x", "const DenseTensor&", "input"), ("axis", "const std::vector<int>&", "input"),
        ("eps", "float", "input"), ("out", "DenseTensor*", "output")]
    assert qualify("const std::vector<const DenseTensor*>&") == \
        "const std::vector<const phi::DenseTensor*>&"


def fw(name, kind, cpp="", **kw):
    return FwParam(name, kind, cpp or kind, **kw)


def test_map_by_name_alias_role_and_defaults():
    a = api("aclnnFoo", ("self", "const aclTensor*", "input"),
            ("other", "const aclTensor*", "input"),
            ("alpha", "const aclScalar*", "input"),
            ("biasOptional", "const aclTensor*", "input"),
            ("roundMode", "int8_t", "input"),
            ("out", "aclTensor*", "output"))
    m = map_args(a, [fw("x", "tensor"), fw("y", "tensor"), fw("alpha", "float", "double"),
                     fw("flag", "bool"), fw("result", "tensor", is_output=True, origin="return")])
    got = {p.aclnn.name: (p.fw.name if p.fw else None, p.decision) for p in m.params}
    assert got == {"self": ("x", "alias"), "other": ("y", "alias"), "alpha": ("alpha", "name"),
                   "biasOptional": (None, "default"), "roundMode": (None, "unmapped"),
                   "out": ("result", "alias")}
    # the float -> aclScalar conversion and both defaults are TODOs naming both sides
    todos = "\n".join(m.todos)
    # a double passed as an aclScalar keeps its value: no review needed
    assert "`alpha`" not in todos
    assert "`roundMode` (int8_t) has no framework counterpart" in todos
    # the framework's `flag` feeds nothing: listed, never dropped silently
    assert [u.name for u in m.unused] == ["flag"]
    assert "framework param `flag`" in todos


def test_plain_values_are_never_matched_by_position():
    a = api("aclnnBar", ("self", "const aclTensor*", "input"), ("someFlag", "bool", "input"),
            ("out", "aclTensor*", "output"))
    m = map_args(a, [fw("x", "tensor"), fw("lazy_mode", "bool"),
                     fw("out", "tensor", is_output=True)])
    assert m.params[1].fw is None and m.params[1].decision == "unmapped"
    assert [u.name for u in m.unused] == ["lazy_mode"]


def test_inplace_ref_prefers_written_output_and_records_input():
    a = api("aclnnApplyX", ("varRef", "aclTensor*", "inout"), ("grad", "const aclTensor*", "input"))
    m = map_args(a, [fw("param", "tensor"), fw("grad", "tensor"),
                     fw("param_out", "tensor", is_output=True, inplace_of="param")])
    p = m.params[0]
    assert (p.fw.name, p.fw_input.name, p.decision) == ("param_out", "param", "inplace")
    assert m.unused == []


def test_reviewed_rules_fill_params_upstream_fills():
    """opdb/sources/arg_rules.yaml: aclnnAdd's required `alpha` is 1 when the phi kernel
    has none (never nullptr); `countIncludePad` is `!exclusive`; `cubeMathType` is the
    target's default; LayerNorm's `normalizedShape` comes from x and begin_norm_axis."""
    from codegen.cppcall import call_args
    from codegen.paddle_target import PaddleDialect
    from codegen.torch_target import TorchDialect

    a = api("aclnnPool", ("self", "const aclTensor*", "input"),
            ("alpha", "const aclScalar*", "input"),
            ("normalizedShape", "const aclIntArray*", "input"),
            ("countIncludePad", "bool", "input"), ("cubeMathType", "int8_t", "input"),
            ("out", "aclTensor*", "output"))
    fwp = [fw("x", "tensor", "const phi::DenseTensor&"), fw("exclusive", "bool", "bool"),
           fw("begin_norm_axis", "int", "int"),
           fw("out", "tensor", "phi::DenseTensor*", is_output=True)]
    m = map_args(a, fwp, "paddle")
    got = {p.aclnn.name: p.decision for p in m.params}
    assert got == {"self": "alias", "alpha": "rule", "normalizedShape": "rule",
                   "countIncludePad": "rule", "cubeMathType": "rule", "out": "name"}
    assert m.unused == [] and not any(p.todo for p in m.params)
    lines = [line for c in call_args(m, PaddleDialect(), "x") for line in c.prelude]
    assert lines == [
        "phi::Scalar acl_alpha = 1;",
        "std::vector<int64_t> acl_normalized_shape = phi::vectorize(phi::slice_ddim("
        "x.dims(), begin_norm_axis, x.dims().size()));",
        "bool acl_count_include_pad = !exclusive;",
        "int8_t acl_cube_math_type = 0;"]
    # torch has no begin_norm_axis and no statements for normalizedShape: a TODO, not a guess
    m = map_args(a, [fw("self", "tensor"), fw("exclusive", "bool", "bool"),
                     fw("out", "tensor", is_output=True)], "torch")
    assert {p.aclnn.name: p.decision for p in m.params}["normalizedShape"] == "unmapped"
    cube = [c for c in call_args(m, TorchDialect(), "self") if c.aclnn_name == "cubeMathType"][0]
    assert cube.prelude == ["int8_t acl_cube_math_type = npu_preparation::get_cube_math_type(false);"]


def test_rule_table_has_evidence_and_rejects_bad_entries():
    import pytest as _pytest

    from opdb.arg_rules import load, parse
    from opdb.errors import ParseError

    rules = load()
    assert all(g.evidence for g in rules.aliases) and all(r.evidence for r in rules.rules)
    assert "keep_dim" in rules.alias_map()["keepdim"]
    with _pytest.raises(ParseError, match="evidence"):
        parse({"aliases": [{"names": ["a", "b"], "evidence": ""}]})
    with _pytest.raises(ParseError, match="unexpected keys"):
        parse({"rules": [{"aclnn": "x", "kind": "int", "evidence": "e", "torch": ["int {var};"],
                          "cuda": []}]})


def test_api_scoped_rules_win_over_generic_ones():
    """A convolution follows torch_npu's conv HF32 switch (op-plugin
    ConvolutionKernelNpuOpApi.cpp); other APIs get get_cube_math_type(false)."""
    from opdb.arg_rules import load

    rules = load()
    conv = rules.rules_for("cube_math_type", "int", "aclnnConvolution")[0]
    assert "IsAllowConvHF32" in conv.lines("torch")[0]
    pool = rules.rules_for("cube_math_type", "int", "aclnnAvgPool2d")[0]
    assert pool.lines("torch") == ("int8_t {var} = npu_preparation::get_cube_math_type(false);",)


def test_torch_tensor_feeds_a_required_list_left_unfed_as_one_element_list():
    """argmap pass 3b: op-plugin ScaledGroupMmV2KernelNpuOpApi.cpp passes `mat_a` to
    aclnnGroupedMatmul's `x` as a one-element list; a required list left nullptr fails the
    API's null check. Optional lists and written values never take a tensor this way."""
    a = api("aclnnFooList", ("x", "const aclTensorList*", "input"),
            ("biasOptional", "const aclTensorList*", "input"),
            ("out", "aclTensor*", "output"))
    fws = [fw("self", "tensor"), fw("other", "tensor", optional=True),
           fw("out", "tensor", is_output=True)]
    m = map_args(a, fws, target="torch")
    assert (m.params[0].fw.name, m.params[0].kind) == ("self", "tensor_list")
    assert "matched by position" in m.params[0].todo
    assert m.params[1].fw is None  # optional list: nullptr, never `other`
    # paddle (no target rule) keeps the list unfed
    assert map_args(a, fws, target="paddle").params[0].fw is None


def test_torch_one_element_list_renders_an_arrayref_of_the_tensor():
    from codegen.cppcall import call_args
    from codegen.torch_target import TorchDialect
    a = api("aclnnFooList", ("x", "const aclTensorList*", "input"),
            ("out", "aclTensor*", "output"))
    m = map_args(a, [fw("self", "tensor"), fw("out", "tensor", is_output=True)], target="torch")
    args = call_args(m, TorchDialect(), "self")
    x = args[0]
    assert x.expr == "acl_x" and "at::TensorList acl_x(self);" in x.prelude
    assert "one-element list" in x.todo and "converted" not in x.todo
