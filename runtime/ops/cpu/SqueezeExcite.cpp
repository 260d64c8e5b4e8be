//===- SqueezeExcite.cpp - squeeze-excite's primitives, on CPU ------------===//
//
// The per-(sample, channel) mean and dot product over H x W, and the
// per-channel scale (and shift) that applies the gate.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

namespace composer::ops::COMPOSER_CPU_ISA {

at::Tensor CpuKernels::channelMean(const at::Tensor &input) const {
  Shape s = shapeOf(input);
  at::Tensor out;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, input.scalar_type(), "composer_channel_mean",
      [&] {
        using Acc = acc_t<scalar_t>;
        const scalar_t *x = input.data_ptr<scalar_t>();
        out = reduceChannels<Acc, 1>(s.layout, s.n, s.c, s.hw, 1,
                                     [x](int64_t i, int64_t) {
                                       return std::array<Acc, 1>{Acc(x[i])};
                                     })[0];
        out.div_(double(s.hw));
      });
  return out;
}

at::Tensor CpuKernels::channelDot(const at::Tensor &dy,
                                  const at::Tensor &x) const {
  Shape s = shapeOf(x);
  checkSameLayout(x, dy, s.layout);
  TORCH_CHECK(dy.scalar_type() == x.scalar_type(),
              "composer ops: channelDot dtypes differ");
  at::Tensor out;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, x.scalar_type(), "composer_channel_dot", [&] {
        using Acc = acc_t<scalar_t>;
        const scalar_t *a = dy.data_ptr<scalar_t>(),
                       *b = x.data_ptr<scalar_t>();
        out = reduceChannels<Acc, 1>(
            s.layout, s.n, s.c, s.hw, 1, [a, b](int64_t i, int64_t) {
              return std::array<Acc, 1>{Acc(a[i]) * Acc(b[i])};
            })[0];
      });
  return out;
}

at::Tensor CpuKernels::scaleChannels(const at::Tensor &x,
                                     const at::Tensor &scale,
                                     const at::Tensor &shift,
                                     at::ScalarType dtype) const {
  return channelAffine(x, at::Tensor(), scale, at::Tensor(), shift, 1, dtype);
}

} // namespace composer::ops::COMPOSER_CPU_ISA
