//===- Blur.cpp - BlurPool's blur and max-pool+blur primitives, on CPU ----===//
//
// The blur (depthwise 3x3 filter, padding 1) and the max pool at stride 1
// fused in front of it, forward and backward. NCHW goes a row at a time
// along W (tapRowsNchw), channels_last a pixel at a time along C
// (gatherNhwc); each pass names only where its taps read. fp32 and bf16 at
// stride 1 have an AVX2 fast path.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace composer::ops::COMPOSER_CPU_ISA {
namespace {

//===----------------------------------------------------------------------===//
// Rows, taps and walkers
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

/// Along one axis, the source index that destination index o reads at tap a
/// (0..2), or -1 where that is padding. The blur reads o * stride + a - 1 of
/// `size` inputs.
struct ForwardTaps {
  int64_t stride, size;
  int64_t operator()(int64_t o, int64_t a) const {
    int64_t y = o * stride + a - 1;
    return y >= 0 && y < size ? y : -1;
  }
};

/// The transpose of ForwardTaps: input o's gradient reads the output (of
/// `size`) whose tap a lands on o.
struct BackwardTaps {
  int64_t stride, size;
  int64_t operator()(int64_t o, int64_t a) const {
    int64_t t = o + 1 - a;
    return t >= 0 && t % stride == 0 && t / stride < size ? t / stride : -1;
  }
};

/// acc[ch] += k[ch] * p[ch] over a pixel's c channels: one tap.
template <typename In, typename Acc>
inline void addTap(Acc *acc, const Acc *k, const In *p, int64_t c) {
  for (int64_t ch = 0; ch < c; ++ch)
    acc[ch] += k[ch] * Acc(p[ch]);
}

template <typename T, typename Acc>
inline void storeAs(T *dst, const Acc *values, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    dst[i] = T(values[i]);
}

/// NCHW, a destination row at a time: row i of plane p sums, over the taps a
/// whose source row y = rows(i, a) is not -1, addRow(p, y, filter row a, row,
/// scratch), scratch holding scratchSize values per task; `work` is the cost
/// of a row.
template <typename T, typename Acc, typename Rows, typename AddRow>
void tapRowsNchw(T *dst, int64_t planes, int64_t dstH, int64_t dstW, int64_t c,
                 const Acc *k, int64_t work, int64_t scratchSize, Rows rows,
                 AddRow addRow) {
  at::parallel_for(0, planes * dstH, grainFor(work), [&](int64_t b, int64_t e) {
    std::vector<Acc> row(dstW), scratch(scratchSize);
    for (int64_t idx = b; idx < e; ++idx) {
      int64_t plane = idx / dstH, i = idx % dstH;
      const Acc *kc = k + (plane % c) * 9;
      std::fill(row.begin(), row.end(), Acc(0));
      for (int64_t a = 0; a < 3; ++a) {
        int64_t y = rows(i, a);
        if (y >= 0)
          addRow(plane, y, kc + a * 3, row.data(), scratch.data());
      }
      storeAs(dst + idx * dstW, row.data(), dstW);
    }
  });
}

/// Channels-last, a destination pixel at a time: dst[s, i, j, :] sums
/// kt[a*3+b, :] * tap(a, b, j)[:] over the 3x3 taps, where
/// tap = rowTaps(s, i, scratch) gives the channels a tap reads (null where it
/// reads padding), scratch holding scratchSize values per task; `work` is the
/// cost of a row.
template <typename T, typename Acc, typename RowTaps>
void gatherNhwc(T *dst, int64_t n, int64_t dstH, int64_t dstW, int64_t c,
                const Acc *kt, int64_t work, int64_t scratchSize,
                RowTaps rowTaps) {
  at::parallel_for(0, n * dstH, grainFor(work), [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(c), scratch(scratchSize);
    for (int64_t idx = b; idx < e; ++idx) {
      auto tap = rowTaps(idx / dstH, idx % dstH, scratch.data());
      for (int64_t j = 0; j < dstW; ++j) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t bb = 0; bb < 3; ++bb)
            if (const auto *p = tap(a, bb, j))
              addTap(acc.data(), kt + (a * 3 + bb) * c, p, c);
        storeAs(dst + (idx * dstW + j) * c, acc.data(), c);
      }
    }
  });
}

