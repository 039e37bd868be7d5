"""A float64 tensor of a kernel that only moves values goes to an aclnn API lacking float64
as an int64 view of the same bytes, not as a float32 copy (docs/opgen.md "Sixth audit: the
pool at head, paddle", strided_slice). Which kernels only move values: those Paddle also
implements as a view (`<Name>StridedKernel` in the wheel's headers,
opdb/sources/paddle/phi_view_kernels.jsonl), gradients left out."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.paddle_callsite import value_moving_kernels
from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from opdb.sources.paddle import extract_phi_view_kernels as ex
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op

_ARRAY = "const aclIntArray*"
_NO_F64 = ("float32", "float16", "int64", "int32")  # aclnnSliceV2's list: no DOUBLE


def _t(name, role="input", dtypes=_NO_F64):
    return Param(name, "aclTensor*" if role == "output" else "const aclTensor*", role, dtypes)


SLICE_V2 = _api("aclnnSliceV2", _t("self"), Param("starts", _ARRAY, "input"),
                Param("ends", _ARRAY, "input"), Param("axes", _ARRAY, "input"),
                Param("steps", _ARRAY, "input"), _t("out", "output"))
SIG = ("(const Context& dev_ctx, const DenseTensor& x, const std::vector<int>& axes, "
       "const IntArray& starts, const IntArray& ends, const IntArray& strides, DenseTensor* out)")


def test_view_kernels_are_the_forward_ones_paddle_also_strides():
    moving = value_moving_kernels()
    assert {"strided_slice", "strided_slice_raw", "slice", "index_select", "transpose",
            "split"} <= moving
    assert not any(k.endswith("_grad") for k in moving)  # index_select_grad adds
    assert "add" not in moving and "abs" not in moving


def test_a_moving_kernel_takes_float64_as_int64_bytes():
    k = build_paddle_kernel(SLICE_V2, _op("strided_slice", "void StridedSliceKernel" + SIG),
                            framework_dtypes=("float32", "float64"))
    a = _args(k)
    assert a["self"].expr == "acl_self_int64"
    assert a["self"].prelude[-1].startswith(
        "phi::DenseTensor acl_self_int64 = opgen_bits_as(acl_self_1d, {phi::DataType::FLOAT64}, "
        "phi::DataType::INT64);")
    assert a["out"].prelude[-1].startswith("phi::DenseTensor acl_out_int64 = opgen_bits_as(")
    assert not any("opgen_cast_back" in line for line in a["out"].after)  # the same bytes
    assert "double" in k["dtypes"]


def test_a_computing_kernel_keeps_the_float32_copy():
    k = build_paddle_kernel(SLICE_V2, _op("not_a_view_kernel", "void NotAViewKernel" + SIG),
                            framework_dtypes=("float32", "float64"))
    a = _args(k)
    assert "opgen_compute_as(dev_ctx, acl_self_1d, {phi::DataType::FLOAT64}, phi::DataType::FLOAT32" \
        in a["self"].prelude[-1]
    assert any("opgen_cast_back" in line for line in a["out"].after)


def test_extractor_reads_strided_declarations(tmp_path):
    kdir = tmp_path / "paddle" / "phi" / "kernels"
    kdir.mkdir(parents=True)
    (kdir / "slice_kernel.h").write_text(
        "namespace phi {\ntemplate <typename Context>\n"
        "void SliceStridedKernel(const Context& dev_ctx, const DenseTensor& input,\n"
        "                        DenseTensor* out);\n"
        "// void NotAStridedKernel(const Context& dev_ctx);\n}\n")
    rows = [json.loads(r) for r in ex.extract(tmp_path, "9.9").splitlines()]
    assert rows == [{"function": "SliceStridedKernel", "header": "paddle/phi/kernels/slice_kernel.h",
                     "kernel_function": "SliceKernel", "kernels": ["slice"], "line": 3,
                     "paddle": "9.9"}]


def test_extractor_refuses_a_directory_without_phi_kernels_in_one_line(tmp_path):
    with pytest.raises(SystemExit) as exc:
        ex.extract(tmp_path, "9.9")
    assert "is not a directory" in str(exc.value) and "--include" in str(exc.value)


def test_committed_extract_is_the_installed_wheels():
    from opdb.ingest.paddle_catalog import find_include_dir
    from opdb.pairing import installed_version

    text = ex.extract(find_include_dir(), installed_version("paddle"))
    assert text == Path(ex.OUT).read_text()
    assert text.count("\n") == 34  # the StridedKernel declarations of paddle 3.3.1
