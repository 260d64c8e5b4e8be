//===- CpuKernels.cpp - the fused ops' passes over activations, on CPU ----===//
//
// Compiled once per instruction set: COMPOSER_CPU_ISA names the namespace and
// the build adds that set's flags; CpuDispatch.cpp picks the best one the
// processor has. The loops are written for the auto-vectorizer: the innermost
// loop runs along contiguous memory (W for NCHW, C for channels_last), with
// per-channel coefficients hoisted out of it, and accumulates in float
// (double for double).
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace composer::ops::COMPOSER_CPU_ISA {
namespace {

template <typename T> struct AccType { using type = float; };
template <> struct AccType<double> { using type = double; };
template <typename T> using acc_t = typename AccType<T>::type;

/// Where C sits in memory; every activation of one call shares it.
enum class Layout { NCHW, NHWC };

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

/// Per-channel coefficients as contiguous accumulation-type values.
template <typename Acc> at::Tensor coefficients(const at::Tensor &t) {
  return t.to(c10::CppTypeToScalarType<Acc>::value).contiguous();
}

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

int64_t grainFor(int64_t workPerItem) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE /
                                  std::max<int64_t>(1, workPerItem));
}

//===----------------------------------------------------------------------===//
// Blur
//===----------------------------------------------------------------------===//

/// row[j] += k0 r[j*s-1] + k1 r[j*s] + k2 r[j*s+1] for j < outW, taps
/// outside [0, width) being zero.
template <typename In, typename Acc>
void blurRowAccumulate(const In *r, int64_t width, int64_t outW, int64_t s,
                       Acc k0, Acc k1, Acc k2, Acc *row) {
  auto tap = [&](int64_t w) -> Acc {
    return w >= 0 && w < width ? Acc(r[w]) : Acc(0);
  };
  // Interior: every tap in range (j >= 1 and j*s + 1 <= width - 1).
  int64_t interiorEnd =
      width >= 2 ? std::min<int64_t>(outW, (width - 2) / s + 1) : 1;
  interiorEnd = std::max<int64_t>(interiorEnd, 1);
  row[0] += k1 * tap(0) + k2 * tap(1);
  if (s == 1) {
    for (int64_t j = 1; j < interiorEnd; ++j)
      row[j] += k0 * Acc(r[j - 1]) + k1 * Acc(r[j]) + k2 * Acc(r[j + 1]);
  } else {
    for (int64_t j = 1; j < interiorEnd; ++j) {
      const In *p = r + j * s - 1;
      row[j] += k0 * Acc(p[0]) + k1 * Acc(p[1]) + k2 * Acc(p[2]);
    }
  }
  for (int64_t j = interiorEnd; j < outW; ++j)
    row[j] += k0 * tap(j * s - 1) + k1 * tap(j * s) + k2 * tap(j * s + 1);
}

/// The filter as (C, 9) and transposed (9, C) accumulation-type arrays.
template <typename Acc>
at::Tensor filterTaps(const at::Tensor &filter, int64_t channels) {
  TORCH_CHECK(filter.dim() == 4 && filter.size(0) == channels &&
                  filter.size(1) == 1 && filter.size(2) == 3 &&
                  filter.size(3) == 3,
              "composer blur: expected a (", channels,
              ", 1, 3, 3) filter, got ", filter.sizes());
  return coefficients<Acc>(filter.reshape({channels, 9}));
}

//===----------------------------------------------------------------------===//
// Blur fast path: fp32 at stride 1 (BlurPool's blur-first form, and every
// stride-1 backward), written with AVX2 intrinsics; other builds and cases
// take the generic loops.
//===----------------------------------------------------------------------===//

#ifdef __AVX2__
/// Eight floats, or the first `count` of them.
struct Vec {
  static constexpr int64_t size() { return 8; }
  static __m256i mask(int64_t count) {
    static const int32_t lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                      0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i *>(lanes + 8 - count));
  }
  static __m256 load(const float *p, int64_t count) {
    return count == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask(count));
  }
  static void store(float *p, __m256 v, int64_t count) {
    if (count == 8)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, mask(count), v);
  }
};