/// gatherNhwc's rowTaps for taps into a channels_last (srcH, srcW)
/// activation, mapped per axis by `rows` and `cols`.
template <typename T, typename Rows, typename Cols>
auto imageTaps(const T *src, int64_t srcH, int64_t srcW, int64_t c, Rows rows,
               Cols cols) {
  return [=](int64_t s, int64_t i, auto *) {
    return [=](int64_t a, int64_t b, int64_t j) -> const T * {
      int64_t y = rows(i, a), x = cols(j, b);
      return y < 0 || x < 0 ? nullptr : src + ((s * srcH + y) * srcW + x) * c;
    };
  };
}

/// out = the blur of src (ForwardTaps), or the blur's input gradient from
/// src, the output's gradient (BackwardTaps): the same gathers, the taps
/// transposed. `sw` is the blur's stride along W.
template <typename Taps>
void blurPass(const at::Tensor &src, const at::Tensor &filter, Layout layout,
              Taps rows, Taps cols, int64_t sw, at::Tensor &out) {
  constexpr bool forward = std::is_same_v<Taps, ForwardTaps>;
  constexpr const char *name =
      forward ? "composer_blur" : "composer_blur_backward";
  int64_t n = src.size(0), c = src.size(1), srcH = src.size(2),
          srcW = src.size(3), dstH = out.size(2), dstW = out.size(3);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, src.scalar_type(), name, [&] {
        using Acc = acc_t<scalar_t>;
        at::Tensor taps = filterTaps<Acc>(filter, c);
        const scalar_t *in = src.data_ptr<scalar_t>();
        scalar_t *o = out.data_ptr<scalar_t>();
        if (layout == Layout::NCHW) {
          tapRowsNchw(
              o, n * c, dstH, dstW, c, taps.data_ptr<Acc>(), dstW * 9, 0, rows,
              [&](int64_t plane, int64_t y, const Acc *k3, Acc *row, Acc *) {
                const scalar_t *r = in + (plane * srcH + y) * srcW;
                if constexpr (forward)
                  blurRowAccumulate(r, srcW, dstW, sw, k3[0], k3[1], k3[2],
                                    row);
                else
                  blurRowScatter(r, srcW, dstW, sw, k3, row);
              });
          return;
        }
        at::Tensor transposed = taps.t().contiguous();
        gatherNhwc(o, n, dstH, dstW, c, transposed.data_ptr<Acc>(),
                   dstW * c * 9, 0, imageTaps(in, srcH, srcW, c, rows, cols));
      });
}

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

/// The blur's input gradient for map row m: dRow (mw * c, interleaved) from
/// the output gradient of one plane (c == 1) or image.
template <typename In, typename Acc>
void blurGradRow(const In *dy, const MaxMap &mm, int64_t m, int64_t oh,
                 int64_t ow, BlurGeometry g, const Acc *k, const Acc *kt,
                 int64_t c, Acc *dRow) {
  std::fill(dRow, dRow + mm.mw * c, Acc(0));
  BackwardTaps rows{g.strideH, oh}, cols{g.strideW, ow};
  for (int64_t a = 0; a < 3; ++a) {
    int64_t t = rows(m, a);
    if (t < 0)
      continue;
    const In *gRow = dy + t * ow * c;
    if (c == 1) {
      blurRowScatter(gRow, ow, mm.mw, g.strideW, k + a * 3, dRow);
      continue;
    }
    for (int64_t x = 0; x < mm.mw; ++x)
      for (int64_t bb = 0; bb < 3; ++bb) {
        int64_t u = cols(x, bb);
        if (u >= 0)
          addTap(dRow + x * c, kt + (a * 3 + bb) * c, gRow + u * c, c);
      }
  }
}

//===----------------------------------------------------------------------===//
// Blur fast path: fp32 and bf16 at stride 1 (BlurPool's blur-first form, and
// every stride-1 backward), written with AVX2 intrinsics; other builds and
// cases take the generic loops. Both types accumulate in float like the
// generic loops and round once on store, so bf16 equals the float kernel's
// result rounded.
//===----------------------------------------------------------------------===//

