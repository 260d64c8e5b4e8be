//===- CpuKernels.h - what the CPU primitives share -------------*- C++ -*-===//
//
// The CPU side of Kernels.h: class CpuKernels, its overrides defined in one
// file per op (Blur.cpp, GhostBatchNorm.cpp, SqueezeExcite.cpp). Each is
// compiled once per instruction set: COMPOSER_CPU_ISA names the namespace
// and the build adds that set's flags; CpuDispatch.cpp picks the best one
// the processor has. Everything here lives in that namespace, so none of
// these functions compiled for AVX2 can stand in for the baseline's at link
// time. The loops are written for the auto-vectorizer: the innermost loop
// runs along contiguous memory (W for NCHW, C for channels_last), with
// per-channel coefficients hoisted out of it, and accumulates in float
// (double for double).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_CPU_CPUKERNELS_H
#define COMPOSER_RUNTIME_OPS_CPU_CPUKERNELS_H

#include "../Kernels.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <tuple>

#ifndef COMPOSER_CPU_ISA
#error "compiled once per instruction set: define COMPOSER_CPU_ISA"
#endif

namespace composer::ops::COMPOSER_CPU_ISA {

template <typename T> struct AccType { using type = float; };
template <> struct AccType<double> { using type = double; };
template <typename T> using acc_t = typename AccType<T>::type;

/// Where C sits in memory; every activation of one call shares it.
enum class Layout { NCHW, NHWC };

Layout layoutOf(const at::Tensor &x);
/// Checks that y has x's sizes and `layout`.
void checkSameLayout(const at::Tensor &x, const at::Tensor &y, Layout layout);
at::Tensor empty4d(at::IntArrayRef sizes, const at::TensorOptions &options,
                   Layout layout);
/// at::parallel_for's grain for items of `workPerItem` elementary steps.
int64_t grainFor(int64_t workPerItem);

struct Shape {
  Layout layout;
  int64_t n, c, hw;
};

Shape shapeOf(const at::Tensor &x);

/// Per-channel coefficients as contiguous accumulation-type values.
template <typename Acc> at::Tensor coefficients(const at::Tensor &t) {
  return t.to(c10::CppTypeToScalarType<Acc>::value).contiguous();
}

//===----------------------------------------------------------------------===//
// Per-channel reductions and maps, over groups of samples (for
// GhostBatchNorm.cpp and SqueezeExcite.cpp)
//===----------------------------------------------------------------------===//

/// Sums of `Outputs` terms for each (group k, channel c): out[o][k*C + c] =
/// sum over the samples n of group k (n / group == k) and over H, W of
/// term(offset, k*C + c)[o], offset indexing the activations, in one pass.
/// Each sample's share is summed in Acc (vectorized), and the shares in
/// double, so long reductions keep their precision.
template <typename Acc, int Outputs, typename Term>
std::array<at::Tensor, Outputs> reduceChannels(Layout layout, int64_t n,
                                               int64_t c, int64_t hw,
                                               int64_t group, Term term) {
  using Sample = std::array<Acc, Outputs>;
  int64_t groups = (n + group - 1) / group;
  std::array<at::Tensor, Outputs> out;
  std::array<Acc *, Outputs> o;
  for (int i = 0; i < Outputs; ++i) {
    out[i] = at::empty({groups, c},
                       at::TensorOptions(c10::CppTypeToScalarType<Acc>::value));
    o[i] = out[i].template data_ptr<Acc>();
  }
  if (layout == Layout::NCHW) {
    at::parallel_for(
        0, groups * c, grainFor(group * hw), [&](int64_t b, int64_t e) {
          for (int64_t kc = b; kc < e; ++kc) {
            int64_t k = kc / c, ch = kc % c;
            double total[Outputs] = {};
            for (int64_t s = k * group; s < std::min(n, (k + 1) * group); ++s) {
              int64_t base = (s * c + ch) * hw;
              if constexpr (Outputs == 1) {
                Acc s0 = 0;
#pragma omp simd reduction(+ : s0)
                for (int64_t i = 0; i < hw; ++i)
                  s0 += term(base + i, kc)[0];
                total[0] += s0;
              } else {
                Acc s0 = 0, s1 = 0;
#pragma omp simd reduction(+ : s0, s1)
                for (int64_t i = 0; i < hw; ++i) {
                  Sample v = term(base + i, kc);
                  s0 += v[0];
                  s1 += v[1];
                }
                total[0] += s0;
                total[1] += s1;
              }
            }
            for (int i = 0; i < Outputs; ++i)
              o[i][kc] = Acc(total[i]);
          }
        });
    return out;
  }
  constexpr int64_t block = 64;
  int64_t blocks = (c + block - 1) / block;
  at::parallel_for(
      0, groups * blocks, grainFor(group * hw * block),
      [&](int64_t b, int64_t e) {
        Acc acc[Outputs][block];
        double total[Outputs][block];
        for (int64_t task = b; task < e; ++task) {
          int64_t k = task / blocks, c0 = (task % blocks) * block;
          int64_t width = std::min(block, c - c0);
          std::fill(&total[0][0], &total[0][0] + Outputs * block, 0.0);
          for (int64_t s = k * group; s < std::min(n, (k + 1) * group); ++s) {
            std::fill(&acc[0][0], &acc[0][0] + Outputs * block, Acc(0));
            for (int64_t p = 0; p < hw; ++p) {
              int64_t base = (s * hw + p) * c + c0;
              for (int64_t j = 0; j < width; ++j) {
                Sample v = term(base + j, k * c + c0 + j);
                for (int i = 0; i < Outputs; ++i)
                  acc[i][j] += v[i];
              }
            }
            for (int i = 0; i < Outputs; ++i)
              for (int64_t j = 0; j < width; ++j)
                total[i][j] += acc[i][j];
          }
          for (int i = 0; i < Outputs; ++i)
            for (int64_t j = 0; j < width; ++j)
              o[i][k * c + c0 + j] = Acc(total[i][j]);
        }
      });
  return out;
}

/// out = a[k,c] * p (+ b[k,c] * q) (+ shift[k,c]) in `dtype`, k = n / group:
/// the per-channel affine maps (a, b, shift are (K, C), q and b given
/// together). p and q share a dtype; `dtype` is theirs or, for reduced
/// precision, float.
at::Tensor channelAffine(const at::Tensor &p, const at::Tensor &q,
                         const at::Tensor &a, const at::Tensor &b,
                         const at::Tensor &shift, int64_t group,
                         at::ScalarType dtype);

/// This instruction set's primitives (Kernels.h), each override defined in
/// its op's file.
class CpuKernels final : public DeviceKernels {
public:
  // Blur.cpp
  at::Tensor blur(const at::Tensor &input, const at::Tensor &filter,
                  BlurGeometry g) const override;
  at::Tensor blurBackward(const at::Tensor &gradOutput,
                          const at::Tensor &filter, int64_t h, int64_t w,
                          BlurGeometry g) const override;
  at::Tensor maxBlur(const at::Tensor &input, const at::Tensor &filter,
                     MaxPoolGeometry pool, BlurGeometry g) const override;
  at::Tensor maxBlurBackward(const at::Tensor &gradOutput,
                             const at::Tensor &input, const at::Tensor &filter,
                             MaxPoolGeometry pool,
                             BlurGeometry g) const override;

  // SqueezeExcite.cpp
  at::Tensor channelMean(const at::Tensor &input) const override;
  at::Tensor channelDot(const at::Tensor &dy,
                        const at::Tensor &x) const override;
  at::Tensor scaleChannels(const at::Tensor &x, const at::Tensor &scale,
                           const at::Tensor &shift,
                           at::ScalarType dtype) const override;

  // GhostBatchNorm.cpp
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

/// This instruction set's CpuKernels (CpuDispatch.cpp picks one).
const DeviceKernels &kernels();

} // namespace composer::ops::COMPOSER_CPU_ISA

#endif // COMPOSER_RUNTIME_OPS_CPU_CPUKERNELS_H
