//===- Registration.cpp - composer:: ops in LibTorch's registry -----------===//
//
// Schemas, backend kernels (CPU, and CUDA in CUDA builds) and autograd: each
// public op's autograd kernel runs the backend forward below autograd and
// its own backward op, so gradients never come from a composition.
//
//===----------------------------------------------------------------------===//

#include "FusedOps.h"

#include <torch/autograd.h>
#include <torch/library.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace composer::ops {
namespace {

using OptionalTensor = c10::optional<at::Tensor>;

class BlurPoolFunction : public torch::autograd::Function<BlurPoolFunction> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
                            const at::Tensor &filter, at::IntArrayRef stride) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({filter});
    ctx->saved_data["size"] =
        std::vector<int64_t>{input.size(2), input.size(3)};
    ctx->saved_data["stride"] = stride.vec();
    static auto op =
        composerOp<at::Tensor(const at::Tensor &, const at::Tensor &,
                              at::IntArrayRef)>("composer::blur_pool2d");
    return op.call(input, filter, stride);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op =
        composerOp<at::Tensor(const at::Tensor &, const at::Tensor &,
                              at::IntArrayRef, at::IntArrayRef)>(
            "composer::blur_pool2d_backward");
    at::Tensor filter = ctx->get_saved_variables()[0];
    at::Tensor dx =
        op.call(grads[0], filter, ctx->saved_data["size"].toIntVector(),
                ctx->saved_data["stride"].toIntVector());
    return {dx, at::Tensor(), at::Tensor()};
  }
};

void checkFixedFilter(const at::Tensor &filter, const char *op) {
  TORCH_CHECK(!filter.requires_grad(), op,
              ": the filter is a fixed buffer; it cannot require a gradient");
}

at::Tensor blurPool2dAutograd(const at::Tensor &input, const at::Tensor &filter,
                              at::IntArrayRef stride) {
  checkFixedFilter(filter, "composer::blur_pool2d");
  // Subsampling (inputs smaller than the filter) differentiates as slicing.
  if (impl::blurIsSubsampling(input))
    return impl::subsample(input, stride);
  return BlurPoolFunction::apply(input, filter, stride);
}

class BlurMaxPoolFunction
    : public torch::autograd::Function<BlurMaxPoolFunction> {
public:
  using Signature = at::Tensor(const at::Tensor &, const at::Tensor &,
                               at::IntArrayRef, at::IntArrayRef,
                               at::IntArrayRef, at::IntArrayRef);

  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
                            const at::Tensor &filter,
                            at::IntArrayRef kernelSize, at::IntArrayRef padding,
                            at::IntArrayRef dilation, at::IntArrayRef stride) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({input, filter});
    ctx->saved_data["kernel_size"] = kernelSize.vec();
    ctx->saved_data["padding"] = padding.vec();
    ctx->saved_data["dilation"] = dilation.vec();
    ctx->saved_data["stride"] = stride.vec();
    static auto op = composerOp<Signature>("composer::blur_max_pool2d");
    return op.call(input, filter, kernelSize, padding, dilation, stride);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<at::Tensor(
        const at::Tensor &, const at::Tensor &, const at::Tensor &,
        at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef)>(
        "composer::blur_max_pool2d_backward");
    variable_list saved = ctx->get_saved_variables();
    at::Tensor dx = op.call(grads[0], saved[0], saved[1],
                            ctx->saved_data["kernel_size"].toIntVector(),
                            ctx->saved_data["padding"].toIntVector(),
                            ctx->saved_data["dilation"].toIntVector(),
                            ctx->saved_data["stride"].toIntVector());
    return {dx,           at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor
blurMaxPool2dAutograd(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef kernelSize, at::IntArrayRef padding,
                      at::IntArrayRef dilation, at::IntArrayRef stride) {
  checkFixedFilter(filter, "composer::blur_max_pool2d");
  return BlurMaxPoolFunction::apply(input, filter, kernelSize, padding,
                                    dilation, stride);
}

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
    static auto op = composerOp<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
        const at::Tensor &, const OptionalTensor &, const OptionalTensor &,
        const OptionalTensor &, const OptionalTensor &, bool, double, double,
        int64_t, c10::optional<at::ScalarType>)>(
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
        mean.size(0) == 1 ? input.size(0) : ghostBatchSize;
    ctx->saved_data["has_bias"] = bias && bias->defined();
    if (bias && bias->defined())
      ctx->saved_data["bias_dtype"] = bias->scalar_type();
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
        const at::Tensor &, const at::Tensor &, const OptionalTensor &,
        const at::Tensor &, const at::Tensor &, bool, int64_t,
        std::array<bool, 3>)>("composer::ghost_batch_norm_backward");
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