/// One output row (NCHW) from up to three input rows (null: padding).
void blurRowStride1(const float *const rows[3], int64_t w, const float *k,
                    float *out) {
  auto edge = [&](int64_t j) {
    float sum = 0;
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b) {
        int64_t x = j + b - 1;
        if (rows[a] && x >= 0 && x < w)
          sum += k[a * 3 + b] * rows[a][x];
      }
    return sum;
  };
  out[0] = edge(0);
  if (w == 1)
    return;
  out[w - 1] = edge(w - 1);
  __m256 taps[9];
  for (int64_t t = 0; t < 9; ++t)
    taps[t] = _mm256_set1_ps(k[t]);
  // Interior columns [1, w - 1): every tap inside the row.
  auto interior = [&](int64_t j, int64_t count) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t a = 0; a < 3; ++a) {
      if (!rows[a])
        continue;
      const float *r = rows[a] + j - 1;
      acc = _mm256_fmadd_ps(Vec::load(r, count), taps[a * 3], acc);
      acc = _mm256_fmadd_ps(Vec::load(r + 1, count), taps[a * 3 + 1], acc);
      acc = _mm256_fmadd_ps(Vec::load(r + 2, count), taps[a * 3 + 2], acc);
    }
    Vec::store(out + j, acc, count);
  };
  int64_t j = 1;
  for (; j + Vec::size() <= w - 1; j += Vec::size())
    interior(j, Vec::size());
  if (j < w - 1)
    interior(j, w - 1 - j);
}

at::Tensor blurStride1Float(const at::Tensor &input, const at::Tensor &filter,
                            Layout layout) {
  int64_t n = input.size(0), c = input.size(1), h = input.size(2),
          w = input.size(3);
  at::Tensor out = empty4d(input.sizes(), input.options(), layout);
  at::Tensor taps = filterTaps<float>(filter, c);
  const float *in = input.data_ptr<float>();
  float *o = out.data_ptr<float>();
  if (layout == Layout::NCHW) {
    const float *k = taps.data_ptr<float>();
    at::parallel_for(0, n * c * h, grainFor(w * 9), [&](int64_t b, int64_t e) {
      for (int64_t idx = b; idx < e; ++idx) {
        int64_t plane = idx / h, i = idx % h;
        const float *rows[3];
        for (int64_t a = 0; a < 3; ++a) {
          int64_t y = i + a - 1;
          rows[a] = y >= 0 && y < h ? in + (plane * h + y) * w : nullptr;
        }
        blurRowStride1(rows, w, k + (plane % c) * 9, o + idx * w);
      }
    });
    return out;
  }
  // channels_last: each output pixel sweeps the channels contiguously (the
  // filter's (9, C) taps stay in L1).
  at::Tensor transposed = taps.t().contiguous();
  const float *kt = transposed.data_ptr<float>();
  at::parallel_for(0, n * h, grainFor(w * c * 9), [&](int64_t b, int64_t e) {
    for (int64_t idx = b; idx < e; ++idx) {
      int64_t s = idx / h, i = idx % h;
      const float *rows[3];
      for (int64_t a = 0; a < 3; ++a) {
        int64_t y = i + a - 1;
        rows[a] = y >= 0 && y < h ? in + (s * h + y) * w * c : nullptr;
      }
      float *dst = o + idx * w * c;
      for (int64_t j = 0; j < w; ++j) {
        // The taps inside the image for this pixel.
        const float *src[9];
        const float *tap[9];
        int count = 0;
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t bb = 0; bb < 3; ++bb) {
            int64_t x = j + bb - 1;
            if (rows[a] && x >= 0 && x < w) {
              src[count] = rows[a] + x * c;
              tap[count++] = kt + (a * 3 + bb) * c;
            }
          }
        // Four channel vectors at a time: independent FMA chains.
        int64_t c0 = 0;
        for (; c0 + 4 * Vec::size() <= c; c0 += 4 * Vec::size()) {
          __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0,
                 acc3 = acc0;
          for (int t = 0; t < count; ++t) {
            const float *p = src[t] + c0, *k = tap[t] + c0;
            acc0 =
                _mm256_fmadd_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(k), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 8),
                                   _mm256_loadu_ps(k + 8), acc1);
            acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 16),
                                   _mm256_loadu_ps(k + 16), acc2);
            acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 24),
                                   _mm256_loadu_ps(k + 24), acc3);
          }
          float *d = dst + j * c + c0;
          _mm256_storeu_ps(d, acc0);
          _mm256_storeu_ps(d + 8, acc1);
          _mm256_storeu_ps(d + 16, acc2);
          _mm256_storeu_ps(d + 24, acc3);
        }
        for (; c0 < c; c0 += Vec::size()) {
          int64_t lanes = std::min<int64_t>(Vec::size(), c - c0);
          __m256 acc = _mm256_setzero_ps();
          for (int t = 0; t < count; ++t)
            acc = _mm256_fmadd_ps(Vec::load(src[t] + c0, lanes),
                                  Vec::load(tap[t] + c0, lanes), acc);
          Vec::store(dst + j * c + c0, acc, lanes);
        }
      }
    }
  });
  return out;
}
#endif // __AVX2__

