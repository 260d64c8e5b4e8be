//===- Ops.cpp - the composer:: fused ops from C++ ------------------------===//

#include "composer/Runtime/Ops.h"

#include "FusedOps.h"

namespace composer::ops {
at::Tensor blurPool2d(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef stride) {
  static auto op = composerOp<decltype(blurPool2d)>("composer::blur_pool2d");
  return op.call(input, filter, stride);
}

at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride) {
  static auto op =
      composerOp<decltype(blurMaxPool2d)>("composer::blur_max_pool2d");
  return op.call(input, filter, kernelSize, padding, dilation, stride);
}

at::Tensor ghostBatchNorm(const at::Tensor &input,
                          const c10::optional<at::Tensor> &weight,
                          const c10::optional<at::Tensor> &bias,
                          const c10::optional<at::Tensor> &runningMean,
                          const c10::optional<at::Tensor> &runningVar,
                          bool training, double momentum, double eps,
                          int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype) {
  static auto op =
      composerOp<decltype(ghostBatchNorm)>("composer::ghost_batch_norm");
  return op.call(input, weight, bias, runningMean, runningVar, training,
                 momentum, eps, ghostBatchSize, dtype);
}

at::Tensor squeezeExcite(const at::Tensor &input, const at::Tensor &fc1,
                         const at::Tensor &fc2) {
  static auto op =
      composerOp<decltype(squeezeExcite)>("composer::squeeze_excite");
  return op.call(input, fc1, fc2);
}

} // namespace composer::ops