at::Tensor ghostBatchNormAutograd(
    const at::Tensor &input, const OptionalTensor &weight,
    const OptionalTensor &bias, const OptionalTensor &runningMean,
    const OptionalTensor &runningVar, bool training, double momentum,
    double eps, int64_t ghostBatchSize, c10::optional<at::ScalarType> dtype) {
  return GhostBatchNormFunction::apply(input, weight, bias, runningMean,
                                       runningVar, training, momentum, eps,
                                       ghostBatchSize, dtype);
}

class SqueezeExciteFunction
    : public torch::autograd::Function<SqueezeExciteFunction> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
                            const at::Tensor &fc1, const at::Tensor &fc2) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op =
        composerOp<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
            const at::Tensor &, const at::Tensor &, const at::Tensor &)>(
            "composer::_squeeze_excite_forward");
    auto [out, pooled, hidden, gate] = op.call(input, fc1, fc2);
    ctx->save_for_backward({input, fc1, fc2, pooled, hidden, gate});
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
        const at::Tensor &, const at::Tensor &, const at::Tensor &,
        const at::Tensor &, const at::Tensor &, const at::Tensor &,
        const at::Tensor &)>("composer::squeeze_excite_backward");
    variable_list s = ctx->get_saved_variables();
    auto [dx, dFc1, dFc2] =
        op.call(grads[0], s[0], s[1], s[2], s[3], s[4], s[5]);
    return {dx, dFc1, dFc2};
  }
};

at::Tensor squeezeExciteAutograd(const at::Tensor &input, const at::Tensor &fc1,
                                 const at::Tensor &fc2) {
  return SqueezeExciteFunction::apply(input, fc1, fc2);
}

} // namespace
} // namespace composer::ops

TORCH_LIBRARY(composer, m) {
  m.def("blur_pool2d(Tensor input, Tensor filter, int[2] stride) -> Tensor");
  m.def("blur_pool2d_backward(Tensor grad_output, Tensor filter, "
        "int[2] input_size, int[2] stride) -> Tensor");
  m.def("blur_max_pool2d(Tensor input, Tensor filter, int[2] kernel_size, "
        "int[2] padding, int[2] dilation, int[2] stride) -> Tensor");
  m.def("blur_max_pool2d_backward(Tensor grad_output, Tensor input, "
        "Tensor filter, int[2] kernel_size, int[2] padding, int[2] dilation, "
        "int[2] stride) -> Tensor");
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
  m.def("squeeze_excite(Tensor input, Tensor fc1, Tensor fc2) -> Tensor");
  m.def("_squeeze_excite_forward(Tensor input, Tensor fc1, Tensor fc2) "
        "-> (Tensor, Tensor, Tensor, Tensor)");
  m.def("squeeze_excite_backward(Tensor grad_output, Tensor input, "
        "Tensor fc1, Tensor fc2, Tensor pooled, Tensor hidden, Tensor gate) "
        "-> (Tensor, Tensor, Tensor)");
}

/// The backend kernels are device-generic (they pick the device's
/// primitives), so CPU and CUDA register the same functions.
#define COMPOSER_REGISTER_BACKEND(m)                                           \
  m.impl("blur_pool2d", composer::ops::impl::blurPool2d);                      \
  m.impl("blur_pool2d_backward", composer::ops::impl::blurPool2dBackward);     \
  m.impl("blur_max_pool2d", composer::ops::impl::blurMaxPool2d);               \
  m.impl("blur_max_pool2d_backward",                                           \
         composer::ops::impl::blurMaxPool2dBackward);                          \
  m.impl("ghost_batch_norm", composer::ops::impl::ghostBatchNorm);             \
  m.impl("_ghost_batch_norm_forward",                                          \
         composer::ops::impl::ghostBatchNormForward);                          \
  m.impl("ghost_batch_norm_backward",                                          \
         composer::ops::impl::ghostBatchNormBackward);                         \
  m.impl("squeeze_excite", composer::ops::impl::squeezeExcite);                \
  m.impl("_squeeze_excite_forward",                                            \
         composer::ops::impl::squeezeExciteForward);                           \
  m.impl("squeeze_excite_backward", composer::ops::impl::squeezeExciteBackward)

TORCH_LIBRARY_IMPL(composer, CPU, m) { COMPOSER_REGISTER_BACKEND(m); }

#ifdef COMPOSER_WITH_CUDA
TORCH_LIBRARY_IMPL(composer, CUDA, m) { COMPOSER_REGISTER_BACKEND(m); }
#endif

TORCH_LIBRARY_IMPL(composer, Autograd, m) {
  m.impl("blur_pool2d", composer::ops::blurPool2dAutograd);
  m.impl("blur_max_pool2d", composer::ops::blurMaxPool2dAutograd);
  m.impl("ghost_batch_norm", composer::ops::ghostBatchNormAutograd);
  m.impl("squeeze_excite", composer::ops::squeezeExciteAutograd);
}
