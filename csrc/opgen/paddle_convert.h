// opgen runtime for Paddle: phi::DenseTensor / phi::Scalar / int lists -> aclnn
// handles, in the global-namespace `ConvertType` style of PaddleCustomDevice's
// kernels/funcs/npu_op_runner.h, plus the overloads that header lacks
// (paddle::optional<DenseTensor>, std::vector<int64_t>, phi::IntArray).
#pragma once

#include <array>

#include <vector>

#include "opgen/paddle_prelude.h"
#include "opgen/runtime.h"
#include "paddle/phi/common/int_array.h"
#include "paddle/phi/common/scalar.h"
#include "paddle/phi/core/dense_tensor.h"
#include "paddle/utils/optional.h"

namespace opgen {
namespace pd_conv {

inline aclDataType acl_dtype(phi::DataType t) {
  switch (t) {
    case phi::DataType::FLOAT32: return ACL_FLOAT;
    case phi::DataType::FLOAT16: return ACL_FLOAT16;
    case phi::DataType::BFLOAT16: return ACL_BF16;
    case phi::DataType::FLOAT64: return ACL_DOUBLE;
    case phi::DataType::INT8: return ACL_INT8;
    case phi::DataType::INT16: return ACL_INT16;
    case phi::DataType::INT32: return ACL_INT32;
    case phi::DataType::INT64: return ACL_INT64;
    case phi::DataType::UINT8: return ACL_UINT8;
    case phi::DataType::BOOL: return ACL_BOOL;
    case phi::DataType::COMPLEX64: return ACL_COMPLEX64;
    case phi::DataType::COMPLEX128: return ACL_COMPLEX128;
    default: return ACL_DT_UNDEFINED;
  }
}

inline TensorDesc desc_of(const phi::DenseTensor& t) {
  const int64_t item = static_cast<int64_t>(phi::SizeOf(t.dtype()));
  auto shape = common::vectorize(t.dims());
  auto strides = common::vectorize(t.strides());
  if (strides.size() != shape.size()) strides.clear();  // meta without strides: contiguous
  const int64_t offset = static_cast<int64_t>(t.meta().offset) / item;
  const int64_t storage_numel =
      t.Holder() ? static_cast<int64_t>(t.Holder()->size()) / item : -1;
  void* base = t.Holder() ? t.Holder()->ptr() : nullptr;
  return make_desc(acl_dtype(t.dtype()), shape, strides, offset, storage_numel, base);
}

inline HandleScope*& scope() {
  thread_local HandleScope* s = nullptr;
  return s;
}

struct ScopeGuard {
  explicit ScopeGuard(HandleScope* s) : prev(scope()) { scope() = s; }
  ~ScopeGuard() { scope() = prev; }
  HandleScope* prev;
};

}  // namespace pd_conv
}  // namespace opgen

inline aclDataType ConvertToNpuDtype(phi::DataType t) { return opgen::pd_conv::acl_dtype(t); }

inline aclTensor* ConvertType(const phi::DenseTensor& t) {
  if (!t.initialized()) return nullptr;
  return opgen::create_tensor(opgen::pd_conv::desc_of(t), opgen::pd_conv::scope());
}
inline aclTensor* ConvertType(const paddle::optional<phi::DenseTensor>& t) {
  return t ? ConvertType(*t.get_ptr()) : nullptr;
}
inline aclScalar* ConvertType(const phi::Scalar& s) {
  switch (s.dtype()) {
    case phi::DataType::FLOAT32:
    case phi::DataType::FLOAT64:
      return opgen::create_scalar<double>(s.to<double>(), ACL_DOUBLE, opgen::pd_conv::scope());
    case phi::DataType::BOOL:
      return opgen::create_scalar<bool>(s.to<bool>(), ACL_BOOL, opgen::pd_conv::scope());
    default:
      return opgen::create_scalar<int64_t>(s.to<int64_t>(), ACL_INT64, opgen::pd_conv::scope());
  }
}
inline aclIntArray* ConvertType(const std::vector<int64_t>& v) {
  return opgen::create_int_array(v, opgen::pd_conv::scope());
}
inline aclIntArray* ConvertType(const phi::IntArray& v) {
  return opgen::create_int_array(v.GetData(), opgen::pd_conv::scope());
}
inline aclTensorList* ConvertType(const std::vector<const phi::DenseTensor*>& v) {
  std::vector<const aclTensor*> items;
  for (const auto* t : v) items.push_back(t != nullptr ? ConvertType(*t) : nullptr);
  return opgen::create_tensor_list(items, opgen::pd_conv::scope());
}
template <size_t N>
inline aclBoolArray* ConvertType(const std::array<bool, N>& v) {
  return opgen::create_bool_array(std::vector<bool>(v.begin(), v.end()), opgen::pd_conv::scope());
}
template <typename T>
T ConvertType(T value) {
  return value;
}

namespace opgen {

// The aclnn call behind the standalone EXEC_NPU_CMD: workspace from the device
// context's allocator, the context's stream, handles released after the call.
template <typename Context, typename... Args>
void paddle_run(const std::string& api, const Context& dev_ctx, Args&... args) {
  HandleScope handles;
  pd_conv::ScopeGuard guard(&handles);
  std::vector<phi::Allocator::AllocationPtr> keep;
  WorkspaceAllocator alloc = [&](uint64_t bytes) -> void* {
    keep.push_back(const_cast<phi::Allocator&>(dev_ctx.GetAllocator()).Allocate(bytes));
    return keep.back()->ptr();
  };
  exec(api, reinterpret_cast<aclrtStream>(dev_ctx.stream()), alloc, ::ConvertType(args)...);
  using SyncFn = int (*)(aclrtStream);
  auto sync = reinterpret_cast<SyncFn>(OpApiLibrary::get().symbol("aclrtSynchronizeStream"));
  if (sync != nullptr) sync(reinterpret_cast<aclrtStream>(dev_ctx.stream()));
}

}  // namespace opgen