#ifdef __AVX2__
/// Eight elements of T as floats, or the first `count` of them.
template <typename T> struct Vec;

template <> struct Vec<float> {
  static constexpr int64_t size() { return 8; }
  static __m256i mask(int64_t count) {
    static const int32_t lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                      0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i *>(lanes + 8 - count));
  }
  static __m256 load(const float *p) { return _mm256_loadu_ps(p); }
  static __m256 load(const float *p, int64_t count) {
    return count == 8 ? load(p) : _mm256_maskload_ps(p, mask(count));
  }
  static void store(float *p, __m256 v) { _mm256_storeu_ps(p, v); }
  static void store(float *p, __m256 v, int64_t count) {
    if (count == 8)
      store(p, v);
    else
      _mm256_maskstore_ps(p, mask(count), v);
  }
};

/// bf16 is the upper half of a float: widen and shift to load; round to
/// nearest even as c10::BFloat16(float) does (NaN to the quiet 0x7FC0) to
/// store. AVX2 has no 16-bit masked moves, so partial vectors go through a
/// stack buffer.
template <> struct Vec<c10::BFloat16> {
  using T = c10::BFloat16;
  static constexpr int64_t size() { return 8; }
  static __m256 load(const T *p) {
    __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
  }
  static __m256 load(const T *p, int64_t count) {
    if (count == 8)
      return load(p);
    T buffer[8] = {};
    std::copy(p, p + count, buffer);
    return load(buffer);
  }
  static void store(T *p, __m256 v) {
    __m256i bits = _mm256_castps_si256(v);
    __m256i bias = _mm256_add_epi32(
        _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1)),
        _mm256_set1_epi32(0x7FFF));
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    rounded = _mm256_blendv_epi8(rounded, _mm256_set1_epi32(0x7FC0), nan);
    // Every lane is below 2^16, so the saturating pack only narrows.
    __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(rounded),
                                      _mm256_extracti128_si256(rounded, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), packed);
  }
  static void store(T *p, __m256 v, int64_t count) {
    if (count == 8)
      return store(p, v);
    T buffer[8];
    store(buffer, v);
    std::copy(buffer, buffer + count, p);
  }
};

/// dst[0, count) = src[0, count) as floats.
template <typename T> void widen(const T *src, int64_t count, float *dst) {
  int64_t i = 0;
  for (; i + Vec<T>::size() <= count; i += Vec<T>::size())
    Vec<float>::store(dst + i, Vec<T>::load(src + i));
  for (; i < count; ++i)
    dst[i] = float(src[i]);
}

/// One output row (NCHW) from up to three input rows (null: padding).
template <typename T>
void blurRowStride1(const float *const rows[3], int64_t w, const float *k,
                    T *out) {
  using V = Vec<float>;
  auto edge = [&](int64_t j) {
    float sum = 0;
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b) {
        int64_t x = j + b - 1;
        if (rows[a] && x >= 0 && x < w)
          sum += k[a * 3 + b] * rows[a][x];
      }
    return T(sum);
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
      acc = _mm256_fmadd_ps(V::load(r, count), taps[a * 3], acc);
      acc = _mm256_fmadd_ps(V::load(r + 1, count), taps[a * 3 + 1], acc);
      acc = _mm256_fmadd_ps(V::load(r + 2, count), taps[a * 3 + 2], acc);
    }
    Vec<T>::store(out + j, acc, count);
  };
  int64_t j = 1, end = w - 1;
  for (; j + V::size() <= end; j += V::size())
    interior(j, V::size());
  // The rest: where the row is long enough, the full vector ending at `end`
  // (its overlap recomputed, the same), as partial ones cost more.
  if (j < end && end - V::size() >= 1)
    interior(end - V::size(), V::size());
  else if (j < end)
    interior(j, end - j);
}