at::Tensor blur(const at::Tensor &input, const at::Tensor &filter,
                BlurGeometry g) {
  Layout layout = layoutOf(input);
  int64_t n = input.size(0), c = input.size(1), h = input.size(2),
          w = input.size(3);
  int64_t sh = g.strideH, sw = g.strideW;
#ifdef __AVX2__
  if (sh == 1 && sw == 1 && input.scalar_type() == at::kFloat)
    return blurStride1Float(input, filter, layout);
#endif
  int64_t oh = (h - 1) / sh + 1, ow = (w - 1) / sw + 1;
  at::Tensor out = empty4d({n, c, oh, ow}, input.options(), layout);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, input.scalar_type(), "composer_blur", [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor taps = filterTaps<Acc>(filter, c);
        const scalar_t *in = input.data_ptr<scalar_t>();
        scalar_t *o = out.data_ptr<scalar_t>();
        if (layout == Layout::NCHW) {
          const Acc *k = taps.data_ptr<Acc>();
          at::parallel_for(
              0, n * c * oh, grainFor(ow * 9), [&](int64_t b, int64_t e) {
                std::vector<Acc> row(ow);
                for (int64_t idx = b; idx < e; ++idx) {
                  int64_t plane = idx / oh, i = idx % oh;
                  const Acc *kc = k + (plane % c) * 9;
                  std::fill(row.begin(), row.end(), Acc(0));
                  for (int64_t a = 0; a < 3; ++a) {
                    int64_t y = i * sh + a - 1;
                    if (y >= 0 && y < h)
                      blurRowAccumulate(in + (plane * h + y) * w, w, ow, sw,
                                        kc[a * 3], kc[a * 3 + 1], kc[a * 3 + 2],
                                        row.data());
                  }
                  scalar_t *dst = o + idx * ow;
                  for (int64_t j = 0; j < ow; ++j)
                    dst[j] = scalar_t(row[j]);
                }
              });
          return;
        }
        at::Tensor transposed = taps.t().contiguous();
        const Acc *kt = transposed.data_ptr<Acc>();
        at::parallel_for(
            0, n * oh, grainFor(ow * c * 9), [&](int64_t b, int64_t e) {
              std::vector<Acc> acc(c);
              for (int64_t idx = b; idx < e; ++idx) {
                int64_t s = idx / oh, i = idx % oh;
                for (int64_t j = 0; j < ow; ++j) {
                  std::fill(acc.begin(), acc.end(), Acc(0));
                  for (int64_t a = 0; a < 3; ++a) {
                    int64_t y = i * sh + a - 1;
                    if (y < 0 || y >= h)
                      continue;
                    for (int64_t bb = 0; bb < 3; ++bb) {
                      int64_t x = j * sw + bb - 1;
                      if (x < 0 || x >= w)
                        continue;
                      const scalar_t *p = in + ((s * h + y) * w + x) * c;
                      const Acc *kk = kt + (a * 3 + bb) * c;
                      Acc *accp = acc.data();
                      for (int64_t ch = 0; ch < c; ++ch)
                        accp[ch] += kk[ch] * Acc(p[ch]);
                    }
                  }
                  scalar_t *dst = o + ((s * oh + i) * ow + j) * c;
                  for (int64_t ch = 0; ch < c; ++ch)
                    dst[ch] = scalar_t(acc[ch]);
                }
              }
            });
      });
  return out;
}

