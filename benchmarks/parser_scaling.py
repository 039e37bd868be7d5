"""Parser and name-search scaling: time at size N and 4N in one run, print the ratio.

    python benchmarks/parser_scaling.py [--n-decls 2000] [--n-regs 500] [--n-funcs 1000]

A linear parser gives a 4N/N ratio near 4; a quadratic one near 16. Inputs are generated
(real line shapes: aclnn two-phase declarations with doc comments, PaddleCustomDevice
kernels with PD_REGISTER_PLUGIN_KERNEL, op-plugin functions calling EXEC_NPU_CMD), so no
source tree is needed. Also times `opdb search` on a 3,000-character name.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def header(n: int) -> str:
    out = ["#ifndef X_H\n#define X_H\n#include \"aclnn/aclnn_base.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"]
    for i in range(n):
        out.append(f"""
/**
 * @brief aclnnOp{i} first phase: workspace size.
 * @param [in] self: input tensor, 1'000 elements max.
 * @param [out] out: result tensor.
 */
ACLNN_API aclnnStatus aclnnOp{i}GetWorkspaceSize(const aclTensor* self, const aclScalar* alpha,
    aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);  // line comment

ACLNN_API aclnnStatus aclnnOp{i}(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);
""")
    out.append("#ifdef __cplusplus\n}\n#endif\n#endif\n")
    return "".join(out)


def kernels(n: int) -> str:
    out = ['#include "kernels/funcs/npu_funcs.h"\n\nnamespace custom_kernel {\n']
    for i in range(n):
        out.append(f"""
template <typename T, typename Context>
void Op{i}Kernel(const Context& dev_ctx, const phi::DenseTensor& x, float scale,
                 phi::DenseTensor* out) {{
  dev_ctx.template Alloc<T>(out);
  // comment with "quotes" and 'c'
  VLOG(4) << "op{i}: " << R"raw(text with ) and " inside)raw";
  EXEC_NPU_CMD(aclnnOp{i}, dev_ctx, x, scale, *out);
}}
""")
    out.append("}  // namespace custom_kernel\n")
    for i in range(n):
        out.append(f"""
PD_REGISTER_PLUGIN_KERNEL(op{i},
                          npu,
                          ALL_LAYOUT,
                          custom_kernel::Op{i}Kernel,
                          float,
#if (CANN_VERSION_CODE >= 800000)
                          phi::dtype::bfloat16,
#endif
                          phi::dtype::float16) {{}}
""")
    return "".join(out)


def opplugin(n: int) -> str:
    out = ['#include "op_plugin/OpApiInterface.h"\n\nnamespace op_api {\nusing npu_preparation = at_npu::native::OpPreparation;\n']
    for i in range(n):
        out.append(f"""
at::Tensor& op{i}_out(const at::Tensor& self, at::Tensor& out)
{{
    DO_COMPATIBILITY(aclnnOp{i}, acl_op::op{i}_out(self, out));
    // "aclnnNotThis{i}" in a comment
    EXEC_NPU_CMD(aclnnOp{i}, self, out);
    return out;
}}
""")
    out.append("}  // namespace op_api\n")
    return "".join(out)


def _time(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def run_headers(n: int) -> float:
    from opdb.ingest.aclnn_headers import parse_header_text
    return _time(parse_header_text, header(n), "aclnn_gen.h")


def run_kernels(n: int) -> float:
    from opdb.ingest.paddle_custom_device import scan_checkout
    with tempfile.TemporaryDirectory() as d:
        k = Path(d) / "backends" / "npu" / "kernels"
        k.mkdir(parents=True)
        (k / "gen_kernel.cc").write_text(kernels(n))
        return _time(scan_checkout, d)


def run_opplugin(n: int) -> float:
    from opdb.ingest.op_plugin import parse_cpp_functions
    return _time(parse_cpp_functions, opplugin(n), "GenKernelNpuOpApi.cpp")


def run_search(n: int) -> float:
    from opdb.query import OpDB
    db = OpDB.open()
    return _time(db.search, "x" * n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-decls", type=int, default=2000, help="declarations at size N (x2 APIs)")
    ap.add_argument("--n-regs", type=int, default=500, help="kernel registrations at size N")
    ap.add_argument("--n-funcs", type=int, default=1000, help="op-plugin functions at size N")
    ap.add_argument("--name-len", type=int, default=3000)
    args = ap.parse_args()
    rows = []
    for label, fn, n in (("aclnn headers (decl pairs)", run_headers, args.n_decls),
                         ("PaddleCustomDevice registrations", run_kernels, args.n_regs),
                         ("op-plugin functions", run_opplugin, args.n_funcs)):
        t1, t4 = fn(n), fn(4 * n)
        rows.append((label, n, t1, t4, t4 / t1 if t1 else float("nan")))
    print(f"{'input':36} {'N':>6} {'t(N) s':>8} {'t(4N) s':>8} {'ratio':>6}")
    for label, n, t1, t4, r in rows:
        print(f"{label:36} {n:>6} {t1:8.3f} {t4:8.3f} {r:6.1f}")
    print(f"opdb search, {args.name_len}-char name: {run_search(args.name_len):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
