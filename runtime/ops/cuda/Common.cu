//===- Common.cu - host helpers shared by the CUDA kernels ----------------===//

#include "Common.cuh"

#include <atomic>

namespace composer::ops::gpu {

int multiprocessorCount() {
#ifdef COMPOSER_CUDA_EMULATION
  return cudaEmulation::multiprocessorCount;
#endif
  // Queried once per device: launch plans (reduction splits) ask for it on
  // every call, and the workspace query and the launch must agree.
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  if (device < 0 || device >= kMaxDevices)
    return 1;
  int count = cache[device].load(std::memory_order_relaxed);
  if (count > 0)
    return count;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      count <= 0) {
    (void)cudaGetLastError();
    count = 1;
  }
  cache[device].store(count, std::memory_order_relaxed);
  return count;
}

bool shapeSupported(Shape s) {
  // Plane offsets, pixel indices and row counts are 32-bit in the kernels;
  // element offsets are 64-bit.
  return s.n >= 0 && s.c >= 0 && s.h >= 0 && s.w >= 0 && fits31(s.h * s.w) &&
         fits31(s.c) && fits31(s.n * s.c) && fits31(s.n * s.h * s.w) &&
         fits31(s.h + 2) && fits31(s.w + 2);
}

} // namespace composer::ops::gpu
