"""phi's own kernel registrations parsed from Paddle's source
(opdb/sources/paddle/extract_phi_kernels.py): direct PD_REGISTER_KERNEL, a same-file helper
macro (activation kernels), a variadic one with `##__VA_ARGS__` (gpu/cast_kernel.cu),
`#if` guards and per-dtype conditions, PD_REGISTER_KERNEL_FOR_ALL_DTYPE; and the shipped
extract that opdb.paddle_backends reads."""
from __future__ import annotations

import json
import subprocess

# The shapes of paddle/phi/kernels/gpu/{activation_kernel,cast_kernel}.cu and
# paddle/phi/kernels/reduce_sum_kernel.cc (abridged).
ACTIVATION = r"""
#define PD_REGISTER_ACTIVATION_KERNEL(name, func) \
  PD_REGISTER_KERNEL(name,                        \
                     GPU,                         \
                     ALL_LAYOUT,                  \
                     phi::func,                   \
                     float,                       \
                     double,                      \
                     phi::dtype::float16,         \
                     phi::dtype::bfloat16) {}

PD_REGISTER_ACTIVATION_KERNEL(silu, SiluKernel)
PD_REGISTER_ACTIVATION_KERNEL(logsigmoid, LogSigmoidKernel)
"""

CAST = r"""
#define PTEN_REGISTER_CAST_CUDA_BASE_TYPE(op_name, ...)        \
  PD_REGISTER_KERNEL(cast,                                     \
                     GPU,                                      \
                     ALL_LAYOUT,                               \
                     phi::CastKernel,                          \
                     float,                                    \
                     int64_t,                                  \
                     phi::dtype::complex<double>,              \
                     ##__VA_ARGS__) {                          \
    kernel->OutputAt(0).SetDataType(phi::DataType::UNDEFINED); \
  }

PTEN_REGISTER_CAST_CUDA_BASE_TYPE(cast,
                                  phi::dtype::bfloat16,
                                  phi::dtype::float8_e4m3fn)
"""

CAST_NO_VARIADIC = CAST.replace("""(cast,
                                  phi::dtype::bfloat16,
                                  phi::dtype::float8_e4m3fn)""", "(cast)")

GUARDED = r"""
PD_REGISTER_KERNEL(
    sum_raw, CPU, ALL_LAYOUT, phi::SumRawKernel, float, double) {}
#if defined(PADDLE_WITH_CUDA) || defined(PADDLE_WITH_HIP)
PD_REGISTER_KERNEL(sum,
                   GPU,
                   ALL_LAYOUT,
                   phi::SumKernel,
                   float,
#if CUDA_VERSION >= 11000
                   phi::dtype::bfloat16,
#endif
                   phi::dtype::float16) {
  kernel->OutputAt(0).SetDataType(phi::DataType::UNDEFINED);
}
#endif
PD_REGISTER_KERNEL_FOR_ALL_DTYPE(shape, GPU, ALL_LAYOUT, phi::ShapeKernel) {}
"""


def _rows(text, rel="paddle/phi/kernels/gpu/x.cu"):
    from opdb.sources.paddle.extract_phi_kernels import registrations_in
    return {(r["kernel"], r["backend"]): r for r in registrations_in(text, rel)}


def test_a_same_file_helper_macro_is_expanded_per_invocation():
    rows = _rows(ACTIVATION)
    assert sorted(rows) == [("logsigmoid", "GPU"), ("silu", "GPU")]
    silu = rows[("silu", "GPU")]
    assert silu["dtypes"] == ["float32", "float64", "float16", "bfloat16"]
    assert silu["function"] == "SiluKernel" and silu["line"] == 12
    assert silu["layout"] == "ALL_LAYOUT"
    assert silu["via_macro"].startswith("PD_REGISTER_ACTIVATION_KERNEL(silu, SiluKernel)")


def test_a_variadic_macro_appends_its_extra_dtypes():
    cast = _rows(CAST)[("cast", "GPU")]
    assert cast["dtypes"] == ["float32", "int64", "complex128", "bfloat16", "float8_e4m3fn"]
    assert _rows(CAST_NO_VARIADIC)[("cast", "GPU")]["dtypes"] == ["float32", "int64",
                                                                    "complex128"]


def test_if_branches_are_recorded_not_dropped():
    rows = _rows(GUARDED, "paddle/phi/kernels/reduce_sum_kernel.cc")
    gpu = rows[("sum", "GPU")]
    assert gpu["dtypes"] == ["float32", "bfloat16", "float16"]
    assert gpu["guard"] == ["defined(PADDLE_WITH_CUDA) || defined(PADDLE_WITH_HIP)"]
    assert gpu["dtype_conditions"] == {"phi::dtype::bfloat16": "CUDA_VERSION >= 11000"}
    assert rows[("sum_raw", "CPU")]["guard"] == []
    shape = rows[("shape", "GPU")]
    assert shape["all_dtypes"] and shape["dtypes"] == []


def test_extract_reads_a_git_tree_and_is_byte_identical(tmp_path):
    from opdb.sources.paddle.extract_phi_kernels import extract
    work = tmp_path / "w"
    (work / "paddle/phi/kernels/gpu").mkdir(parents=True)
    (work / "paddle/phi/kernels/gpu/activation_kernel.cu").write_text(ACTIVATION)
    (work / "paddle/phi/kernels/reduce_sum_kernel.cc").write_text(GUARDED)
    (work / "paddle/phi/kernels/gpu/notes.md").write_text("PD_REGISTER_KERNEL(x)")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2025-02-07T15:29:00+08:00",
           "GIT_COMMITTER_DATE": "2025-02-07T15:29:00+08:00", "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run(["git", *cmd], cwd=work, env=env, check=True)
    text = extract(str(work / ".git"), "HEAD", "PaddlePaddle/Paddle")
    assert text == extract(str(work / ".git"), "HEAD", "PaddlePaddle/Paddle")
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[0]["files"] == 2 and lines[0]["registrations"] == 5
    assert lines[0]["date"] == "2025-02-07T15:29:00+08:00" and lines[0]["unparsed"] == []
    keys = [(r["kernel"], r["backend"]) for r in lines[1:]]
    assert keys == sorted(keys)


def test_bad_git_dir_is_one_line_and_nonzero(tmp_path, capsys):
    from opdb.sources.paddle.extract_phi_kernels import OUT, main
    before = OUT.read_bytes()
    assert main([str(tmp_path / "nope"), "HEAD"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("extract_phi_kernels: git failed on ") and "\n" not in err
    assert OUT.read_bytes() == before


def test_shipped_extract_has_the_gpu_dtypes_the_cpu_wheel_lacks():
    from opdb.paddle_backends import PHI_PATH, phi_backend_dtypes
    head = json.loads(PHI_PATH.read_text().splitlines()[0])
    assert len(head["commit"]) == 40 and head["unparsed"] == []
    assert "bfloat16" in phi_backend_dtypes("silu")
    assert "float64" in phi_backend_dtypes("fused_gemm_epilogue")
    assert "bfloat16" not in phi_backend_dtypes("silu", ("CPU",))