/// dRow[j*s - 1 + b] += kb * g[j] for the output columns j whose tap b lands
/// inside [0, width).
template <typename In, typename Acc>
void blurRowScatter(const In *g, int64_t outW, int64_t width, int64_t s,
                    const Acc *k3, Acc *dRow) {
  for (int64_t b = 0; b < 3; ++b) {
    Acc kb = k3[b];
    int64_t first = b == 0 ? 1 : 0;
    int64_t last = std::min<int64_t>(outW - 1, (width - b) / s);
    Acc *d = dRow + b - 1;
    if (s == 1) {
      for (int64_t j = first; j <= last; ++j)
        d[j] += kb * Acc(g[j]);
    } else {
      for (int64_t j = first; j <= last; ++j)
        d[j * s] += kb * Acc(g[j]);
    }
  }
}

at::Tensor blurBackward(const at::Tensor &gradOutput, const at::Tensor &filter,
                        int64_t h, int64_t w, BlurGeometry g) {
  Layout layout = layoutOf(gradOutput);
  int64_t n = gradOutput.size(0), c = gradOutput.size(1),
          oh = gradOutput.size(2), ow = gradOutput.size(3);
  int64_t sh = g.strideH, sw = g.strideW;
  TORCH_CHECK(oh == (h - 1) / sh + 1 && ow == (w - 1) / sw + 1,
              "composer blur backward: gradient size ", gradOutput.sizes(),
              " does not match an input of ", h, "x", w);
  // At stride 1 the gradient is the blur of the gradient with the filter
  // turned by 180 degrees.
#ifdef __AVX2__
  if (sh == 1 && sw == 1 && gradOutput.scalar_type() == at::kFloat)
    return blurStride1Float(gradOutput, filter.flip({2, 3}), layout);
#endif
  at::Tensor dx = empty4d({n, c, h, w}, gradOutput.options(), layout);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, gradOutput.scalar_type(),
      "composer_blur_backward", [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor taps = filterTaps<Acc>(filter, c);
        const scalar_t *dy = gradOutput.data_ptr<scalar_t>();
        scalar_t *d = dx.data_ptr<scalar_t>();
        if (layout == Layout::NCHW) {
          const Acc *k = taps.data_ptr<Acc>();
          at::parallel_for(
              0, n * c * h, grainFor(w * 9), [&](int64_t b, int64_t e) {
                std::vector<Acc> row(w);
                for (int64_t idx = b; idx < e; ++idx) {
                  int64_t plane = idx / h, y = idx % h;
                  const Acc *kc = k + (plane % c) * 9;
                  std::fill(row.begin(), row.end(), Acc(0));
                  for (int64_t a = 0; a < 3; ++a) {
                    int64_t t = y + 1 - a;
                    if (t < 0 || t % sh != 0 || t / sh >= oh)
                      continue;
                    blurRowScatter(dy + (plane * oh + t / sh) * ow, ow, w, sw,
                                   kc + a * 3, row.data());
                  }
                  scalar_t *dst = d + idx * w;
                  for (int64_t x = 0; x < w; ++x)
                    dst[x] = scalar_t(row[x]);
                }
              });
          return;
        }
        at::Tensor transposed = taps.t().contiguous();
        const Acc *kt = transposed.data_ptr<Acc>();
        at::parallel_for(
            0, n * h, grainFor(w * c * 9), [&](int64_t b, int64_t e) {
              std::vector<Acc> acc(c);
              for (int64_t idx = b; idx < e; ++idx) {
                int64_t s = idx / h, y = idx % h;
                for (int64_t x = 0; x < w; ++x) {
                  std::fill(acc.begin(), acc.end(), Acc(0));
                  for (int64_t a = 0; a < 3; ++a) {
                    int64_t t = y + 1 - a;
                    if (t < 0 || t % sh != 0 || t / sh >= oh)
                      continue;
                    for (int64_t bb = 0; bb < 3; ++bb) {
                      int64_t u = x + 1 - bb;
                      if (u < 0 || u % sw != 0 || u / sw >= ow)
                        continue;
                      const scalar_t *p =
                          dy + ((s * oh + t / sh) * ow + u / sw) * c;
                      const Acc *kk = kt + (a * 3 + bb) * c;
                      Acc *accp = acc.data();
                      for (int64_t ch = 0; ch < c; ++ch)
                        accp[ch] += kk[ch] * Acc(p[ch]);
                    }
                  }
                  scalar_t *dst = d + ((s * h + y) * w + x) * c;
                  for (int64_t ch = 0; ch < c; ++ch)
                    dst[ch] = scalar_t(acc[ch]);
                }
              }
            });
      });
  return dx;
}

