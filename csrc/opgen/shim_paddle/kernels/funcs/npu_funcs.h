// opgen standalone shim for PaddleCustomDevice's kernels/funcs/npu_funcs.h: lets a
// kernel written for backends/npu/kernels build against the paddle wheel headers
// and the opgen runtime instead of PaddleCustomDevice's tree.
#pragma once

#include "opgen/paddle_prelude.h"
#include "paddle/phi/extension.h"
#include "opgen/paddle_convert.h"

namespace custom_kernel {

// PaddleCustomDevice's helper of the same name: `dst` (meta set) allocated and filled
// with `value` on the device; here through aclnnInplaceFillScalar.
template <typename T, typename Context>
inline void FillNpuTensorWithConstant(phi::DenseTensor* dst, const Context& dev_ctx, T value) {
  dev_ctx.template Alloc<T>(dst);
  phi::Scalar fill(static_cast<double>(value));
  ::opgen::paddle_run("aclnnInplaceFillScalar", dev_ctx, *dst, fill);
}

}  // namespace custom_kernel
