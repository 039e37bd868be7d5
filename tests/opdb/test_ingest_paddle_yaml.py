"""Paddle op YAML: fixtures in the real format and the shared copies of the real files."""
from __future__ import annotations

from pathlib import Path

import pytest

from opdb.errors import OpscanError, ParseError
from opdb.ingest.paddle_yaml import (KernelFunc, Location, YamlArg, YamlOutput, load_op_compat,
                                     load_op_file, load_yaml_dir, parse_args, parse_kernel_funcs,
                                     parse_outputs)
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "paddle"
SHARED = (REPO_SOURCES / "paddle/yaml")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} not present")
HERE = Location("t.yaml", 7)


@pytest.fixture(scope="module")
def fix():
    return load_yaml_dir(FIX / "yaml")


def test_parse_args_defaults_and_types():
    args = parse_args('(Tensor x, Tensor[] xs, Scalar beta1 = 0.9f, IntArray shape = {}, '
                      'str fmt = "N,C", int[] axis = {0, 1}, Scalar(int64_t) k=1)', HERE)
    assert args == (YamlArg("x", "Tensor"), YamlArg("xs", "Tensor[]"),
                    YamlArg("beta1", "Scalar", "0.9f"), YamlArg("shape", "IntArray", "{}"),
                    YamlArg("fmt", "str", '"N,C"'), YamlArg("axis", "int[]", "{0, 1}"),
                    YamlArg("k", "Scalar(int64_t)", "1"))
    with pytest.raises(ParseError, match=r"t.yaml:7: cannot parse argument 'Tensor'"):
        parse_args("(Tensor)", HERE)
    with pytest.raises(ParseError, match=r"t.yaml:7: args must be"):
        parse_args("Tensor x", HERE)


def test_parse_outputs_and_kernels():
    assert parse_outputs("Tensor[](out){x.size()}, Tensor(found)", HERE) == (
        YamlOutput("out", "Tensor[]", "x.size()"), YamlOutput("found", "Tensor"))
    assert parse_outputs("Tensor", HERE) == (YamlOutput("out", "Tensor"),)
    assert parse_kernel_funcs("isnan {dense -> dense}, isnan_sr {selected_rows -> "
                              "selected_rows}", HERE) == (
        KernelFunc("isnan", "{dense -> dense}"),
        KernelFunc("isnan_sr", "{selected_rows -> selected_rows}"))
    # the real files sometimes omit the comma between entries
    assert [k.name for k in parse_kernel_funcs("a {dense -> dense} b {x -> y}", HERE)] == ["a", "b"]
    with pytest.raises(ParseError, match="t.yaml:7: cannot parse output"):
        parse_outputs("Tensor(out", HERE)


def test_fixture_catalog(fix):
    adam = fix.op("adam_")
    assert adam.location == Location("ops.yaml", 3)
    assert adam.kernel_names == ("adam", "adam_dense_param_sparse_grad")
    assert adam.kernel_data_type == "param"
    assert ("param", "param_out") in adam.inplace
    assert next(a for a in adam.args if a.name == "master_param").optional
    assert next(a for a in adam.args if a.name == "beta1").default == "0.9f"
    assert fix.kernel_names("adam_") == ("adam", "adam_dense_param_sparse_grad")
    assert fix.kernel_names("matmul_v2") == ("matmul",)   # fluid name
    assert fix.kernel_names("relu_") == ("relu",)         # inplace API
    assert fix.kernel_names("share_buffer_like") == ()    # invoke, no kernel
    assert fix.op("reshape").outputs[1].intermediate
    assert fix.op("matmul_grad").forward == "matmul"
    assert fix.op("matmul").backward == ("matmul_grad",)


def test_kinds(fix):
    assert fix.kind("adam_") == "optimizer"
    assert fix.kind("adam") == "optimizer"                 # kernel of an optimizer op
    assert fix.kind("adam_dense_param_sparse_grad") == "optimizer"
    assert fix.kind("sgd_") == "optimizer"
    assert fix.kind("check_finite_and_unscale_") == "forward"
    assert fix.kind("matmul_grad") == "backward"
    assert fix.kind("matmul_v2_grad") == "backward"
    assert fix.kind("conv2d_grad") == "backward"           # not in the YAML: by name
    assert fix.kind("relu") == "forward" and fix.kind("relu_") == "forward"


