//===- FusedOps.cpp - the composer:: ops below autograd -------------------===//

#include "FusedOps.h"
#include "Kernels.h"

#include <ATen/ATen.h>

namespace composer::ops::impl {
namespace {

const DeviceKernels &kernelsFor(const at::Tensor &t) {
  if (t.is_cpu())
    return cpuKernels();
#ifdef COMPOSER_WITH_CUDA
  if (t.is_cuda())
    return cudaKernels();
#endif
  TORCH_CHECK(false, "composer ops: no kernels for device ", t.device());
}

/// The activation in the memory format its strides suggest, so kernels see
/// NCHW or channels_last contiguous data.
at::Tensor activation(const at::Tensor &t, const char *op) {
  TORCH_CHECK(t.dim() == 4, op, ": expected a 4-D (N, C, H, W) input, got ",
              t.dim(), "-D");
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), op,
              ": expected a floating-point input, got ", t.scalar_type());
  return t.contiguous(t.suggest_memory_format());
}

/// `grad` laid out like `like` (autograd may hand any strides).
at::Tensor gradientLike(const at::Tensor &grad, const at::Tensor &like) {
  bool channelsLast = !like.is_contiguous() &&
                      like.is_contiguous(at::MemoryFormat::ChannelsLast);
  return grad.contiguous(channelsLast ? at::MemoryFormat::ChannelsLast
                                      : at::MemoryFormat::Contiguous);
}

/// float for reduced precision, the dtype itself otherwise.
at::ScalarType accumulationType(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}

std::array<int64_t, 2> pair(at::IntArrayRef values, const char *what,
                            const char *op) {
  TORCH_CHECK(values.size() == 2 || values.size() == 1, op, ": ", what,
              " must have 1 or 2 values, got ", values.size());
  return {values.front(), values.back()};
}

BlurGeometry blurGeometry(at::IntArrayRef stride, const char *op) {
  auto [sh, sw] = pair(stride, "stride", op);
  TORCH_CHECK(sh >= 1 && sw >= 1, op, ": stride must be positive");
  return {sh, sw};
}

MaxPoolGeometry poolGeometry(at::IntArrayRef kernelSize,
                             at::IntArrayRef padding, at::IntArrayRef dilation,
                             const char *op) {
  auto [kh, kw] = pair(kernelSize, "kernel_size", op);
  auto [ph, pw] = pair(padding, "padding", op);
  auto [dh, dw] = pair(dilation, "dilation", op);
  TORCH_CHECK(kh >= 1 && kw >= 1 && dh >= 1 && dw >= 1, op,
              ": kernel_size and dilation must be positive");
  TORCH_CHECK(ph >= 0 && pw >= 0 && 2 * ph <= kh && 2 * pw <= kw, op,
              ": padding must be at most half the kernel size");
  return {kh, kw, ph, pw, dh, dw};
}

/// A BatchNorm{1,2,3}d input as the 4-D (N, C, H, W) the kernels take.
at::Tensor asImages(const at::Tensor &t) {
  TORCH_CHECK(t.dim() >= 2 && t.dim() <= 5,
              "composer::ghost_batch_norm: expected a 2-D to 5-D input, got ",
              t.dim(), "-D");
  if (t.dim() == 4)
    return t.contiguous(t.suggest_memory_format());
  at::Tensor flat = t.contiguous();
  int64_t n = t.size(0), c = t.size(1);
  return flat.view({n, c, flat.numel() / std::max<int64_t>(1, n * c), 1});
}

at::Tensor perChannel(const c10::optional<at::Tensor> &t, int64_t channels,
                      double fill, at::ScalarType dtype,
                      const at::Device &device, const char *what) {
  if (!t || !t->defined())
    return at::full({channels}, fill, at::TensorOptions(dtype).device(device));
  TORCH_CHECK(t->numel() == channels, "composer::ghost_batch_norm: ", what,
              " has ", t->numel(), " values for ", channels, " channels");
  return t->to(dtype).reshape({channels});
}

} // namespace

bool blurIsSubsampling(const at::Tensor &input) {
  return input.dim() == 4 && std::min(input.size(2), input.size(3)) < 3;
}

at::Tensor subsample(const at::Tensor &input, at::IntArrayRef stride) {
  BlurGeometry g = blurGeometry(stride, "composer::blur_pool2d");
  return input.slice(2, 0, c10::nullopt, g.strideH)
      .slice(3, 0, c10::nullopt, g.strideW)
      .contiguous(input.suggest_memory_format());
}

at::Tensor blurPool2d(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef stride) {
  const char *op = "composer::blur_pool2d";
  at::Tensor x = activation(input, op);
  if (blurIsSubsampling(x))
    return subsample(x, stride);
  return kernelsFor(x).blur(x, filter, blurGeometry(stride, op));
}

