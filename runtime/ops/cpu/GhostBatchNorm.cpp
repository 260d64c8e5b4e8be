//===- GhostBatchNorm.cpp - ghost batch norm's primitives, on CPU ---------===//
//
// Statistics per (chunk of samples, channel) and the per-chunk affine maps
// of the forward and backward passes.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

namespace composer::ops::COMPOSER_CPU_ISA {

std::tuple<at::Tensor, at::Tensor> CpuKernels::chunkStats(const at::Tensor &x,
                                                          int64_t chunk) const {
  Shape s = shapeOf(x);
  at::Tensor mean, var;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, x.scalar_type(), "composer_chunk_stats", [&] {
        using Acc = acc_t<scalar_t>;
        const scalar_t *src = x.data_ptr<scalar_t>();
        // One pass over d = x - shift, the shift being one value of the
        // (chunk, channel): inside the data's range, E[d^2] - E[d]^2 loses
        // little to cancellation even when the mean is far from zero.
        at::Tensor shifts = x.slice(0, 0, s.n, chunk)
                                .select(3, 0)
                                .select(2, 0)
                                .to(c10::CppTypeToScalarType<Acc>::value)
                                .contiguous();
        const Acc *shift = shifts.data_ptr<Acc>();
        auto [sum, sumSq] =
            reduceChannels<Acc, 2>(s.layout, s.n, s.c, s.hw, chunk,
                                   [src, shift](int64_t i, int64_t kc) {
                                     Acc d = Acc(src[i]) - shift[kc];
                                     return std::array<Acc, 2>{d, d * d};
                                   });
        at::Tensor counts = chunkCounts(s.n, chunk, s.hw, sum.options());
        at::Tensor shifted = sum.div_(counts);
        var = (sumSq.div_(counts) - shifted * shifted).clamp_min_(0);
        mean = shifted.add_(shifts);
      });
  return {mean, var};
}

std::tuple<at::Tensor, at::Tensor>
CpuKernels::chunkGradStats(const at::Tensor &dy, const at::Tensor &x,
                           const at::Tensor &mean, int64_t chunk) const {
  Shape s = shapeOf(x);
  checkSameLayout(x, dy, s.layout);
  TORCH_CHECK(dy.scalar_type() == x.scalar_type(),
              "composer ops: chunkGradStats dtypes differ");
  at::Tensor sumDy, sumDyXmu;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, x.scalar_type(), "composer_chunk_grad_stats",
      [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor m = coefficients<Acc>(mean);
        const Acc *mu = m.data_ptr<Acc>();
        const scalar_t *g = dy.data_ptr<scalar_t>(),
                       *v = x.data_ptr<scalar_t>();
        auto sums = reduceChannels<Acc, 2>(
            s.layout, s.n, s.c, s.hw, chunk, [g, v, mu](int64_t i, int64_t kc) {
              Acc d = Acc(g[i]);
              return std::array<Acc, 2>{d, d * (Acc(v[i]) - mu[kc])};
            });
        sumDy = sums[0];
        sumDyXmu = sums[1];
      });
  return {sumDy, sumDyXmu};
}

at::Tensor CpuKernels::chunkAffine(const at::Tensor &x, const at::Tensor &a,
                                   const at::Tensor &b, int64_t chunk,
                                   at::ScalarType dtype) const {
  return channelAffine(x, at::Tensor(), a, at::Tensor(), b, chunk, dtype);
}

at::Tensor CpuKernels::chunkAffine2(const at::Tensor &dy, const at::Tensor &x,
                                    const at::Tensor &a, const at::Tensor &b,
                                    const at::Tensor &c, int64_t chunk,
                                    at::ScalarType dtype) const {
  checkSameLayout(x, dy, layoutOf(x));
  TORCH_CHECK(dy.scalar_type() == x.scalar_type(),
              "composer ops: chunkAffine2 dtypes differ");
  return channelAffine(dy, x, a, b, c, chunk, dtype);
}

} // namespace composer::ops::COMPOSER_CPU_ISA