//===----------------------------------------------------------------------===//
// Max pool at stride 1, then blur
//===----------------------------------------------------------------------===//

/// Max-pool map geometry for an input of h x w.
struct MaxMap {
  MaxPoolGeometry p;
  int64_t h, w, mh, mw;

  MaxMap(MaxPoolGeometry p, int64_t h, int64_t w)
      : p(p), h(h), w(w), mh(h + 2 * p.padH - p.dilationH * (p.kernelH - 1)),
        mw(w + 2 * p.padW - p.dilationW * (p.kernelW - 1)) {
    TORCH_CHECK(mh >= 1 && mw >= 1, "composer blur_max_pool2d: the max pool's ",
                "window does not fit the ", h, "x", w, " input");
  }
  /// Input row of map row m at window row kh, or -1 when in the padding.
  int64_t inputRow(int64_t m, int64_t kh) const {
    int64_t y = m - p.padH + kh * p.dilationH;
    return y >= 0 && y < h ? y : -1;
  }
  /// The map columns [first, last) whose window column kw is inside the
  /// input, and the input column of map column 0 at kw.
  void columns(int64_t kw, int64_t &first, int64_t &last,
               int64_t &offset) const {
    offset = kw * p.dilationW - p.padW;
    first = std::max<int64_t>(0, -offset);
    last = std::min<int64_t>(mw, w - offset);
  }
};

/// max_pool2d's comparison: a NaN always wins. (`v != v` rather than
/// std::isnan keeps the selects vectorizable.)
template <typename Acc> inline bool beats(Acc v, Acc best) {
  return (v > best) | (v != v);
}

/// One map row of a plane (NCHW) or of an image (NHWC, `c` interleaved).
template <typename In, typename Acc>
void maxMapRow(const In *image, const MaxMap &mm, int64_t m, int64_t c,
               Acc *row) {
  std::fill(row, row + mm.mw * c, -std::numeric_limits<Acc>::infinity());
  for (int64_t kh = 0; kh < mm.p.kernelH; ++kh) {
    int64_t y = mm.inputRow(m, kh);
    if (y < 0)
      continue;
    for (int64_t kw = 0; kw < mm.p.kernelW; ++kw) {
      int64_t first, last, offset;
      mm.columns(kw, first, last, offset);
      const In *src = image + (y * mm.w + offset) * c;
      for (int64_t i = first * c; i < last * c; ++i) {
        Acc v = Acc(src[i]);
        row[i] = beats(v, row[i]) ? v : row[i];
      }
    }
  }
}

