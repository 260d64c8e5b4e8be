//===- Kernels.cuh - the fused ops' CUDA kernels, no LibTorch ---*- C++ -*-===//
//
// The CUDA side of runtime/ops/Kernels.h on raw device pointers, so the
// kernels build with nvcc alone (CI compiles them without a CUDA LibTorch;
// CudaKernels.cpp adapts them to at::Tensor). Semantics are those of
// Kernels.h; this header only fixes the calling convention:
// - Activations are 4-D (N, C, H, W) tensors, dense in the given `Layout`,
//   of one `DType` unless a function says otherwise.
// - `filter` is (C, 3, 3) and per-channel tensors are (rows, C), contiguous,
//   in the accumulation type: float, or double for Float64 activations.
// - Everything runs on `stream`; the result is the launch status (an
//   asynchronous fault shows up at the next synchronization, as usual).
// - Outputs are written whole (never accumulated into), and results are
//   deterministic: reductions combine partial results in a fixed order.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_CUDA_KERNELS_CUH
#define COMPOSER_RUNTIME_OPS_CUDA_KERNELS_CUH

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace composer::ops::gpu {

enum class DType { Float32, Float64, BFloat16, Float16 };

/// The order of an activation's elements in memory.
enum class Layout {
  NCHW, ///< contiguous
  NHWC, ///< channels_last
};

struct Shape {
  int64_t n, c, h, w;
};

struct Stride2d {
  int64_t h, w;
};

/// Max pool at stride 1 in front of the blur.
struct MaxPool {
  int64_t kernelH, kernelW, padH, padW, dilationH, dilationW;
};

/// Whether the kernels take this shape: every index of a plane and every
/// pixel count (N * H * W) must fit in 31 bits. Shapes past it return
/// cudaErrorInvalidValue.
bool shapeSupported(Shape shape);

//===----------------------------------------------------------------------===//
// Blur: depthwise 3x3, padding 1
//===----------------------------------------------------------------------===//

/// output (N, C, (H-1)/sh+1, (W-1)/sw+1) = blur(input (N, C, H, W)).
cudaError_t blur(const void *input, void *output, DType dtype, Layout layout,
                 Shape in, const void *filter, Stride2d stride,
                 cudaStream_t stream);

/// gradInput (N, C, H, W) from gradOutput, as a gather: each input pixel sums
/// the taps that read it, so no atomics.
cudaError_t blurBackward(const void *gradOutput, void *gradInput, DType dtype,
                         Layout layout, Shape in, const void *filter,
                         Stride2d stride, cudaStream_t stream);

/// The size of max_pool2d's output at stride 1, along one dimension.
inline int64_t maxPoolSize(int64_t size, int64_t kernel, int64_t pad,
                           int64_t dilation) {
  return size + 2 * pad - dilation * (kernel - 1);
}

/// output = blur(max_pool2d(input, pool, stride 1)), the max map recomputed
/// per blur tap rather than stored.
cudaError_t maxBlur(const void *input, void *output, DType dtype, Layout layout,
                    Shape in, const void *filter, MaxPool pool, Stride2d stride,
                    cudaStream_t stream);

/// gradInput of maxBlur, also a gather: each input pixel visits the windows
/// that contain it, decides whether it is their argmax (first maximum in
/// window order, NaN wins, as max_pool2d), usually within a few loads, and
/// sums the blur gradient of those it wins. Deterministic, no atomics and no
/// full-resolution buffer.
cudaError_t maxBlurBackward(const void *gradOutput, const void *input,
                            void *gradInput, DType dtype, Layout layout,
                            Shape in, const void *filter, MaxPool pool,
                            Stride2d stride, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Reductions per (group of samples, channel)
//===----------------------------------------------------------------------===//

/// Reductions over (n in group k, h, w) for each channel c; a group is
/// `chunk` consecutive samples (the last one may be short), so there are
/// K = ceil(N / chunk) groups. Results are (K, C) in the accumulation type.
enum class Reduction {
  Mean,      ///< out0 = mean of x
  Dot,       ///< out0 = sum of dy * x
  Stats,     ///< out0 = mean of x, out1 = biased variance (Welford)
  GradStats, ///< out0 = sum of dy, out1 = sum of dy * (x - center[k, c])
};

/// Bytes of scratch memory `reduce` needs for this problem on the current
/// device (0 when each (k, c) is reduced by one block).
size_t reduceWorkspaceBytes(Reduction kind, DType xType, Layout layout,
                            Shape shape, int64_t chunk);

/// The reduction `kind` of x (and dy for Dot and GradStats; `dyType` may
/// differ from `xType` only as Float32 dy against BFloat16/Float16 x in
/// GradStats, see reduceSupported). `center` is (K, C) for GradStats, else
/// null; out1 is null for Mean and Dot. `workspace` holds
/// reduceWorkspaceBytes(...) bytes.
cudaError_t reduce(Reduction kind, const void *dy, DType dyType, const void *x,
                   DType xType, Layout layout, Shape shape, int64_t chunk,
                   const void *center, void *out0, void *out1, void *workspace,
                   size_t workspaceBytes, cudaStream_t stream);

/// Whether `reduce` has a kernel for these activation dtypes (dyType is
/// ignored for Mean and Stats).
bool reduceSupported(Reduction kind, DType dyType, DType xType);

//===----------------------------------------------------------------------===//
// Per-(group, channel) affine maps
//===----------------------------------------------------------------------===//

/// out = a[k,c] * p + b[k,c] * q + c[k,c], k the group of the sample: with
/// chunk 1 and no q this is scaleChannels (a = scale, c = shift), with no q
/// chunkAffine (a, c = b), with q chunkAffine2 (p = dy, q = x). q and b are
/// both null or both set; c may be null (0).
cudaError_t channelAffine(const void *p, DType pType, const void *q,
                          DType qType, void *out, DType outType, Layout layout,
                          Shape shape, int64_t chunk, const void *a,
                          const void *b, const void *c, cudaStream_t stream);

/// Whether channelAffine has a kernel for these dtypes (qType is ignored
/// without q): one dtype throughout; with one input, also BFloat16/Float16
/// to Float32 and back (the cast-aware forward); with two, also Float32 p
/// against BFloat16/Float16 q and out (the cast-aware backward). Callers cast
/// other mixes to one dtype first.
bool channelAffineSupported(DType pType, bool hasQ, DType qType, DType outType);

} // namespace composer::ops::gpu

#endif // COMPOSER_RUNTIME_OPS_CUDA_KERNELS_CUH
