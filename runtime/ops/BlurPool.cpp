//===- BlurPool.cpp - composer::blur_pool2d and blur_max_pool2d -----------===//
//
// BlurPool's ops: the blur (depthwise 3x3 filter, padding 1, at a stride)
// and the max pool at stride 1 fused in front of it, each with its backward
// op. Backend kernels on the device's blur primitives (Kernels.h), autograd,
// schemas and the C++ entry points.
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

/// The filter per channel of `x`, in `x`'s dtype (the fp32 buffer meets a
/// bf16 input after mixed precision): a 1 x 1 x 3 x 3 filter (BlurPool's when
/// the channel count was unknown at compile time) is shared by all channels.
at::Tensor perChannelFilter(const at::Tensor &filter, const at::Tensor &x) {
  at::Tensor typed = filter.to(x.scalar_type());
  if (typed.dim() == 4 && typed.size(0) == 1 && x.dim() == 4 && x.size(1) != 1)
    return typed.expand({x.size(1), 1, 3, 3});
  return typed;
}

/// True when blur_pool2d is the identity subsampling for this input (H or W
/// smaller than the filter).
bool blurIsSubsampling(const at::Tensor &input) {
  return input.dim() == 4 && std::min(input.size(2), input.size(3)) < 3;
}

/// input[:, :, ::sh, ::sw], BlurPool's blur on inputs smaller than its filter.
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
  return kernelsFor(x).blur(x, perChannelFilter(filter, x),
                            blurGeometry(stride, op));
}

at::Tensor blurPool2dBackward(const at::Tensor &gradOutput,
                              const at::Tensor &filter,
                              at::IntArrayRef inputSize,
                              at::IntArrayRef stride) {
  const char *op = "composer::blur_pool2d_backward";
  at::Tensor dy = activation(gradOutput, op);
  TORCH_CHECK(inputSize.size() == 2, op, ": input_size must be (H, W)");
  return kernelsFor(dy).blurBackward(dy, perChannelFilter(filter, dy),
                                     inputSize[0], inputSize[1],
                                     blurGeometry(stride, op));
}

at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride) {
  const char *op = "composer::blur_max_pool2d";
  at::Tensor x = activation(input, op);
  return kernelsFor(x).maxBlur(x, perChannelFilter(filter, x),
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
      dy, x, perChannelFilter(filter, x),
      poolGeometry(kernelSize, padding, dilation, op),
      blurGeometry(stride, op));
}

} // namespace
} // namespace impl

//===----------------------------------------------------------------------===//
// Autograd
//===----------------------------------------------------------------------===//

namespace {

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
        composerOp<decltype(impl::blurPool2d)>("composer::blur_pool2d");
    return op.call(input, filter, stride);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<decltype(impl::blurPool2dBackward)>(
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
    static auto op =
        composerOp<decltype(impl::blurMaxPool2d)>("composer::blur_max_pool2d");
    return op.call(input, filter, kernelSize, padding, dilation, stride);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<decltype(impl::blurMaxPool2dBackward)>(
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
  // A pooled map smaller than the filter is only subsampled, as by
  // blur_pool2d (and differentiates as the pool and slicing).
  if (input.dim() == 4 && kernelSize.size() == 2 && padding.size() == 2 &&
      dilation.size() == 2) {
    int64_t pooledH =
        input.size(2) + 2 * padding[0] - dilation[0] * (kernelSize[0] - 1);
    int64_t pooledW =
        input.size(3) + 2 * padding[1] - dilation[1] * (kernelSize[1] - 1);
    if (std::min(pooledH, pooledW) < 3)
      return impl::subsample(
          at::max_pool2d(input, kernelSize, {1, 1}, padding, dilation), stride);
  }
  return BlurMaxPoolFunction::apply(input, filter, kernelSize, padding,
                                    dilation, stride);
}

} // namespace

//===----------------------------------------------------------------------===//
// C++ entry points
//===----------------------------------------------------------------------===//

at::Tensor blurPool2d(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef stride) {
  static auto op = composerOp<decltype(blurPool2d)>("composer::blur_pool2d");
  return op.call(input, filter, stride);
}

at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride) {
  static auto op =
      composerOp<decltype(blurMaxPool2d)>("composer::blur_max_pool2d");
  return op.call(input, filter, kernelSize, padding, dilation, stride);
}

} // namespace composer::ops

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

using namespace composer::ops;

TORCH_LIBRARY_FRAGMENT(composer, m) {
  m.def("blur_pool2d(Tensor input, Tensor filter, int[2] stride) -> Tensor");
  m.def("blur_pool2d_backward(Tensor grad_output, Tensor filter, "
        "int[2] input_size, int[2] stride) -> Tensor");
  m.def("blur_max_pool2d(Tensor input, Tensor filter, int[2] kernel_size, "
        "int[2] padding, int[2] dilation, int[2] stride) -> Tensor");
  m.def("blur_max_pool2d_backward(Tensor grad_output, Tensor input, "
        "Tensor filter, int[2] kernel_size, int[2] padding, int[2] dilation, "
        "int[2] stride) -> Tensor");
}

COMPOSER_LIBRARY_IMPL_BACKENDS(m) {
  m.impl("blur_pool2d", impl::blurPool2d);
  m.impl("blur_pool2d_backward", impl::blurPool2dBackward);
  m.impl("blur_max_pool2d", impl::blurMaxPool2d);
  m.impl("blur_max_pool2d_backward", impl::blurMaxPool2dBackward);
}

TORCH_LIBRARY_IMPL(composer, Autograd, m) {
  m.impl("blur_pool2d", blurPool2dAutograd);
  m.impl("blur_max_pool2d", blurMaxPool2dAutograd);
}
