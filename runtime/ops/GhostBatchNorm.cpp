//===- GhostBatchNorm.cpp - composer::ghost_batch_norm --------------------===//
//
// Batch norm over Composer's ghost batches (torch.chunk of the batch into
// ceil(B / ghost_batch_size) pieces), with its cast-aware
// form (computed and returned in `dtype`). Backend kernels on the device's
// chunk primitives (Kernels.h), autograd, schemas and the C++ entry point.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "composer/Runtime/Ops.h"

#include <torch/autograd.h>

#include <array>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace composer::ops {
namespace impl {
namespace {

//===----------------------------------------------------------------------===//
// Backend kernels (CPU and CUDA)
//===----------------------------------------------------------------------===//

/// float for reduced precision, the dtype itself otherwise.
at::ScalarType accumulationType(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
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

at::Tensor perChannel(const OptionalTensor &t, int64_t channels, double fill,
                      at::ScalarType dtype, const at::Device &device,
                      const char *what) {
  if (!t || !t->defined())
    return at::full({channels}, fill, at::TensorOptions(dtype).device(device));
  TORCH_CHECK(t->numel() == channels, "composer::ghost_batch_norm: ", what,
              " has ", t->numel(), " values for ", channels, " channels");
  return t->to(dtype).reshape({channels});
}

/// Composer's ghost batches: n samples in ceil(n / ghost_batch_size) chunks
/// as torch.chunk cuts them, ceil(n / chunks) samples each and the last
/// fewer (80 in ghost batches of 32: 27, 27, 26).
int64_t getNumGhostBatches(int64_t n, int64_t ghostBatchSize) {
  return (n + ghostBatchSize - 1) / ghostBatchSize;
}
int64_t getGhostChunkSize(int64_t n, int64_t ghostBatchSize) {
  int64_t batches = getNumGhostBatches(n, ghostBatchSize);
  return batches == 0 ? n : (n + batches - 1) / batches;
}

/// (output, mean, invstd): mean and invstd are (K, C), one row per ghost
/// batch; a single row of running statistics when the op normalizes with
/// them.
std::tuple<at::Tensor, at::Tensor, at::Tensor> ghostBatchNormForward(
    const at::Tensor &input, const OptionalTensor &weight,
    const OptionalTensor &bias, const OptionalTensor &runningMean,
    const OptionalTensor &runningVar, bool training, double momentum,
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
    int64_t chunk = training ? getGhostChunkSize(n, ghostBatchSize) : n;
    int64_t chunks = chunk == 0 ? 0 : (n + chunk - 1) / chunk;
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
      // momentum / k, k = ceil(n / ghost_batch_size), as Composer.
      double m = momentum / double(getNumGhostBatches(n, ghostBatchSize));
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
  int64_t chunk = mean.size(0) == 1 ? n : getGhostChunkSize(n, ghostBatchSize);
  at::Tensor out = k.chunkAffine(x, scale, shift, chunk, outType);
  return {out.view(input.sizes()), mean, invstd};
}

/// Gradients of (input, weight, bias) where outputMask says; `chunk` is the
/// number of samples each row of saveMean covers.
std::tuple<at::Tensor, at::Tensor, at::Tensor>
ghostBatchNormBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                       const OptionalTensor &weight, const at::Tensor &saveMean,
                       const at::Tensor &saveInvstd, bool batchStats,
                       int64_t chunk, std::array<bool, 3> outputMask) {
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

} // namespace
} // namespace impl

//===----------------------------------------------------------------------===//
// Autograd
//===----------------------------------------------------------------------===//

namespace {

class GhostBatchNormFunction
    : public torch::autograd::Function<GhostBatchNormFunction> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
                            const OptionalTensor &weight,
                            const OptionalTensor &bias,
                            const OptionalTensor &runningMean,
                            const OptionalTensor &runningVar, bool training,
                            double momentum, double eps, int64_t ghostBatchSize,
                            c10::optional<at::ScalarType> dtype) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = composerOp<decltype(impl::ghostBatchNormForward)>(
        "composer::_ghost_batch_norm_forward");
    auto [out, mean, invstd] =
        op.call(input, weight, bias, runningMean, runningVar, training,
                momentum, eps, ghostBatchSize, dtype);
    bool hasRunning = runningMean && runningMean->defined() && runningVar &&
                      runningVar->defined();
    at::Tensor w = weight ? *weight : at::Tensor();
    ctx->save_for_backward({input, w, mean, invstd});
    ctx->saved_data["batch_stats"] = training || !hasRunning;
    ctx->saved_data["chunk"] =
        mean.size(0) == 1
            ? input.size(0)
            : impl::getGhostChunkSize(input.size(0), ghostBatchSize);
    ctx->saved_data["has_bias"] = bias && bias->defined();
    if (bias && bias->defined())
      ctx->saved_data["bias_dtype"] = bias->scalar_type();
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<decltype(impl::ghostBatchNormBackward)>(
        "composer::ghost_batch_norm_backward");
    variable_list saved = ctx->get_saved_variables();
    OptionalTensor weight =
        saved[1].defined() ? OptionalTensor(saved[1]) : c10::nullopt;
    bool hasBias = ctx->saved_data["has_bias"].toBool();
    // needs_input_grad counts only the tensor arguments that were given.
    bool hasWeight = saved[1].defined();
    std::array<bool, 3> mask = {
        ctx->needs_input_grad(0), hasWeight && ctx->needs_input_grad(1),
        hasBias && ctx->needs_input_grad(hasWeight ? 2 : 1)};
    auto [dx, dw, db] = op.call(grads[0], saved[0], weight, saved[2], saved[3],
                                ctx->saved_data["batch_stats"].toBool(),
                                ctx->saved_data["chunk"].toInt(), mask);
    if (db.defined())
      db = db.to(ctx->saved_data["bias_dtype"].toScalarType());
    return {dx,           dw,           db,           at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// C++ entry point
//===----------------------------------------------------------------------===//

at::Tensor ghostBatchNorm(const at::Tensor &input, const OptionalTensor &weight,
                          const OptionalTensor &bias,
                          const OptionalTensor &runningMean,
                          const OptionalTensor &runningVar, bool training,
                          double momentum, double eps, int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype) {
  static auto op =
      composerOp<decltype(ghostBatchNorm)>("composer::ghost_batch_norm");
  return op.call(input, weight, bias, runningMean, runningVar, training,
                 momentum, eps, ghostBatchSize, dtype);
}

} // namespace composer::ops

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

using namespace composer::ops;

TORCH_LIBRARY_FRAGMENT(composer, m) {
  m.def("ghost_batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
        "Tensor(a!)? running_mean, Tensor(b!)? running_var, bool training, "
        "float momentum, float eps, int ghost_batch_size, "
        "ScalarType? dtype=None) -> Tensor");
  m.def("_ghost_batch_norm_forward(Tensor input, Tensor? weight, "
        "Tensor? bias, Tensor(a!)? running_mean, Tensor(b!)? running_var, "
        "bool training, float momentum, float eps, int ghost_batch_size, "
        "ScalarType? dtype=None) -> (Tensor, Tensor, Tensor)");
  m.def("ghost_batch_norm_backward(Tensor grad_output, Tensor input, "
        "Tensor? weight, Tensor save_mean, Tensor save_invstd, "
        "bool batch_stats, int chunk, bool[3] output_mask) "
        "-> (Tensor, Tensor, Tensor)");
}

COMPOSER_LIBRARY_IMPL_BACKENDS(m) {
  m.impl("ghost_batch_norm", OutputOf<impl::ghostBatchNormForward>::call);
  m.impl("_ghost_batch_norm_forward", impl::ghostBatchNormForward);
  m.impl("ghost_batch_norm_backward", impl::ghostBatchNormBackward);
}

TORCH_LIBRARY_IMPL(composer, Autograd, m) {
  m.impl(
      "ghost_batch_norm",
      AutogradKernel<GhostBatchNormFunction, decltype(ghostBatchNorm)>::call);
}