def test_compat(fix):
    assert fix.fluid_aliases("matmul") == ("matmul_v2",)
    assert fix.fluid_aliases("matmul_grad") == ("matmul_v2_grad",)
    assert fix.fluid_aliases("relu") == ()
    assert fix.phi_name("matmul_v2_grad_grad") == "matmul_double_grad"
    assert fix.arg_renames("matmul") == {"x": "X", "y": "Y", "out": "Out",
                                         "transpose_x": "trans_x", "transpose_y": "trans_y"}
    # a repeated entry merges (the real op_compat.yaml repeats a few ops)
    assert fix.arg_renames("reshape") == {"x": "X", "out": "Out", "xshape": "XShape"}


def test_bad_yaml_names_line():
    with pytest.raises(ParseError, match=r"yaml_bad/ops.yaml:6: invalid YAML"):
        load_op_file(FIX / "yaml_bad" / "ops.yaml")


def test_structural_errors(tmp_path):
    p = tmp_path / "ops.yaml"
    p.write_text("- op : a\n  args : (Tensor x)\n  output : Tensor(out)\n"
                 "- op : a\n  args : (Tensor x)\n  output : Tensor(out)\n")
    with pytest.raises(ParseError, match=r"ops.yaml:4: op 'a' already defined at line 1"):
        load_op_file(p)
    p.write_text("- op : a\n  output : Tensor(out)\n")
    with pytest.raises(ParseError, match=r"ops.yaml:1: op 'a' has no 'args'"):
        load_op_file(p)
    p.write_text("- op : a\n  args : (Tensor x)\n  output : Tensor(out)\n"
                 "  inplace : (x => out)\n")
    with pytest.raises(ParseError, match=r"ops.yaml:4: cannot parse inplace pair"):
        load_op_file(p)
    p.write_text("op : a\n")
    with pytest.raises(ParseError, match=r"ops.yaml:1: expected a YAML list"):
        load_op_file(p)
    c = tmp_path / "op_compat.yaml"
    c.write_text("- op : a (b)\n- op : a (c)\n")
    with pytest.raises(ParseError, match=r"op_compat.yaml:2: op 'a' maps to 'c' here"):
        load_op_compat(c)
    with pytest.raises(OpscanError, match="has no ops.yaml"):
        load_yaml_dir(tmp_path / "nowhere")


@needs_shared
def test_real_files():
    cat = load_yaml_dir(SHARED)
    counts = {}
    for name, defs in cat.ops.items():
        for d in defs:
            counts[d.location.file] = counts.get(d.location.file, 0) + 1
    assert counts == {"ops.yaml": 470, "backward.yaml": 346, "fused_ops.yaml": 80,
                      "inconsistent_dygraph_ops.yaml": 35, "inconsistent_static_ops.yaml": 87,
                      "inconsistent_dygraph_backward.yaml": 34}
    adam = cat.op("adam_")
    assert [a.name for a in adam.args][5:8] == ["moment2_max", "beta1_pow", "beta2_pow"]
    assert adam.args[-1] == YamlArg("amsgrad", "bool", "false")
    assert {o.name for o in adam.outputs if o.optional} == {"moment2_max_out", "master_param_out"}
    assert cat.kernel_names("adam_") == ("adam", "adam_dense_param_sparse_grad")
    assert cat.fluid_aliases("matmul") == ("matmul_v2",)
    assert cat.kernel_names("matmul_v2") == ("matmul",)
    assert cat.op("matmul_grad").location.file == "inconsistent_dygraph_backward.yaml"
    optimizers = {n for n, d in cat.ops.items() if d[0].is_optimizer}
    assert {"adam_", "adamw_", "sgd_", "momentum_", "lamb_", "merged_adam_", "fused_adam_",
            "rmsprop_", "lars_momentum_"} <= optimizers
    assert not optimizers & {"matmul", "relu", "check_finite_and_unscale_", "assign_value_"}
    assert cat.kind("adamw") == "optimizer" and cat.kind("relu_grad") == "backward"
    # every backward link resolves (the README's cross-file check)
    for name, defs in cat.ops.items():
        for op in defs:
            if op.location.file in ("ops.yaml", "backward.yaml"):
                for b in op.backward:
                    assert b in cat.ops, (op.location, b)