at::Tensor maxBlur(const at::Tensor &input, const at::Tensor &filter,
                   MaxPoolGeometry pool, BlurGeometry g) {
  Layout layout = layoutOf(input);
  int64_t n = input.size(0), c = input.size(1);
  MaxMap mm(pool, input.size(2), input.size(3));
  int64_t sh = g.strideH, sw = g.strideW;
  int64_t oh = (mm.mh - 1) / sh + 1, ow = (mm.mw - 1) / sw + 1;
  at::Tensor out = empty4d({n, c, oh, ow}, input.options(), layout);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, input.scalar_type(), "composer_max_blur", [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor taps = filterTaps<Acc>(filter, c);
        const scalar_t *in = input.data_ptr<scalar_t>();
        scalar_t *o = out.data_ptr<scalar_t>();
        int64_t planeSize = mm.h * mm.w;
        if (layout == Layout::NCHW) {
          const Acc *k = taps.data_ptr<Acc>();
          int64_t work = ow * 3 * (9 + pool.kernelH * pool.kernelW);
          at::parallel_for(
              0, n * c * oh, grainFor(work), [&](int64_t b, int64_t e) {
                std::vector<Acc> row(ow), mapRow(mm.mw);
                for (int64_t idx = b; idx < e; ++idx) {
                  int64_t plane = idx / oh, i = idx % oh;
                  const Acc *kc = k + (plane % c) * 9;
                  std::fill(row.begin(), row.end(), Acc(0));
                  for (int64_t a = 0; a < 3; ++a) {
                    int64_t m = i * sh + a - 1;
                    if (m < 0 || m >= mm.mh)
                      continue;
                    maxMapRow(in + plane * planeSize, mm, m, 1, mapRow.data());
                    blurRowAccumulate(mapRow.data(), mm.mw, ow, sw, kc[a * 3],
                                      kc[a * 3 + 1], kc[a * 3 + 2], row.data());
                  }
                  scalar_t *dst = o + idx * ow;
                  for (int64_t j = 0; j < ow; ++j)
                    dst[j] = scalar_t(row[j]);
                }
              });
          return;
        }
        at::Tensor transposed = taps.t().contiguous();
        const Acc *kt = transposed.data_ptr<Acc>();
        int64_t work = ow * c * 3 * (9 + pool.kernelH * pool.kernelW);
        at::parallel_for(0, n * oh, grainFor(work), [&](int64_t b, int64_t e) {
          std::vector<Acc> maps(3 * mm.mw * c), acc(c);
          for (int64_t idx = b; idx < e; ++idx) {
            int64_t s = idx / oh, i = idx % oh;
            const scalar_t *image = in + s * planeSize * c;
            bool valid[3];
            for (int64_t a = 0; a < 3; ++a) {
              int64_t m = i * sh + a - 1;
              valid[a] = m >= 0 && m < mm.mh;
              if (valid[a])
                maxMapRow(image, mm, m, c, maps.data() + a * mm.mw * c);
            }
            for (int64_t j = 0; j < ow; ++j) {
              std::fill(acc.begin(), acc.end(), Acc(0));
              for (int64_t a = 0; a < 3; ++a) {
                if (!valid[a])
                  continue;
                for (int64_t bb = 0; bb < 3; ++bb) {
                  int64_t x = j * sw + bb - 1;
                  if (x < 0 || x >= mm.mw)
                    continue;
                  const Acc *p = maps.data() + (a * mm.mw + x) * c;
                  const Acc *kk = kt + (a * 3 + bb) * c;
                  Acc *accp = acc.data();
                  for (int64_t ch = 0; ch < c; ++ch)
                    accp[ch] += kk[ch] * p[ch];
                }
              }
              scalar_t *dst = o + ((s * oh + i) * ow + j) * c;
              for (int64_t ch = 0; ch < c; ++ch)
                dst[ch] = scalar_t(acc[ch]);
            }
          }
        });
      });
  return out;
}

/// The blur's input gradient for map row m: dRow (mw * c, interleaved) from
/// the output gradient of one plane (c == 1) or image.
template <typename In, typename Acc>
void blurGradRow(const In *dy, const MaxMap &mm, int64_t m, int64_t oh,
                 int64_t ow, BlurGeometry g, const Acc *k, const Acc *kt,
                 int64_t c, Acc *dRow) {
  std::fill(dRow, dRow + mm.mw * c, Acc(0));
  for (int64_t a = 0; a < 3; ++a) {
    int64_t t = m + 1 - a;
    if (t < 0 || t % g.strideH != 0 || t / g.strideH >= oh)
      continue;
    const In *gRow = dy + (t / g.strideH) * ow * c;
    if (c == 1) {
      blurRowScatter(gRow, ow, mm.mw, g.strideW, k + a * 3, dRow);
      continue;
    }
    for (int64_t x = 0; x < mm.mw; ++x)
      for (int64_t bb = 0; bb < 3; ++bb) {
        int64_t u = x + 1 - bb;
        if (u < 0 || u % g.strideW != 0 || u / g.strideW >= ow)
          continue;
        const In *p = gRow + (u / g.strideW) * c;
        const Acc *kk = kt + (a * 3 + bb) * c;
        Acc *d = dRow + x * c;
        for (int64_t ch = 0; ch < c; ++ch)
          d[ch] += kk[ch] * Acc(p[ch]);
      }
  }
}

