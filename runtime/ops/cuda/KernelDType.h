//===- KernelDType.h - LibTorch dtypes as the CUDA kernels' -----*- C++ -*-===//
//
// The one mapping from an activation's at::ScalarType to Kernels.cuh's
// DType, for CudaKernels.cpp and the tests that call the kernels directly.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_CUDA_KERNELDTYPE_H
#define COMPOSER_RUNTIME_OPS_CUDA_KERNELDTYPE_H

#include "Kernels.cuh"

#include <ATen/ATen.h>

#include <optional>

namespace composer::ops::gpu {

/// The kernels' DType of activations of type `t`; none for a type they do
/// not take.
inline std::optional<DType> kernelDType(at::ScalarType t) {
  switch (t) {
  case at::kFloat:
    return DType::Float32;
  case at::kDouble:
    return DType::Float64;
  case at::kBFloat16:
    return DType::BFloat16;
  case at::kHalf:
    return DType::Float16;
  default:
    return std::nullopt;
  }
}

} // namespace composer::ops::gpu

#endif // COMPOSER_RUNTIME_OPS_CUDA_KERNELDTYPE_H