at::Tensor blurPool2dBackward(const at::Tensor &gradOutput,
                              const at::Tensor &filter,
                              at::IntArrayRef inputSize,
                              at::IntArrayRef stride) {
  const char *op = "composer::blur_pool2d_backward";
  at::Tensor dy = activation(gradOutput, op);
  TORCH_CHECK(inputSize.size() == 2, op, ": input_size must be (H, W)");
  return kernelsFor(dy).blurBackward(dy, filter, inputSize[0], inputSize[1],
                                     blurGeometry(stride, op));
}

at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride) {
  const char *op = "composer::blur_max_pool2d";
  at::Tensor x = activation(input, op);
  return kernelsFor(x).maxBlur(x, filter,
                               poolGeometry(kernelSize, padding, dilation, op),
                               blurGeometry(stride, op));
}

at::Tensor
blurMaxPool2dBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                      const at::Tensor &filter, at::IntArrayRef kernelSize,
                      at::IntArrayRef padding, at::IntArrayRef dilation,
                      at::IntArrayRef stride) {
  const char *op = "composer::blur_max_pool2d_backward";
  at::Tensor x = activation(input, op);
  at::Tensor dy = gradientLike(gradOutput, x).to(x.scalar_type());
  return kernelsFor(x).maxBlurBackward(
      dy, x, filter, poolGeometry(kernelSize, padding, dilation, op),
      blurGeometry(stride, op));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ghostBatchNormForward(
    const at::Tensor &input, const c10::optional<at::Tensor> &weight,
    const c10::optional<at::Tensor> &bias,
    const c10::optional<at::Tensor> &runningMean,
    const c10::optional<at::Tensor> &runningVar, bool training, double momentum,
    double eps, int64_t ghostBatchSize, c10::optional<at::ScalarType> dtype) {
  const char *op = "composer::ghost_batch_norm";
  TORCH_CHECK(ghostBatchSize >= 1, op, ": ghost_batch_size must be positive");
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), op,
              ": expected a floating-point input, got ", input.scalar_type());
  at::ScalarType outType = dtype.value_or(input.scalar_type());
  at::Tensor x = asImages(input);
  // The kernels read reduced precision and write float; any other pair is
  // the cast first.
  bool castInKernel =
      outType == at::kFloat &&
      (x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf);
  if (outType != x.scalar_type() && !castInKernel)
    x = x.to(outType);
  const DeviceKernels &k = kernelsFor(x);
  int64_t n = x.size(0), c = x.size(1), perSample = x.size(2) * x.size(3);
  at::ScalarType acc = accumulationType(outType);
  bool hasRunning = runningMean && runningMean->defined() && runningVar &&
                    runningVar->defined();
  bool batchStats = training || !hasRunning;

  at::Tensor mean, invstd;
  if (batchStats) {
    int64_t chunk = training ? ghostBatchSize : n;
    int64_t chunks = (n + chunk - 1) / chunk;
    int64_t smallest = (n - (chunks - 1) * chunk) * perSample;
    TORCH_CHECK(n > 0 && std::min(chunk * perSample, smallest) > 1, op,
                ": expected more than 1 value per channel in each ghost "
                "batch, got input size ",
                input.sizes());
    auto [chunkMean, chunkVar] = k.chunkStats(x, chunk);
    mean = chunkMean;
    invstd = (chunkVar + eps).rsqrt();
    if (training && hasRunning) {
      // One running-statistics update per chunk, in order, as the aten
      // lowering's loop of batch_norm calls does.
      at::NoGradGuard noGrad;
      at::Tensor counts = chunkCounts(n, chunk, perSample, chunkVar.options());
      at::Tensor unbiased = chunkVar * counts / (counts - 1);
      double m = momentum / double(chunks);
      for (int64_t i = 0; i < chunks; ++i) {
        runningMean->mul_(1 - m).add_(chunkMean[i].to(runningMean->dtype()), m);
        runningVar->mul_(1 - m).add_(unbiased[i].to(runningVar->dtype()), m);
      }
    }
  } else {
    TORCH_CHECK(runningMean->numel() == c && runningVar->numel() == c, op,
                ": running statistics have ", runningMean->numel(),
                " values for ", c, " channels");
    mean = runningMean->to(acc).reshape({1, c});
    invstd = (runningVar->to(acc).reshape({1, c}) + eps).rsqrt();
  }
  at::Tensor scale =
      invstd * perChannel(weight, c, 1, acc, x.device(), "weight");
  at::Tensor shift =
      perChannel(bias, c, 0, acc, x.device(), "bias") - mean * scale;
  int64_t chunk = mean.size(0) == 1 ? n : ghostBatchSize;
  at::Tensor out = k.chunkAffine(x, scale, shift, chunk, outType);
  return {out.view(input.sizes()), mean, invstd};
}

