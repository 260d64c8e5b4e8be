//===- Kernels.h - per-device primitives of the fused ops -------*- C++ -*-===//
//
// The passes over the activation that the fused ops are built from. Each
// device (CPU: cpu/, CUDA: cuda/) implements all of them as the overrides of
// one class derived from DeviceKernels, in one file per op;
// the op's device-generic file (BlurPool.cpp, ...) does the rest (the small
// per-channel math) with aten on whichever device the tensors are.
//
// Contract for every primitive:
// - Activations (input, gradOutput, x, dy) are 4-D (N, C, H, W) and
//   contiguous in NCHW or in channels_last; when several are passed they share
//   one memory format and one dtype (the op files cast a gradient to its
//   input's dtype first). Results are allocated in that memory format.
// - Activations are float32, bfloat16 or float16; `filter` and the
//   per-channel tensors may have another floating dtype (parameters often stay
//   fp32 under mixed precision). Per-channel tensors passed in are float32
//   (float64 with float64 activations), contiguous; per-channel results are
//   float32, or float64 for float64 activations (gradcheck runs in double).
//   Accumulation is in float32, or float64 for float64 activations.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_KERNELS_H
#define COMPOSER_RUNTIME_OPS_KERNELS_H

#include <ATen/ATen.h>

#include <tuple>
#include <vector>

namespace composer::ops {

/// Window geometry shared by the blur primitives.
struct BlurGeometry {
  int64_t strideH, strideW;
};

/// Max pool at stride 1 in front of the blur (BlurPool's max-pool form).
struct MaxPoolGeometry {
  int64_t kernelH, kernelW, padH, padW, dilationH, dilationW;
};

/// The primitives of one device, each a pure virtual function. A device
/// implements them in a class derived from this one, each an `override` of
/// the same name and signature: one left out keeps the class abstract (its
/// kernels object does not compile) and a misnamed or mistyped one fails
/// `override`. A primitive is bound to its device function by name alone,
/// never by position.
class DeviceKernels {
public:
  // --- blur (depthwise 3x3 filter, padding 1) -----------------------------
  /// out[n,c,i,j] = sum_{a,b<3} filter[c,0,a,b] * input[n,c,i*sh+a-1,j*sw+b-1]
  /// (zero outside); out is (N, C, (H-1)/sh+1, (W-1)/sw+1). H, W >= 1.
  virtual at::Tensor blur(const at::Tensor &input, const at::Tensor &filter,
                          BlurGeometry geometry) const = 0;
  /// The gradient of `blur` with respect to its input of size H x W.
  virtual at::Tensor blurBackward(const at::Tensor &gradOutput,
                                  const at::Tensor &filter, int64_t inputH,
                                  int64_t inputW,
                                  BlurGeometry geometry) const = 0;

  // --- max pool (stride 1) then blur, fused -------------------------------
  /// blur(max_pool2d(input, kernel, stride 1, pad, dilation)): the max-pool
  /// map has size Hm = H + 2 padH - dilationH (kernelH - 1), likewise Wm, and
  /// is never materialized whole; padding is -inf (ignored) as in max_pool2d.
  virtual at::Tensor maxBlur(const at::Tensor &input, const at::Tensor &filter,
                             MaxPoolGeometry pool,
                             BlurGeometry geometry) const = 0;
  /// The gradient of `maxBlur` with respect to input: the blur's gradient
  /// routed to each window's argmax (first maximum in window order, as
  /// max_pool2d picks it); ties and NaN as max_pool2d.
  virtual at::Tensor maxBlurBackward(const at::Tensor &gradOutput,
                                     const at::Tensor &input,
                                     const at::Tensor &filter,
                                     MaxPoolGeometry pool,
                                     BlurGeometry geometry) const = 0;

