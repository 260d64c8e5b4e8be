//===- FusedOps.h - the composer:: ops below autograd -----------*- C++ -*-===//
//
// The backend kernels registered for CPU and CUDA: device-generic, they run
// the passes over activations through the device's DeviceKernels and the
// small per-channel math with aten. Registration.cpp wires them to the
// operator registry and to autograd.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_FUSEDOPS_H
#define COMPOSER_RUNTIME_OPS_FUSEDOPS_H

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <array>
#include <tuple>

namespace composer::ops {

/// The registered operator `composer::<name>`, typed for calls.
template <typename Signature>
c10::TypedOperatorHandle<Signature> composerOp(const char *name) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, "")
      .template typed<Signature>();
}

} // namespace composer::ops

namespace composer::ops::impl {

/// True when blur_pool2d is the identity subsampling for this input (H or W
/// smaller than the filter).
bool blurIsSubsampling(const at::Tensor &input);
/// input[:, :, ::sh, ::sw], BlurPool's blur on inputs smaller than its filter.
at::Tensor subsample(const at::Tensor &input, at::IntArrayRef stride);

at::Tensor blurPool2d(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef stride);
at::Tensor blurPool2dBackward(const at::Tensor &gradOutput,
                              const at::Tensor &filter,
                              at::IntArrayRef inputSize,
                              at::IntArrayRef stride);

at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride);
at::Tensor
blurMaxPool2dBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                      const at::Tensor &filter, at::IntArrayRef kernelSize,
                      at::IntArrayRef padding, at::IntArrayRef dilation,
                      at::IntArrayRef stride);

/// (output, mean, invstd): mean and invstd are (K, C), one row per chunk of
/// ghost_batch_size samples; a single row of running statistics when the op
/// normalizes with them.
std::tuple<at::Tensor, at::Tensor, at::Tensor> ghostBatchNormForward(
    const at::Tensor &input, const c10::optional<at::Tensor> &weight,
    const c10::optional<at::Tensor> &bias,
    const c10::optional<at::Tensor> &runningMean,
    const c10::optional<at::Tensor> &runningVar, bool training, double momentum,
    double eps, int64_t ghostBatchSize, c10::optional<at::ScalarType> dtype);
at::Tensor ghostBatchNorm(const at::Tensor &input,
                          const c10::optional<at::Tensor> &weight,
                          const c10::optional<at::Tensor> &bias,
                          const c10::optional<at::Tensor> &runningMean,
                          const c10::optional<at::Tensor> &runningVar,
                          bool training, double momentum, double eps,
                          int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype);
/// Gradients of (input, weight, bias) where outputMask says; `chunk` is the
/// number of samples each row of saveMean covers.
std::tuple<at::Tensor, at::Tensor, at::Tensor>
ghostBatchNormBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                       const c10::optional<at::Tensor> &weight,
                       const at::Tensor &saveMean, const at::Tensor &saveInvstd,
                       bool batchStats, int64_t chunk,
                       std::array<bool, 3> outputMask);

/// (output, pooled, hidden, gate): the per-(n, c) and per-(n, latent) values
/// backward needs.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
squeezeExciteForward(const at::Tensor &input, const at::Tensor &fc1,
                     const at::Tensor &fc2);
at::Tensor squeezeExcite(const at::Tensor &input, const at::Tensor &fc1,
                         const at::Tensor &fc2);
std::tuple<at::Tensor, at::Tensor, at::Tensor>
squeezeExciteBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                      const at::Tensor &fc1, const at::Tensor &fc2,
                      const at::Tensor &pooled, const at::Tensor &hidden,
                      const at::Tensor &gate);

} // namespace composer::ops::impl

#endif // COMPOSER_RUNTIME_OPS_FUSEDOPS_H
