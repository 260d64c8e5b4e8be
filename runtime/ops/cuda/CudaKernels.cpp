//===- CudaKernels.cpp - the CUDA primitives on at::Tensor ----------------===//
//
// CudaKernels, the DeviceKernels of CUDA: checks the Kernels.h contract,
// allocates results in the activations' memory format, converts the filter and
// per-channel tensors to the accumulation type, and runs Kernels.cuh's kernels
// on the current stream of the input's device. Built only with a CUDA LibTorch
// (COMPOSER_WITH_CUDA); the unit tests also build it against the host
// emulation of the kernels (COMPOSER_CUDA_EMULATION: CPU tensors, no
// stream).
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"
#include "KernelDType.h"
#include "Kernels.cuh"

#ifndef COMPOSER_CUDA_EMULATION
// c10's headers rather than ATen/cuda/CUDAContext.h, which also pulls in
// cuBLAS, cuSPARSE and cuSOLVER: less to break against another toolkit.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <initializer_list>
#include <optional>
#include <utility>

namespace composer::ops {
namespace {

/// The device and stream of one call: the input's device made current.
class Launch {
public:
#ifndef COMPOSER_CUDA_EMULATION
  explicit Launch(const at::Tensor &t)
      : guard_(t.device()), stream_(c10::cuda::getCurrentCUDAStream()) {}
  cudaStream_t stream() const { return stream_.stream(); }
  static bool onDevice(const at::Tensor &t) { return t.is_cuda(); }

private:
  c10::cuda::CUDAGuard guard_;
  c10::cuda::CUDAStream stream_;
#else
  explicit Launch(const at::Tensor &) {}
  cudaStream_t stream() const { return nullptr; }
  static bool onDevice(const at::Tensor &t) { return t.is_cpu(); }
#endif
};

void check(cudaError_t err, const char *op) {
  TORCH_CHECK(err == cudaSuccess, "composer ops: CUDA kernel ", op,
              " failed: ", cudaGetErrorString(err));
}

gpu::DType dtypeOf(at::ScalarType t, const char *op) {
  std::optional<gpu::DType> dtype = gpu::kernelDType(t);
  TORCH_CHECK(dtype, "composer ops: ", op,
              " takes float32, float64, bfloat16 or float16 activations, got ",
              t);
  return *dtype;
}

/// float, or double for double activations.
at::ScalarType accType(at::ScalarType activation) {
  return activation == at::kDouble ? at::kDouble : at::kFloat;
}

/// The common dtype two activations are cast to where no kernel takes the
/// pair as it is.
at::ScalarType commonType(at::ScalarType a, at::ScalarType b) {
  return a == at::kDouble || b == at::kDouble ? at::kDouble : at::kFloat;
}

using Named = std::pair<const at::Tensor *, const char *>;

/// Checks activations against the Kernels.h contract (4-D, supported dtype,
/// one device, contiguous in one memory format) and returns that format.
gpu::Layout layoutOf(const char *op, std::initializer_list<Named> tensors) {
  const at::Tensor &first = *tensors.begin()->first;
  bool channelsLast = false;
  for (auto [t, name] : tensors) {
    TORCH_CHECK(t->defined(), "composer ops: ", op, ": ", name,
                " is undefined");
    TORCH_CHECK(Launch::onDevice(*t), "composer ops: ", op, ": ", name,
                " is on ", t->device(), ", expected a CUDA tensor");
    TORCH_CHECK(t->device() == first.device(), "composer ops: ", op, ": ", name,
                " is on ", t->device(), ", the others on ", first.device());
    TORCH_CHECK(t->dim() == 4, "composer ops: ", op, ": expected ", name,
                " to be 4-D (N, C, H, W), got ", t->dim(), "-D");
    dtypeOf(t->scalar_type(), op);
    // Contiguous in both (C == 1, or H == W == 1) decides nothing.
    channelsLast =
        channelsLast || (!t->is_contiguous() &&
                         t->is_contiguous(at::MemoryFormat::ChannelsLast));
  }
  at::MemoryFormat format = channelsLast ? at::MemoryFormat::ChannelsLast
                                         : at::MemoryFormat::Contiguous;
  for (auto [t, name] : tensors)
    TORCH_CHECK(t->is_contiguous(format), "composer ops: ", op, ": ", name,
                " (sizes ", t->sizes(), ", strides ", t->strides(),
                ") must be contiguous in ",
                channelsLast ? "channels_last, like the other activations"
                             : "NCHW or channels_last");
  return channelsLast ? gpu::Layout::NHWC : gpu::Layout::NCHW;
}

at::MemoryFormat formatOf(gpu::Layout layout) {
  return layout == gpu::Layout::NHWC ? at::MemoryFormat::ChannelsLast
                                     : at::MemoryFormat::Contiguous;
}

gpu::Shape shapeOf(const at::Tensor &t, const char *op) {
  gpu::Shape s{t.size(0), t.size(1), t.size(2), t.size(3)};
  TORCH_CHECK(gpu::shapeSupported(s), "composer ops: ", op, ": sizes ",
              t.sizes(),
              " are past the CUDA kernels' 32-bit plane and pixel indices");
  return s;
}

at::Tensor empty4d(at::IntArrayRef sizes, const at::Tensor &like,
                   at::ScalarType dtype, gpu::Layout layout) {
  return at::empty(sizes, like.options().dtype(dtype), formatOf(layout));
}

/// The blur filter (C, 1, 3, 3) as contiguous accumulation-type values on
/// the activation's device.
at::Tensor filterTaps(const at::Tensor &filter, const at::Tensor &x,
                      const char *op) {
  int64_t channels = x.size(1);
  TORCH_CHECK(filter.dim() == 4 && filter.size(0) == channels &&
                  filter.size(1) == 1 && filter.size(2) == 3 &&
                  filter.size(3) == 3,
              "composer ops: ", op, ": expected a (", channels,
              ", 1, 3, 3) filter, got ", filter.sizes());
  return filter.to(x.device(), accType(x.scalar_type())).contiguous();
}

/// A (rows, C) per-channel tensor as contiguous `acc` values on x's device.
at::Tensor perChannel(const at::Tensor &t, int64_t rows, const at::Tensor &x,
                      at::ScalarType acc, const char *op, const char *name) {
  TORCH_CHECK(t.defined() && t.numel() == rows * x.size(1),
              "composer ops: ", op, ": expected ", name, " of ", rows, " x ",
              x.size(1), " values, got ",
              t.defined() ? t.sizes() : at::IntArrayRef{});
  return t.to(x.device(), acc).contiguous().view({rows, x.size(1)});
}

int64_t groupCount(const at::Tensor &x, int64_t chunk, const char *op) {
  TORCH_CHECK(chunk >= 1, "composer ops: ", op, ": chunk must be positive");
  return (x.size(0) + chunk - 1) / chunk;
}

gpu::Stride2d strideOf(BlurGeometry g, const char *op) {
  TORCH_CHECK(g.strideH >= 1 && g.strideW >= 1, "composer ops: ", op,
              ": stride must be positive");
  return {g.strideH, g.strideW};
}

gpu::MaxPool poolOf(MaxPoolGeometry p, const at::Tensor &x, const char *op) {
  TORCH_CHECK(p.kernelH >= 1 && p.kernelW >= 1 && p.dilationH >= 1 &&
                  p.dilationW >= 1 && p.padH >= 0 && p.padW >= 0,
              "composer ops: ", op, ": invalid max-pool geometry");
  gpu::MaxPool pool{p.kernelH, p.kernelW,   p.padH,
                    p.padW,    p.dilationH, p.dilationW};
  TORCH_CHECK(
      gpu::maxPoolSize(x.size(2), p.kernelH, p.padH, p.dilationH) >= 1 &&
          gpu::maxPoolSize(x.size(3), p.kernelW, p.padW, p.dilationW) >= 1,
      "composer ops: ", op, ": the max pool's output of input ", x.sizes(),
      " would be empty");
  return pool;
}

/// The CUDA primitives (Kernels.h) on at::Tensor.
class CudaKernels final : public DeviceKernels {
public:
  at::Tensor blur(const at::Tensor &input, const at::Tensor &filter,
                  BlurGeometry geometry) const override;
  at::Tensor blurBackward(const at::Tensor &gradOutput,
                          const at::Tensor &filter, int64_t inputH,
                          int64_t inputW, BlurGeometry geometry) const override;
  at::Tensor maxBlur(const at::Tensor &input, const at::Tensor &filter,
                     MaxPoolGeometry geometry,
                     BlurGeometry blurGeometry) const override;
  at::Tensor maxBlurBackward(const at::Tensor &gradOutput,
                             const at::Tensor &input, const at::Tensor &filter,
                             MaxPoolGeometry geometry,
                             BlurGeometry blurGeometry) const override;
  at::Tensor channelMean(const at::Tensor &input) const override;
  at::Tensor channelDot(const at::Tensor &dy,
                        const at::Tensor &x) const override;
  at::Tensor scaleChannels(const at::Tensor &x, const at::Tensor &scale,
                           const at::Tensor &shift,
                           at::ScalarType dtype) const override;
  std::tuple<at::Tensor, at::Tensor> chunkStats(const at::Tensor &x,
                                                int64_t chunk) const override;
  std::tuple<at::Tensor, at::Tensor>
  chunkGradStats(const at::Tensor &dy, const at::Tensor &x,
                 const at::Tensor &mean, int64_t chunk) const override;
  at::Tensor chunkAffine(const at::Tensor &x, const at::Tensor &a,
                         const at::Tensor &b, int64_t chunk,
                         at::ScalarType dtype) const override;
  at::Tensor chunkAffine2(const at::Tensor &dy, const at::Tensor &x,
                          const at::Tensor &a, const at::Tensor &b,
                          const at::Tensor &c, int64_t chunk,
                          at::ScalarType dtype) const override;
};

//===----------------------------------------------------------------------===//
// Blur
//===----------------------------------------------------------------------===//

at::Tensor CudaKernels::blur(const at::Tensor &input, const at::Tensor &filter,
                             BlurGeometry geometry) const {
  const char *op = "blur";
  gpu::Layout layout = layoutOf(op, {{&input, "input"}});
  gpu::Stride2d s = strideOf(geometry, op);
  Launch launch(input);
  at::Tensor taps = filterTaps(filter, input, op);
  int64_t h = input.size(2), w = input.size(3);
  TORCH_CHECK(h >= 1 && w >= 1, "composer ops: ", op,
              ": empty planes: ", input.sizes());
  at::Tensor out = empty4d(
      {input.size(0), input.size(1), (h - 1) / s.h + 1, (w - 1) / s.w + 1},
      input, input.scalar_type(), layout);
  check(gpu::blur(input.data_ptr(), out.data_ptr(),
                  dtypeOf(input.scalar_type(), op), layout, shapeOf(input, op),
                  taps.data_ptr(), s, launch.stream()),
        op);
  return out;
}

at::Tensor CudaKernels::blurBackward(const at::Tensor &gradOutput,
                                     const at::Tensor &filter, int64_t inputH,
                                     int64_t inputW,
                                     BlurGeometry geometry) const {
  const char *op = "blurBackward";
  gpu::Layout layout = layoutOf(op, {{&gradOutput, "gradOutput"}});
  gpu::Stride2d s = strideOf(geometry, op);
  TORCH_CHECK(inputH >= 1 && inputW >= 1 &&
                  gradOutput.size(2) == (inputH - 1) / s.h + 1 &&
                  gradOutput.size(3) == (inputW - 1) / s.w + 1,
              "composer ops: ", op, ": gradOutput ", gradOutput.sizes(),
              " does not match an input of ", inputH, " x ", inputW,
              " at stride (", s.h, ", ", s.w, ")");
  Launch launch(gradOutput);
  at::Tensor taps = filterTaps(filter, gradOutput, op);
  at::Tensor gradInput =
      empty4d({gradOutput.size(0), gradOutput.size(1), inputH, inputW},
              gradOutput, gradOutput.scalar_type(), layout);
  check(gpu::blurBackward(gradOutput.data_ptr(), gradInput.data_ptr(),
                          dtypeOf(gradOutput.scalar_type(), op), layout,
                          shapeOf(gradInput, op), taps.data_ptr(), s,
                          launch.stream()),
        op);
  return gradInput;
}

at::Tensor CudaKernels::maxBlur(const at::Tensor &input,
                                const at::Tensor &filter,
                                MaxPoolGeometry geometry,
                                BlurGeometry blurGeometry) const {
  const char *op = "maxBlur";
  gpu::Layout layout = layoutOf(op, {{&input, "input"}});
  gpu::Stride2d s = strideOf(blurGeometry, op);
  gpu::MaxPool pool = poolOf(geometry, input, op);
  Launch launch(input);
  at::Tensor taps = filterTaps(filter, input, op);
  at::Tensor out =
      empty4d(maxBlurOutputSizes(input.sizes(), geometry, blurGeometry), input,
              input.scalar_type(), layout);
  check(gpu::maxBlur(input.data_ptr(), out.data_ptr(),
                     dtypeOf(input.scalar_type(), op), layout,
                     shapeOf(input, op), taps.data_ptr(), pool, s,
                     launch.stream()),
        op);
  return out;
}

at::Tensor CudaKernels::maxBlurBackward(const at::Tensor &gradOutput,
                                        const at::Tensor &input,
                                        const at::Tensor &filter,
                                        MaxPoolGeometry geometry,
                                        BlurGeometry blurGeometry) const {
  const char *op = "maxBlurBackward";
  gpu::Layout layout =
      layoutOf(op, {{&gradOutput, "gradOutput"}, {&input, "input"}});
  gpu::Stride2d s = strideOf(blurGeometry, op);
  gpu::MaxPool pool = poolOf(geometry, input, op);
  TORCH_CHECK(gradOutput.sizes().equals(
                  maxBlurOutputSizes(input.sizes(), geometry, blurGeometry)),
              "composer ops: ", op, ": gradOutput ", gradOutput.sizes(),
              " does not match input ", input.sizes());
  Launch launch(input);
  at::Tensor taps = filterTaps(filter, input, op);
  // One dtype per kernel: the gradient in the input's.
  at::Tensor dy = gradOutput.to(input.scalar_type());
  at::Tensor gradInput =
      empty4d(input.sizes(), input, input.scalar_type(), layout);
  check(gpu::maxBlurBackward(
            dy.data_ptr(), input.data_ptr(), gradInput.data_ptr(),
            dtypeOf(input.scalar_type(), op), layout, shapeOf(input, op),
            taps.data_ptr(), pool, s, launch.stream()),
        op);
  return gradInput;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Runs reduction `kind` of x (and dy) per (group of `chunk`, channel):
/// (K, C) results in the accumulation type, the second one when `two`.
std::pair<at::Tensor, at::Tensor> reduce(gpu::Reduction kind, const char *op,
                                         at::Tensor dy, at::Tensor x,
                                         int64_t chunk,
                                         const at::Tensor &center, bool two) {
  gpu::Layout layout = dy.defined() ? layoutOf(op, {{&dy, "dy"}, {&x, "x"}})
                                    : layoutOf(op, {{&x, "x"}});
  TORCH_CHECK(!dy.defined() || dy.sizes() == x.sizes(), "composer ops: ", op,
              ": dy ", dy.sizes(), " and x ", x.sizes(), " differ in size");
  Launch launch(x);
  if (dy.defined() && !gpu::reduceSupported(kind, dtypeOf(dy.scalar_type(), op),
                                            dtypeOf(x.scalar_type(), op))) {
    at::ScalarType common = commonType(dy.scalar_type(), x.scalar_type());
    dy = dy.to(common);
    x = x.to(common);
  }
  int64_t groups = groupCount(x, chunk, op);
  at::ScalarType acc = accType(x.scalar_type());
  at::Tensor centers;
  if (kind == gpu::Reduction::GradStats)
    centers = perChannel(center, groups, x, acc, op, "mean");
  at::Tensor out0 = at::empty({groups, x.size(1)}, x.options().dtype(acc));
  at::Tensor out1 = two ? at::empty({groups, x.size(1)}, x.options().dtype(acc))
                        : at::Tensor();
  gpu::DType xType = dtypeOf(x.scalar_type(), op);
  gpu::Shape shape = shapeOf(x, op);
  size_t bytes = gpu::reduceWorkspaceBytes(kind, xType, layout, shape, chunk);
  at::Tensor workspace;
  if (bytes > 0)
    workspace = at::empty({int64_t(bytes)}, x.options().dtype(at::kByte));
  check(gpu::reduce(kind, dy.defined() ? dy.data_ptr() : nullptr,
                    dy.defined() ? dtypeOf(dy.scalar_type(), op) : xType,
                    x.data_ptr(), xType, layout, shape, chunk,
                    centers.defined() ? centers.data_ptr() : nullptr,
                    out0.data_ptr(), two ? out1.data_ptr() : nullptr,
                    bytes > 0 ? workspace.data_ptr() : nullptr, bytes,
                    launch.stream()),
        op);
  return {out0, out1};
}

at::Tensor CudaKernels::channelMean(const at::Tensor &input) const {
  return reduce(gpu::Reduction::Mean, "channelMean", {}, input, 1, {}, false)
      .first;
}

at::Tensor CudaKernels::channelDot(const at::Tensor &dy,
                                   const at::Tensor &x) const {
  return reduce(gpu::Reduction::Dot, "channelDot", dy, x, 1, {}, false).first;
}

std::tuple<at::Tensor, at::Tensor>
CudaKernels::chunkStats(const at::Tensor &x, int64_t chunk) const {
  auto [mean, var] =
      reduce(gpu::Reduction::Stats, "chunkStats", {}, x, chunk, {}, true);
  return {mean, var};
}

std::tuple<at::Tensor, at::Tensor>
CudaKernels::chunkGradStats(const at::Tensor &dy, const at::Tensor &x,
                            const at::Tensor &mean, int64_t chunk) const {
  auto [sumDy, sumDyXmu] = reduce(gpu::Reduction::GradStats, "chunkGradStats",
                                  dy, x, chunk, mean, true);
  return {sumDy, sumDyXmu};
}

//===----------------------------------------------------------------------===//
// Affine maps
//===----------------------------------------------------------------------===//

/// out = a[k,c] p + b[k,c] q + c[k,c] in `dtype`; q with b, and c, optional.
at::Tensor affine(const char *op, at::Tensor p, at::Tensor q,
                  const at::Tensor &a, const at::Tensor &b, const at::Tensor &c,
                  int64_t chunk, at::ScalarType dtype) {
  bool hasQ = q.defined();
  gpu::Layout layout =
      hasQ ? layoutOf(op, {{&p, "dy"}, {&q, "x"}}) : layoutOf(op, {{&p, "x"}});
  TORCH_CHECK(!hasQ || p.sizes() == q.sizes(), "composer ops: ", op, ": dy ",
              p.sizes(), " and x ", q.sizes(), " differ in size");
  dtypeOf(dtype, op);
  Launch launch(p);
  at::ScalarType outType = dtype;
  auto supported = [&] {
    return gpu::channelAffineSupported(
        dtypeOf(p.scalar_type(), op), hasQ,
        dtypeOf((hasQ ? q : p).scalar_type(), op), dtypeOf(outType, op));
  };
  if (!supported()) {
    // Any other mix: compute in the common dtype, then cast the result.
    outType = commonType(p.scalar_type(), hasQ ? q.scalar_type() : dtype);
    outType = commonType(outType, dtype);
    p = p.to(outType);
    if (hasQ)
      q = q.to(outType);
  }
  int64_t groups = groupCount(p, chunk, op);
  at::ScalarType acc = accType(outType);
  at::Tensor ca = perChannel(a, groups, p, acc, op, "a");
  at::Tensor cb = hasQ ? perChannel(b, groups, p, acc, op, "b") : at::Tensor();
  at::Tensor cc =
      c.defined() ? perChannel(c, groups, p, acc, op, "c") : at::Tensor();
  at::Tensor out = empty4d(p.sizes(), p, outType, layout);
  check(gpu::channelAffine(
            p.data_ptr(), dtypeOf(p.scalar_type(), op),
            hasQ ? q.data_ptr() : nullptr,
            dtypeOf((hasQ ? q : p).scalar_type(), op), out.data_ptr(),
            dtypeOf(outType, op), layout, shapeOf(p, op), chunk, ca.data_ptr(),
            hasQ ? cb.data_ptr() : nullptr,
            cc.defined() ? cc.data_ptr() : nullptr, launch.stream()),
        op);
  return outType == dtype ? out : out.to(dtype);
}

at::Tensor CudaKernels::scaleChannels(const at::Tensor &x,
                                      const at::Tensor &scale,
                                      const at::Tensor &shift,
                                      at::ScalarType dtype) const {
  return affine("scaleChannels", x, {}, scale, {}, shift, 1, dtype);
}

at::Tensor CudaKernels::chunkAffine(const at::Tensor &x, const at::Tensor &a,
                                    const at::Tensor &b, int64_t chunk,
                                    at::ScalarType dtype) const {
  return affine("chunkAffine", x, {}, a, {}, b, chunk, dtype);
}

at::Tensor CudaKernels::chunkAffine2(const at::Tensor &dy, const at::Tensor &x,
                                     const at::Tensor &a, const at::Tensor &b,
                                     const at::Tensor &c, int64_t chunk,
                                     at::ScalarType dtype) const {
  return affine("chunkAffine2", dy, x, a, b, c, chunk, dtype);
}

} // namespace

const DeviceKernels &cudaKernels() {
  static const CudaKernels instance{};
  return instance;
}

} // namespace composer::ops
