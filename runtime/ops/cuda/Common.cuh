//===- Common.cuh - helpers shared by the CUDA kernels ----------*- C++ -*-===//
//
// Types, conversions, vector loads, warp shuffles and launch arithmetic used
// by Blur.cu, Reduce.cu and Affine.cu. Internal to runtime/ops/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_CUDA_COMMON_CUH
#define COMPOSER_RUNTIME_OPS_CUDA_COMMON_CUH

#include "Kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace composer::ops::gpu {

/// Threads per block of every kernel. No __launch_bounds__: with it, CUDA
/// 13's ptxas caps registers for full occupancy (32) and spills.
constexpr int kThreads = 256;
constexpr int kWarp = 32;
/// The limit of gridDim.y and gridDim.z; larger extents loop.
constexpr int64_t kMaxGridYZ = 65535;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Accumulation type: float, double for double.
template <typename T> struct AccOf { using type = float; };
template <> struct AccOf<double> { using type = double; };
template <typename T> using acc_t = typename AccOf<T>::type;

__device__ __forceinline__ float toAcc(float v) { return v; }
__device__ __forceinline__ double toAcc(double v) { return v; }
__device__ __forceinline__ float toAcc(__half v) { return __half2float(v); }
__device__ __forceinline__ float toAcc(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

/// Round to nearest even, as aten's casts do.
template <typename T> struct FromAcc;
template <> struct FromAcc<float> {
  __device__ __forceinline__ static float cast(float v) { return v; }
};
template <> struct FromAcc<double> {
  __device__ __forceinline__ static double cast(double v) { return v; }
};
template <> struct FromAcc<__half> {
  __device__ __forceinline__ static __half cast(float v) {
    return __float2half_rn(v);
  }
};
template <> struct FromAcc<__nv_bfloat16> {
  __device__ __forceinline__ static __nv_bfloat16 cast(float v) {
    return __float2bfloat16_rn(v);
  }
};
template <typename T, typename A> __device__ __forceinline__ T fromAcc(A v) {
  return FromAcc<T>::cast(v);
}

/// V elements loaded or stored as one (up to 16-byte) transaction.
template <typename T, int V> struct alignas(sizeof(T) * V) Pack { T v[V]; };

template <int V, typename T>
__device__ __forceinline__ Pack<T, V> loadPack(const T *p) {
  return *reinterpret_cast<const Pack<T, V> *>(p);
}

template <int V, typename T>
__device__ __forceinline__ void storePack(T *p, const Pack<T, V> &pack) {
  *reinterpret_cast<Pack<T, V> *>(p) = pack;
}

/// The widest pack of T that is at most 16 bytes.
template <typename T> constexpr int kPack = 16 / sizeof(T);

inline bool isAligned(const void *p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

//===----------------------------------------------------------------------===//
// Warp shuffles
//===----------------------------------------------------------------------===//

template <typename A> __device__ __forceinline__ A shuffleDown(A v, int delta) {
  return __shfl_down_sync(0xffffffffu, v, delta);
}

//===----------------------------------------------------------------------===//
// Host-side launch arithmetic
//===----------------------------------------------------------------------===//

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The smallest power of two >= v (v >= 1).
inline int pow2Ceil(int64_t v) {
  int p = 1;
  while (p < v)
    p *= 2;
  return p;
}

inline bool fits31(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/// Multiprocessors of the current device, cached per device.
int multiprocessorCount();

/// Calls f(Tag<T>{}) with T the C++ type of `dtype`.
template <typename T> struct Tag { using type = T; };

template <typename F> cudaError_t visitDType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::Float32:
    return f(Tag<float>{});
  case DType::Float64:
    return f(Tag<double>{});
  case DType::BFloat16:
    return f(Tag<__nv_bfloat16>{});
  case DType::Float16:
    return f(Tag<__half>{});
  }
  return cudaErrorInvalidValue;
}

/// Launches `kernel` on `stream` and returns the launch status (which
/// cudaGetLastError also clears, so an error is reported once). One function
/// rather than <<<>>> at each site, so the host emulation of the unit tests
/// (unittests/Runtime/CudaEmulation.h) can run the kernels without a GPU.
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block,
                   cudaStream_t stream, Args... args) {
#ifdef COMPOSER_CUDA_EMULATION
  (void)stream;
  return cudaEmulation::run(kernel, grid, block, Params(args)...);
#else
  kernel<<<grid, block, 0, stream>>>(Params(args)...);
  return cudaGetLastError();
#endif
}

} // namespace composer::ops::gpu

#endif // COMPOSER_RUNTIME_OPS_CUDA_COMMON_CUH