at::Tensor ghostBatchNorm(const at::Tensor &input,
                          const c10::optional<at::Tensor> &weight,
                          const c10::optional<at::Tensor> &bias,
                          const c10::optional<at::Tensor> &runningMean,
                          const c10::optional<at::Tensor> &runningVar,
                          bool training, double momentum, double eps,
                          int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype) {
  return std::get<0>(ghostBatchNormForward(input, weight, bias, runningMean,
                                           runningVar, training, momentum, eps,
                                           ghostBatchSize, dtype));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
ghostBatchNormBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                       const c10::optional<at::Tensor> &weight,
                       const at::Tensor &saveMean, const at::Tensor &saveInvstd,
                       bool batchStats, int64_t chunk,
                       std::array<bool, 3> outputMask) {
  at::Tensor x = asImages(input);
  at::Tensor dy = gradientLike(gradOutput.reshape(x.sizes()), x);
  // The cast-aware form returns float for a reduced-precision input: its
  // gradient is computed in float, then rounded once, as the cast's would be.
  if (dy.scalar_type() != x.scalar_type())
    x = x.to(dy.scalar_type());
  const DeviceKernels &k = kernelsFor(x);
  int64_t n = x.size(0), c = x.size(1), perSample = x.size(2) * x.size(3);
  at::ScalarType acc = saveMean.scalar_type();
  auto [sumDy, sumDyXmu] = k.chunkGradStats(dy, x, saveMean, chunk);
  at::Tensor w = perChannel(weight, c, 1, acc, x.device(), "weight");
  at::Tensor dInput, dWeight, dBias;
  if (outputMask[1] && weight && weight->defined())
    dWeight = (sumDyXmu * saveInvstd).sum(0).to(weight->scalar_type());
  if (outputMask[2])
    dBias = sumDy.sum(0); // The caller casts it to the bias's dtype.
  if (outputMask[0]) {
    at::Tensor scale = saveInvstd * w;
    if (batchStats) {
      at::Tensor counts = chunkCounts(n, chunk, perSample, scale.options());
      at::Tensor onX = -scale * saveInvstd * saveInvstd * sumDyXmu / counts;
      at::Tensor constant = -scale * sumDy / counts - onX * saveMean;
      dInput =
          k.chunkAffine2(dy, x, scale, onX, constant, chunk, x.scalar_type());
    } else {
      dInput =
          k.chunkAffine(dy, scale, at::zeros_like(scale), n, x.scalar_type());
    }
    dInput = dInput.view(input.sizes()).to(input.scalar_type());
  }
  return {dInput, dWeight, dBias};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
squeezeExciteForward(const at::Tensor &input, const at::Tensor &fc1,
                     const at::Tensor &fc2) {
  const char *op = "composer::squeeze_excite";
  at::Tensor x = activation(input, op);
  int64_t c = x.size(1);
  TORCH_CHECK(fc1.dim() == 2 && fc1.size(1) == c && fc2.dim() == 2 &&
                  fc2.size(0) == c && fc2.size(1) == fc1.size(0),
              op, ": expected fc1 (L, ", c, ") and fc2 (", c, ", L), got fc1 ",
              fc1.sizes(), " and fc2 ", fc2.sizes());
  const DeviceKernels &k = kernelsFor(x);
  at::Tensor pooled = k.channelMean(x);
  at::ScalarType acc = pooled.scalar_type();
  at::Tensor hidden = at::relu(at::linear(pooled, fc1.to(acc)));
  at::Tensor gate = at::sigmoid(at::linear(hidden, fc2.to(acc)));
  at::Tensor out = k.scaleChannels(x, gate, at::Tensor(), x.scalar_type());
  return {out, pooled, hidden, gate};
}

at::Tensor squeezeExcite(const at::Tensor &input, const at::Tensor &fc1,
                         const at::Tensor &fc2) {
  return std::get<0>(squeezeExciteForward(input, fc1, fc2));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
squeezeExciteBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                      const at::Tensor &fc1, const at::Tensor &fc2,
                      const at::Tensor &pooled, const at::Tensor &hidden,
                      const at::Tensor &gate) {
  at::Tensor x = activation(input, "composer::squeeze_excite_backward");
  at::Tensor dy = gradientLike(gradOutput, x).to(x.scalar_type());
  const DeviceKernels &k = kernelsFor(x);
  at::ScalarType acc = pooled.scalar_type();
  // Through the gate: y = x * g, g = sigmoid(fc2 h), h = relu(fc1 mean(x)).
  at::Tensor dGate = k.channelDot(dy, x);
  at::Tensor dLogit = dGate * gate * (1 - gate);
  at::Tensor dFc2 = dLogit.t().mm(hidden);
  at::Tensor dHidden = dLogit.mm(fc2.to(acc)) * (hidden > 0);
  at::Tensor dFc1 = dHidden.t().mm(pooled);
  at::Tensor dPooled = dHidden.mm(fc1.to(acc)) / double(x.size(2) * x.size(3));
  at::Tensor dInput = k.scaleChannels(dy, gate, dPooled, x.scalar_type());
  return {dInput, dFc1.to(fc1.scalar_type()), dFc2.to(fc2.scalar_type())};
}

} // namespace composer::ops::impl