at::Tensor maxBlurBackward(const at::Tensor &gradOutput,
                           const at::Tensor &input, const at::Tensor &filter,
                           MaxPoolGeometry pool, BlurGeometry g) {
  Layout layout = layoutOf(input);
  int64_t n = input.size(0), c = input.size(1);
  MaxMap mm(pool, input.size(2), input.size(3));
  int64_t oh = gradOutput.size(2), ow = gradOutput.size(3);
  TORCH_CHECK(gradOutput.size(0) == n && gradOutput.size(1) == c &&
                  oh == (mm.mh - 1) / g.strideH + 1 &&
                  ow == (mm.mw - 1) / g.strideW + 1,
              "composer blur_max_pool2d backward: gradient size ",
              gradOutput.sizes(), " does not match the input ", input.sizes());
  TORCH_CHECK(layoutOf(gradOutput) == layout,
              "composer ops: activations of one call must share a memory "
              "format");
  at::Tensor dx = empty4d(input.sizes(), input.options(), layout);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, input.scalar_type(),
      "composer_max_blur_backward", [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor taps = filterTaps<Acc>(filter, c);
        at::Tensor transposed = taps.t().contiguous();
        const Acc *k = taps.data_ptr<Acc>(), *kt = transposed.data_ptr<Acc>();
        const scalar_t *in = input.data_ptr<scalar_t>();
        const scalar_t *dy = gradOutput.data_ptr<scalar_t>();
        scalar_t *d = dx.data_ptr<scalar_t>();
        int64_t planeSize = mm.h * mm.w;
        // Each task owns whole planes (NCHW) or images (NHWC) of dx, so the
        // scatter to argmax positions needs no synchronization. Per map row,
        // the argmax of every window is found with vectorizable selects
        // along the row (NCHW: lanes are map columns; NHWC: map column x
        // channel), visiting window taps in max_pool2d's order.
        bool nchw = layout == Layout::NCHW;
        int64_t tasks = nchw ? n * c : n, lanes = nchw ? 1 : c;
        int64_t rowLanes = mm.mw * lanes;
        TORCH_CHECK(planeSize * lanes < (int64_t(1) << 31),
                    "composer blur_max_pool2d backward: image too large");
        at::parallel_for(0, tasks, 1, [&](int64_t b, int64_t e) {
          std::vector<Acc> dAcc(planeSize * lanes), dRow(rowLanes),
              best(rowLanes);
          // int32 positions: same lane width as float, so the selects
          // vectorize.
          std::vector<int32_t> arg(rowLanes);
          for (int64_t task = b; task < e; ++task) {
            const scalar_t *image = in + task * planeSize * lanes;
            const Acc *kc = k + (nchw ? (task % c) * 9 : 0);
            std::fill(dAcc.begin(), dAcc.end(), Acc(0));
            for (int64_t m = 0; m < mm.mh; ++m) {
              blurGradRow(dy + task * oh * ow * lanes, mm, m, oh, ow, g, kc, kt,
                          lanes, dRow.data());
              std::fill(best.begin(), best.end(),
                        -std::numeric_limits<Acc>::infinity());
              std::fill(arg.begin(), arg.end(), -1);
              for (int64_t kh = 0; kh < pool.kernelH; ++kh) {
                int64_t y = mm.inputRow(m, kh);
                if (y < 0)
                  continue;
                for (int64_t kw = 0; kw < pool.kernelW; ++kw) {
                  int64_t first, last, offset;
                  mm.columns(kw, first, last, offset);
                  // Lane i of the row reads input element i + shift.
                  int32_t shift = int32_t((y * mm.w + offset) * lanes);
                  const scalar_t *src = image + shift;
                  Acc *bp = best.data();
                  int32_t *ap = arg.data();
                  int32_t begin = int32_t(first * lanes),
                          end = int32_t(last * lanes);
                  _Pragma("omp simd") for (int32_t i = begin; i < end; ++i) {
                    Acc v = Acc(src[i]);
                    bool wins = beats(v, bp[i]);
                    bp[i] = wins ? v : bp[i];
                    ap[i] = wins ? i + shift : ap[i];
                  }
                }
              }
              for (int64_t i = 0; i < rowLanes; ++i)
                if (arg[i] >= 0)
                  dAcc[arg[i]] += dRow[i];
            }
            scalar_t *dst = d + task * planeSize * lanes;
            for (int64_t i = 0; i < planeSize * lanes; ++i)
              dst[i] = scalar_t(dAcc[i]);
          }
        });
      });
  return dx;
}

//===----------------------------------------------------------------------===//
// Per-channel reductions and maps, over groups of samples
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

struct Shape {
  Layout layout;
  int64_t n, c, hw;
};

Shape shapeOf(const at::Tensor &x) {
  return {layoutOf(x), x.size(0), x.size(1), x.size(2) * x.size(3)};
}

