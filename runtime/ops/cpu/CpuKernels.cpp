//===- CpuKernels.cpp - the CPU primitives of one instruction set ---------===//
//
// This instruction set's CpuKernels object, and the helpers the per-op files
// share.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

namespace composer::ops::COMPOSER_CPU_ISA {

Layout layoutOf(const at::Tensor &x) {
  TORCH_CHECK(x.dim() == 4,
              "composer ops: expected a 4-D (N, C, H, W) tensor, got ", x.dim(),
              "-D");
  if (x.is_contiguous())
    return Layout::NCHW;
  TORCH_CHECK(x.is_contiguous(at::MemoryFormat::ChannelsLast),
              "composer ops: expected a tensor contiguous in NCHW or "
              "channels_last");
  return Layout::NHWC;
}

void checkSameLayout(const at::Tensor &x, const at::Tensor &y, Layout layout) {
  TORCH_CHECK(x.sizes() == y.sizes(), "composer ops: size mismatch ", x.sizes(),
              " vs ", y.sizes());
  // A tensor with C == 1 or H * W == 1 is contiguous in both formats.
  TORCH_CHECK(y.is_contiguous(layout == Layout::NHWC
                                  ? at::MemoryFormat::ChannelsLast
                                  : at::MemoryFormat::Contiguous),
              "composer ops: activations of one call must share a memory "
              "format");
}

at::Tensor empty4d(at::IntArrayRef sizes, const at::TensorOptions &options,
                   Layout layout) {
  return at::empty(sizes,
                   options.memory_format(layout == Layout::NHWC
                                             ? at::MemoryFormat::ChannelsLast
                                             : at::MemoryFormat::Contiguous));
}

int64_t grainFor(int64_t workPerItem) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE /
                                  std::max<int64_t>(1, workPerItem));
}

Shape shapeOf(const at::Tensor &x) {
  return {layoutOf(x), x.size(0), x.size(1), x.size(2) * x.size(3)};
}

namespace {

/// Calls f(T{}, U{}) for input dtype T and output dtype U, where U is T or
/// (for reduced-precision T) float: the cast-aware forms.
template <typename F>
void dispatchInOut(at::ScalarType in, at::ScalarType out, F &&f) {
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, in, "composer_ops", [&] {
        if (out == in) {
          f(scalar_t(), scalar_t());
        } else {
          TORCH_CHECK(out == at::kFloat &&
                          (in == at::kBFloat16 || in == at::kHalf),
                      "composer ops: unsupported dtype pair ", in, " -> ", out);
          f(scalar_t(), float());
        }
      });
}

/// Calls fn(offset, k*C + c) for every element, k = n / group.
template <typename Fn>
void mapChannels(Layout layout, int64_t n, int64_t c, int64_t hw, int64_t group,
                 Fn fn) {
  if (layout == Layout::NCHW) {
    at::parallel_for(0, n * c, grainFor(hw), [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        int64_t kc = (plane / c / group) * c + plane % c;
        int64_t base = plane * hw;
#pragma omp simd
        for (int64_t i = 0; i < hw; ++i)
          fn(base + i, kc);
      }
    });
    return;
  }
  at::parallel_for(0, n * hw, grainFor(c), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t k = p / hw / group;
      int64_t base = p * c;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j)
        fn(base + j, k * c + j);
    }
  });
}

} // namespace

at::Tensor channelAffine(const at::Tensor &p, const at::Tensor &q,
                         const at::Tensor &a, const at::Tensor &b,
                         const at::Tensor &shift, int64_t group,
                         at::ScalarType dtype) {
  Shape s = shapeOf(p);
  at::Tensor out = empty4d(p.sizes(), p.options().dtype(dtype), s.layout);
  dispatchInOut(p.scalar_type(), dtype, [&](auto in, auto outTag) {
    using T = decltype(in);
    using U = decltype(outTag);
    using Acc = acc_t<T>;
    at::Tensor ac = coefficients<Acc>(a);
    const Acc *pa = ac.data_ptr<Acc>();
    const T *x = p.data_ptr<T>();
    U *dst = out.data_ptr<U>();
    auto map = [&](auto fn) {
      mapChannels(s.layout, s.n, s.c, s.hw, group, fn);
    };
    if (!q.defined() && !shift.defined()) {
      map([=](int64_t i, int64_t kc) { dst[i] = U(pa[kc] * Acc(x[i])); });
      return;
    }
    at::Tensor cc = coefficients<Acc>(shift);
    const Acc *pc = cc.data_ptr<Acc>();
    if (!q.defined()) {
      map([=](int64_t i, int64_t kc) {
        dst[i] = U(pa[kc] * Acc(x[i]) + pc[kc]);
      });
      return;
    }
    at::Tensor bc = coefficients<Acc>(b);
    const Acc *pb = bc.data_ptr<Acc>();
    const T *y = q.data_ptr<T>();
    map([=](int64_t i, int64_t kc) {
      dst[i] = U(pa[kc] * Acc(x[i]) + pb[kc] * Acc(y[i]) + pc[kc]);
    });
  });
  return out;
}

const DeviceKernels &kernels() {
  static const CpuKernels instance{};
  return instance;
}

} // namespace composer::ops::COMPOSER_CPU_ISA
