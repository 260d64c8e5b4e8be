//===- CpuDispatch.cpp - the CPU kernels for this processor ---------------===//
//
// The CPU primitives (CpuKernels.h) are compiled for baseline x86-64 and for
// AVX2+FMA (and only for the baseline elsewhere); the wider build runs where
// the processor has it, as ATen's own CPU kernels are chosen.
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"

namespace composer::ops {
namespace baseline {
const DeviceKernels &kernels();
} // namespace baseline
#ifdef COMPOSER_CPU_AVX2
namespace avx2 {
const DeviceKernels &kernels();
} // namespace avx2
#endif

const DeviceKernels &cpuKernels() {
#ifdef COMPOSER_CPU_AVX2
  static const bool hasAvx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (hasAvx2)
    return avx2::kernels();
#endif
  return baseline::kernels();
}

} // namespace composer::ops
