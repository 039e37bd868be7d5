// opgen standalone shim for PaddleCustomDevice's kernels/funcs/conv_util.h: the padding
// and dilation a conv/pool kernel passes after Paddle's `padding_algorithm`
// (EXPLICIT keeps the paddings, VALID zeroes them, SAME pads to ceil(in / stride)
// outputs and resets the dilations to 1). Paddings come out as
// [before_0, after_0, before_1, after_1, ...]; a per-dim list is duplicated first.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/funcs/npu_funcs.h"
#include "kernels/funcs/npu_op_runner.h"

namespace custom_kernel {

template <typename T = int>
inline void UpdatePaddingAndDilation(std::vector<T>* paddings, std::vector<T>* dilation,
                                     const std::string padding_algorithm,
                                     const phi::DDim data_dims, const std::vector<T>& strides,
                                     const std::vector<T>& ksize) {
  const int n = data_dims.size();
  if (static_cast<int>(paddings->size()) == n) {
    std::vector<T> both;
    for (T p : *paddings) {
      both.push_back(p);
      both.push_back(p);
    }
    *paddings = both;
  }
  PADDLE_ENFORCE_EQ(static_cast<int>(paddings->size()), 2 * n,
                    phi::errors::InvalidArgument("paddings must have %d or %d values", n, 2 * n));
  if (padding_algorithm == "VALID") {
    std::fill(paddings->begin(), paddings->end(), static_cast<T>(0));
  } else if (padding_algorithm == "SAME") {
    for (int i = 0; i < n; ++i) {
      const T in = static_cast<T>(data_dims[i]);
      const T out = (in + strides[i] - 1) / strides[i];
      const T total = std::max<T>((out - 1) * strides[i] + ksize[i] - in, 0);
      (*paddings)[2 * i] = total / 2;
      (*paddings)[2 * i + 1] = total - total / 2;
      (*dilation)[i] = 1;
    }
  }
}

}  // namespace custom_kernel