template <typename T>
at::Tensor blurStride1(const at::Tensor &input, const at::Tensor &filter,
                       Layout layout) {
  using V = Vec<T>;
  int64_t n = input.size(0), c = input.size(1), h = input.size(2),
          w = input.size(3);
  at::Tensor out = empty4d(input.sizes(), input.options(), layout);
  at::Tensor taps = filterTaps<float>(filter, c);
  const T *in = input.data_ptr<T>();
  T *o = out.data_ptr<T>();
  if (layout == Layout::NCHW) {
    const float *k = taps.data_ptr<float>();
    at::parallel_for(0, n * c * h, grainFor(w * 9), [&](int64_t b, int64_t e) {
      // Other types are widened a row at a time, once per row rather than
      // at each of its nine taps: a ring holds the three rows in use (input
      // row r, of all planes, in slot r % 3).
      std::vector<float> ring(std::is_same_v<T, float> ? 0 : 3 * w);
      int64_t held[3] = {-1, -1, -1};
      auto inputRow = [&](int64_t r) -> const float * {
        if constexpr (std::is_same_v<T, float>) {
          return in + r * w;
        } else {
          float *slot = ring.data() + (r % 3) * w;
          if (held[r % 3] != r) {
            widen(in + r * w, w, slot);
            held[r % 3] = r;
          }
          return slot;
        }
      };
      for (int64_t idx = b; idx < e; ++idx) {
        int64_t plane = idx / h, i = idx % h;
        const float *rows[3];
        for (int64_t a = 0; a < 3; ++a) {
          int64_t y = i + a - 1;
          rows[a] = y >= 0 && y < h ? inputRow(plane * h + y) : nullptr;
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
      const T *rows[3];
      for (int64_t a = 0; a < 3; ++a) {
        int64_t y = i + a - 1;
        rows[a] = y >= 0 && y < h ? in + (s * h + y) * w * c : nullptr;
      }
      T *dst = o + idx * w * c;
      for (int64_t j = 0; j < w; ++j) {
        // The taps inside the image for this pixel.
        const T *src[9];
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
        for (; c0 + 4 * V::size() <= c; c0 += 4 * V::size()) {
          __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0,
                 acc3 = acc0;
          for (int t = 0; t < count; ++t) {
            const T *p = src[t] + c0;
            const float *k = tap[t] + c0;
            acc0 = _mm256_fmadd_ps(V::load(p), _mm256_loadu_ps(k), acc0);
            acc1 =
                _mm256_fmadd_ps(V::load(p + 8), _mm256_loadu_ps(k + 8), acc1);
            acc2 =
                _mm256_fmadd_ps(V::load(p + 16), _mm256_loadu_ps(k + 16), acc2);
            acc3 =
                _mm256_fmadd_ps(V::load(p + 24), _mm256_loadu_ps(k + 24), acc3);
          }
          T *d = dst + j * c + c0;
          V::store(d, acc0);
          V::store(d + 8, acc1);
          V::store(d + 16, acc2);
          V::store(d + 24, acc3);
        }
        for (; c0 < c; c0 += V::size()) {
          // As along W: a last partial vector ends at c instead where C
          // allows.
          if (c - c0 < V::size() && c >= V::size())
            c0 = c - V::size();
          int64_t lanes = std::min<int64_t>(V::size(), c - c0);
          __m256 acc = _mm256_setzero_ps();
          for (int t = 0; t < count; ++t)
            acc = _mm256_fmadd_ps(V::load(src[t] + c0, lanes),
                                  Vec<float>::load(tap[t] + c0, lanes), acc);
          V::store(dst + j * c + c0, acc, lanes);
        }
      }
    }
  });
  return out;
}

/// The stride-1 blur where the fast path takes its dtype; undefined otherwise.
at::Tensor blurStride1Fast(const at::Tensor &input, const at::Tensor &filter,
                           Layout layout) {
  if (input.scalar_type() == at::kFloat)
    return blurStride1<float>(input, filter, layout);
  if (input.scalar_type() == at::kBFloat16)
    return blurStride1<c10::BFloat16>(input, filter, layout);
  return {};
}
#endif // __AVX2__

} // namespace

//===----------------------------------------------------------------------===//
// Blur
//===----------------------------------------------------------------------===//

at::Tensor CpuKernels::blur(const at::Tensor &input, const at::Tensor &filter,
                            BlurGeometry g) const {
  Layout layout = layoutOf(input);
  int64_t n = input.size(0), c = input.size(1), h = input.size(2),
          w = input.size(3);
  int64_t sh = g.strideH, sw = g.strideW;
#ifdef __AVX2__
  if (sh == 1 && sw == 1)
    if (at::Tensor out = blurStride1Fast(input, filter, layout); out.defined())
      return out;
#endif
  int64_t oh = (h - 1) / sh + 1, ow = (w - 1) / sw + 1;
  at::Tensor out = empty4d({n, c, oh, ow}, input.options(), layout);
  blurPass(input, filter, layout, ForwardTaps{sh, h}, ForwardTaps{sw, w}, sw,
           out);
  return out;
}

at::Tensor CpuKernels::blurBackward(const at::Tensor &gradOutput,
                                    const at::Tensor &filter, int64_t h,
                                    int64_t w, BlurGeometry g) const {
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
  if (sh == 1 && sw == 1)
    if (at::Tensor dx =
            blurStride1Fast(gradOutput, filter.flip({2, 3}), layout);
        dx.defined())
      return dx;
#endif
  at::Tensor dx = empty4d({n, c, h, w}, gradOutput.options(), layout);
  blurPass(gradOutput, filter, layout, BackwardTaps{sh, oh},
           BackwardTaps{sw, ow}, sw, dx);
  return dx;
}

//===----------------------------------------------------------------------===//
// Max pool at stride 1, then blur
//===----------------------------------------------------------------------===//

at::Tensor CpuKernels::maxBlur(const at::Tensor &input,
                               const at::Tensor &filter, MaxPoolGeometry pool,
                               BlurGeometry g) const {
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
        // Per output row, the max-pool map rows its taps read.
        ForwardTaps mapRows{sh, mm.mh};
        int64_t work = ow * 3 * (9 + pool.kernelH * pool.kernelW);
        if (layout == Layout::NCHW) {
          tapRowsNchw(o, n * c, oh, ow, c, taps.data_ptr<Acc>(), work, mm.mw,
                      mapRows,
                      [&](int64_t plane, int64_t m, const Acc *k3, Acc *row,
                          Acc *mapRow) {
                        maxMapRow(in + plane * planeSize, mm, m, 1, mapRow);
                        blurRowAccumulate(mapRow, mm.mw, ow, sw, k3[0], k3[1],
                                          k3[2], row);
                      });
          return;
        }
        at::Tensor transposed = taps.t().contiguous();
        ForwardTaps mapCols{sw, mm.mw};
        gatherNhwc(o, n, oh, ow, c, transposed.data_ptr<Acc>(), work * c,
                   3 * mm.mw * c, [&](int64_t s, int64_t i, Acc *maps) {
                     const scalar_t *image = in + s * planeSize * c;
                     std::array<bool, 3> valid;
                     for (int64_t a = 0; a < 3; ++a) {
                       int64_t m = mapRows(i, a);
                       valid[a] = m >= 0;
                       if (valid[a])
                         maxMapRow(image, mm, m, c, maps + a * mm.mw * c);
                     }
                     return [=](int64_t a, int64_t b,
                                int64_t j) -> const Acc * {
                       int64_t x = mapCols(j, b);
                       return valid[a] && x >= 0 ? maps + (a * mm.mw + x) * c
                                                 : nullptr;
                     };
                   });
      });
  return out;
}

at::Tensor CpuKernels::maxBlurBackward(const at::Tensor &gradOutput,
                                       const at::Tensor &input,
                                       const at::Tensor &filter,
                                       MaxPoolGeometry pool,
                                       BlurGeometry g) const {
  Layout layout = layoutOf(input);
  int64_t n = input.size(0), c = input.size(1);
  MaxMap mm(pool, input.size(2), input.size(3));
  TORCH_CHECK(
      gradOutput.sizes().equals(maxBlurOutputSizes(input.sizes(), pool, g)),
      "composer blur_max_pool2d backward: gradient size ", gradOutput.sizes(),
      " does not match the input ", input.sizes());
  int64_t oh = gradOutput.size(2), ow = gradOutput.size(3);
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
            storeAs(d + task * planeSize * lanes, dAcc.data(),
                    planeSize * lanes);
          }
        });
      });
  return dx;
}

} // namespace composer::ops::COMPOSER_CPU_ISA