  // --- squeeze-excite -------------------------------------------------------
  /// (N, C) float: the mean of each (n, c) plane.
  virtual at::Tensor channelMean(const at::Tensor &input) const = 0;
  /// (N, C) float: sum over H, W of dy * x for each (n, c).
  virtual at::Tensor channelDot(const at::Tensor &dy,
                                const at::Tensor &x) const = 0;
  /// out = x * scale[n,c] (+ shift[n,c] if shift is defined), in `dtype`.
  /// scale and shift are (N, C) float.
  virtual at::Tensor scaleChannels(const at::Tensor &x, const at::Tensor &scale,
                                   const at::Tensor &shift,
                                   at::ScalarType dtype) const = 0;

  // --- ghost batch norm: chunk k holds samples [k*chunk, (k+1)*chunk) -------
  /// (mean, biased variance), each (K, C) float, K = ceil(N / chunk).
  virtual std::tuple<at::Tensor, at::Tensor>
  chunkStats(const at::Tensor &x, int64_t chunk) const = 0;
  /// (sum of dy, sum of dy * (x - mean[k,c])), each (K, C) float.
  virtual std::tuple<at::Tensor, at::Tensor>
  chunkGradStats(const at::Tensor &dy, const at::Tensor &x,
                 const at::Tensor &mean, int64_t chunk) const = 0;
  /// out = a[k,c] * x + b[k,c] in `dtype`; a, b are (K, C) float.
  virtual at::Tensor chunkAffine(const at::Tensor &x, const at::Tensor &a,
                                 const at::Tensor &b, int64_t chunk,
                                 at::ScalarType dtype) const = 0;
  /// out = a[k,c] * dy + b[k,c] * x + c[k,c] in `dtype`; (K, C) float.
  virtual at::Tensor chunkAffine2(const at::Tensor &dy, const at::Tensor &x,
                                  const at::Tensor &a, const at::Tensor &b,
                                  const at::Tensor &c, int64_t chunk,
                                  at::ScalarType dtype) const = 0;

protected:
  DeviceKernels() = default;
  DeviceKernels(const DeviceKernels &) = delete;
  DeviceKernels &operator=(const DeviceKernels &) = delete;
  /// Each device's object is a function-local static, never deleted through
  /// this class.
  ~DeviceKernels() = default;
};

/// The sizes of maxBlur's result for an (N, C, H, W) input: (N, C,
/// (Hm - 1) / strideH + 1, (Wm - 1) / strideW + 1), with the max-pool map's
/// Hm x Wm as maxBlur gives them; what maxBlurBackward's gradOutput must be.
inline std::vector<int64_t> maxBlurOutputSizes(at::IntArrayRef input,
                                               MaxPoolGeometry pool,
                                               BlurGeometry blur) {
  int64_t hm = input[2] + 2 * pool.padH - pool.dilationH * (pool.kernelH - 1);
  int64_t wm = input[3] + 2 * pool.padW - pool.dilationW * (pool.kernelW - 1);
  return {input[0], input[1], (hm - 1) / blur.strideH + 1,
          (wm - 1) / blur.strideW + 1};
}

/// (K, 1): how many values each chunk of `chunk` samples (of n, with
/// `perSample` values each) reduces over; the last chunk may be smaller.
inline at::Tensor chunkCounts(int64_t n, int64_t chunk, int64_t perSample,
                              const at::TensorOptions &options) {
  int64_t chunks = (n + chunk - 1) / chunk;
  at::Tensor counts = at::full({chunks, 1}, double(chunk * perSample), options);
  counts[chunks - 1].fill_(double((n - (chunks - 1) * chunk) * perSample));
  return counts;
}

/// The CPU primitives (runtime/ops/cpu).
const DeviceKernels &cpuKernels();

#ifdef COMPOSER_WITH_CUDA
/// The CUDA primitives (runtime/ops/cuda), on the current stream.
const DeviceKernels &cudaKernels();
#endif

} // namespace composer::ops

#endif // COMPOSER_RUNTIME_OPS_KERNELS_H
