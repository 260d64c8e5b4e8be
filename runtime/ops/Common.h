//===- Common.h - what the composer:: op files share ------------*- C++ -*-===//
//
// Each runtime op has one device-generic file (BlurPool.cpp,
// GhostBatchNorm.cpp, SqueezeExcite.cpp) with its schemas, its backend
// kernels (the passes over activations through the device's DeviceKernels,
// Kernels.h, and the small per-channel math with aten), its autograd
// function and its C++ entry point (include/composer/Runtime/Ops.h); the
// device primitives sit in cpu/ and cuda/. Every public op's Autograd kernel
// runs its backend forward below autograd and its own backward op, so
// gradients never come from a composition.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_COMMON_H
#define COMPOSER_RUNTIME_OPS_COMMON_H

#include "Kernels.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <tuple>

namespace composer::ops {

using OptionalTensor = c10::optional<at::Tensor>;

/// The registered operator `composer::<name>`, typed for calls.
template <typename Signature>
c10::TypedOperatorHandle<Signature> composerOp(const char *name) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, "")
      .template typed<Signature>();
}

/// The primitives of the device `t` is on.
const DeviceKernels &kernelsFor(const at::Tensor &t);

/// The activation in the memory format its strides suggest, so kernels see
/// NCHW or channels_last contiguous data.
at::Tensor activation(const at::Tensor &t, const char *op);

/// `grad` laid out like `like` (autograd may hand any strides).
at::Tensor gradientLike(const at::Tensor &grad, const at::Tensor &like);

/// The backend kernel of a public op whose `_forward` twin (Forward) also
/// returns what backward saves: the output alone.
template <auto Forward> struct OutputOf;
template <typename... Results, typename... Args,
          std::tuple<Results...> (*Forward)(Args...)>
struct OutputOf<Forward> {
  static at::Tensor call(Args... args) { return std::get<0>(Forward(args...)); }
};

/// The Autograd kernel of a public op of type Signature: Function, a
/// torch::autograd::Function, applied to the op's arguments.
template <typename Function, typename Signature> struct AutogradKernel;
template <typename Function, typename... Args>
struct AutogradKernel<Function, at::Tensor(Args...)> {
  static at::Tensor call(Args... args) { return Function::apply(args...); }
};

} // namespace composer::ops

/// As TORCH_LIBRARY_IMPL(composer, <device>, m) for every device with
/// DeviceKernels (CPU, and CUDA in CUDA builds), the block registering an op
/// file's backend kernels: they are device-generic.
#define COMPOSER_LIBRARY_IMPL_BACKENDS(m)                                      \
  COMPOSER_LIBRARY_IMPL_BACKENDS_UID(m, C10_UID)
#define COMPOSER_LIBRARY_IMPL_BACKENDS_UID(m, uid)                             \
  static void C10_CONCATENATE(composer_backends_, uid)(torch::Library &);      \
  TORCH_LIBRARY_IMPL(composer, CPU, lib) {                                     \
    C10_CONCATENATE(composer_backends_, uid)(lib);                             \
  }                                                                            \
  COMPOSER_LIBRARY_IMPL_CUDA(C10_CONCATENATE(composer_backends_, uid))         \
  void C10_CONCATENATE(composer_backends_, uid)(torch::Library & m)
#ifdef COMPOSER_WITH_CUDA
#define COMPOSER_LIBRARY_IMPL_CUDA(fn)                                         \
  TORCH_LIBRARY_IMPL(composer, CUDA, lib) { fn(lib); }
#else
#define COMPOSER_LIBRARY_IMPL_CUDA(fn)
#endif

#endif // COMPOSER_RUNTIME_OPS_COMMON_H