at::Tensor channelMean(const at::Tensor &input) {
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

at::Tensor channelDot(const at::Tensor &dy, const at::Tensor &x) {
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

at::Tensor scaleChannels(const at::Tensor &x, const at::Tensor &scale,
                         const at::Tensor &shift, at::ScalarType dtype) {
  Shape s = shapeOf(x);
  at::Tensor out = empty4d(x.sizes(), x.options().dtype(dtype), s.layout);
  dispatchInOut(x.scalar_type(), dtype, [&](auto in, auto outTag) {
    using T = decltype(in);
    using U = decltype(outTag);
    using Acc = acc_t<T>;
    at::Tensor sc = coefficients<Acc>(scale);
    const Acc *a = sc.data_ptr<Acc>();
    const T *src = x.data_ptr<T>();
    U *dst = out.data_ptr<U>();
    if (!shift.defined()) {
      mapChannels(s.layout, s.n, s.c, s.hw, 1, [=](int64_t i, int64_t kc) {
        dst[i] = U(Acc(src[i]) * a[kc]);
      });
      return;
    }
    at::Tensor sh = coefficients<Acc>(shift);
    const Acc *b = sh.data_ptr<Acc>();
    mapChannels(s.layout, s.n, s.c, s.hw, 1, [=](int64_t i, int64_t kc) {
      dst[i] = U(Acc(src[i]) * a[kc] + b[kc]);
    });
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> chunkStats(const at::Tensor &x,
                                              int64_t chunk) {
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

std::tuple<at::Tensor, at::Tensor> chunkGradStats(const at::Tensor &dy,
                                                  const at::Tensor &x,
                                                  const at::Tensor &mean,
                                                  int64_t chunk) {
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

at::Tensor chunkAffine(const at::Tensor &x, const at::Tensor &a,
                       const at::Tensor &b, int64_t chunk,
                       at::ScalarType dtype) {
  Shape s = shapeOf(x);
  at::Tensor out = empty4d(x.sizes(), x.options().dtype(dtype), s.layout);
  dispatchInOut(x.scalar_type(), dtype, [&](auto in, auto outTag) {
    using T = decltype(in);
    using U = decltype(outTag);
    using Acc = acc_t<T>;
    at::Tensor ac = coefficients<Acc>(a), bc = coefficients<Acc>(b);
    const Acc *pa = ac.data_ptr<Acc>(), *pb = bc.data_ptr<Acc>();
    const T *src = x.data_ptr<T>();
    U *dst = out.data_ptr<U>();
    mapChannels(s.layout, s.n, s.c, s.hw, chunk, [=](int64_t i, int64_t kc) {
      dst[i] = U(pa[kc] * Acc(src[i]) + pb[kc]);
    });
  });
  return out;
}

at::Tensor chunkAffine2(const at::Tensor &dy, const at::Tensor &x,
                        const at::Tensor &a, const at::Tensor &b,
                        const at::Tensor &c, int64_t chunk,
                        at::ScalarType dtype) {
  Shape s = shapeOf(x);
  checkSameLayout(x, dy, s.layout);
  TORCH_CHECK(dy.scalar_type() == x.scalar_type(),
              "composer ops: chunkAffine2 dtypes differ");
  at::Tensor out = empty4d(x.sizes(), x.options().dtype(dtype), s.layout);
  dispatchInOut(x.scalar_type(), dtype, [&](auto in, auto outTag) {
    using T = decltype(in);
    using U = decltype(outTag);
    using Acc = acc_t<T>;
    at::Tensor ac = coefficients<Acc>(a), bc = coefficients<Acc>(b),
               cc = coefficients<Acc>(c);
    const Acc *pa = ac.data_ptr<Acc>(), *pb = bc.data_ptr<Acc>(),
              *pc = cc.data_ptr<Acc>();
    const T *g = dy.data_ptr<T>(), *v = x.data_ptr<T>();
    U *dst = out.data_ptr<U>();
    mapChannels(s.layout, s.n, s.c, s.hw, chunk, [=](int64_t i, int64_t kc) {
      dst[i] = U(pa[kc] * Acc(g[i]) + pb[kc] * Acc(v[i]) + pc[kc]);
    });
  });
  return out;
}

} // namespace

const DeviceKernels &kernels() {
  static const DeviceKernels table = {
      blur,           blurBackward, maxBlur,       maxBlurBackward,
      channelMean,    channelDot,   scaleChannels, chunkStats,
      chunkGradStats, chunkAffine,  chunkAffine2};
  return table;
}

} // namespace composer::ops::COMPOSER_CPU_ISA
