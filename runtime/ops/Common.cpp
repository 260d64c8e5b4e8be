//===- Common.cpp - what the composer:: op files share --------------------===//

#include "Common.h"

// The namespace is this library's; each op file adds its schemas with
// TORCH_LIBRARY_FRAGMENT.
TORCH_LIBRARY(composer, m) { (void)m; }

namespace composer::ops {

const DeviceKernels &kernelsFor(const at::Tensor &t) {
  if (t.is_cpu())
    return cpuKernels();
#ifdef COMPOSER_WITH_CUDA
  if (t.is_cuda())
    return cudaKernels();
#endif
  TORCH_CHECK(false, "composer ops: no kernels for device ", t.device());
}

at::Tensor activation(const at::Tensor &t, const char *op) {
  TORCH_CHECK(t.dim() == 4, op, ": expected a 4-D (N, C, H, W) input, got ",
              t.dim(), "-D");
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op,
              ": expected a floating-point input, got ", t.scalar_type());
  return t.contiguous(t.suggest_memory_format());
}

at::Tensor gradientLike(const at::Tensor &grad, const at::Tensor &like) {
  bool channelsLast = !like.is_contiguous() &&
                      like.is_contiguous(at::MemoryFormat::ChannelsLast);
  return grad.contiguous(channelsLast ? at::MemoryFormat::ChannelsLast
                                      : at::MemoryFormat::Contiguous);
}

} // namespace composer::ops
