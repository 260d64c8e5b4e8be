//===- Affine.cu - per-(group, channel) affine maps -----------------------===//
//
// scaleChannels, chunkAffine and chunkAffine2: out = a * p + b * q + c with
// coefficients per (group of samples, channel). The tensor is a (rows, cols)
// matrix: NCHW rows are (n, c) planes of H*W columns, one coefficient per
// row; channels_last rows are pixels of C columns, coefficients along the
// row. Threads run along columns in packs of up to 16 bytes, rows are
// grid-strided, and each row's division into (n, c) is done once a pack.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace composer::ops::gpu {
namespace {

struct AffineDims {
  int rows, cols, c, hw, chunk;
};

template <bool ChannelsLast, typename Tp, typename Tq, typename To, bool HasQ,
          int V>
__global__ void affineKernel(const Tp *__restrict__ p, const Tq *__restrict__ q,
                             To *__restrict__ out,
                             const acc_t<To> *__restrict__ a,
                             const acc_t<To> *__restrict__ b,
                             const acc_t<To> *__restrict__ c, AffineDims d) {
  using A = acc_t<To>;
  int col = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (col >= d.cols)
    return;
  for (int64_t next = blockIdx.y * blockDim.y + threadIdx.y; next < d.rows;
       next += int64_t(gridDim.y) * blockDim.y) {
    int row = int(next);
    // Coefficient index of the pack's first element; NCHW packs share one.
    int k = ChannelsLast ? (row / d.hw / d.chunk) * d.c + col
                         : (row / d.c / d.chunk) * d.c + row % d.c;
    int64_t offset = int64_t(row) * d.cols + col;
    Pack<Tp, V> ps = loadPack<V>(p + offset);
    Pack<Tq, V> qs;
    if constexpr (HasQ)
      qs = loadPack<V>(q + offset);
    Pack<To, V> r;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      int ke = ChannelsLast ? k + e : k;
      A v = a[ke] * toAcc(ps.v[e]);
      if constexpr (HasQ)
        v += b[ke] * toAcc(qs.v[e]);
      if (c)
        v += c[ke];
      r.v[e] = fromAcc<To>(v);
    }
    storePack<V>(out + offset, r);
  }
}

template <typename Tp, typename Tq, typename To, bool HasQ>
cudaError_t launchAffine(const Tp *p, const Tq *q, To *out, const acc_t<To> *a,
                         const acc_t<To> *b, const acc_t<To> *c, Layout layout,
                         Shape s, int64_t chunk, cudaStream_t stream) {
  bool channelsLast = layout == Layout::NHWC;
  AffineDims d{int(channelsLast ? s.n * s.h * s.w : s.n * s.c),
               int(channelsLast ? s.c : s.h * s.w), int(s.c), int(s.h * s.w),
               int(std::min<int64_t>(chunk, INT32_MAX))};
  constexpr int V = std::min({kPack<Tp>, kPack<Tq>, kPack<To>});
  bool vector = d.cols % V == 0 && isAligned(p, sizeof(Tp) * V) &&
                (!HasQ || isAligned(q, sizeof(Tq) * V)) &&
                isAligned(out, sizeof(To) * V);
  int pack = vector ? V : 1;
  int64_t packs = ceilDiv(d.cols, pack);
  int tx = std::min(kWarp, pow2Ceil(packs));
  int ty = kThreads / tx;
  dim3 grid(unsigned(ceilDiv(packs, tx)),
            unsigned(std::min(ceilDiv(d.rows, ty), kMaxGridYZ)));
  dim3 block(tx, ty);
  auto run = [&](auto kernel) {
    return launch(kernel, grid, block, stream, p, q, out, a, b, c, d);
  };
  if (channelsLast)
    return vector ? run(affineKernel<true, Tp, Tq, To, HasQ, V>)
                  : run(affineKernel<true, Tp, Tq, To, HasQ, 1>);
  return vector ? run(affineKernel<false, Tp, Tq, To, HasQ, V>)
                : run(affineKernel<false, Tp, Tq, To, HasQ, 1>);
}

/// Calls f(Tag<Tp>, Tag<Tq>, Tag<To>, bool_constant<HasQ>) for a supported
/// dtype combination (see channelAffineSupported; Tq = Tp without q), so
/// only those get kernels.
template <typename F>
cudaError_t visitAffine(DType pType, bool hasQ, DType qType, DType outType,
                        F &&f) {
  using One = std::false_type;
  using Two = std::true_type;
  auto low = [](DType t, auto g) {
    if (t == DType::BFloat16)
      return g(Tag<__nv_bfloat16>{});
    if (t == DType::Float16)
      return g(Tag<__half>{});
    return cudaErrorInvalidValue;
  };
  if (!hasQ) {
    if (pType == outType)
      return visitDType(pType, [&](auto t) { return f(t, t, t, One{}); });
    if (outType == DType::Float32) // Low precision in, float out.
      return low(pType,
                 [&](auto lo) { return f(lo, lo, Tag<float>{}, One{}); });
    if (pType == DType::Float32) // Float in, low precision out.
      return low(outType, [&](auto lo) {
        return f(Tag<float>{}, Tag<float>{}, lo, One{});
      });
    return cudaErrorInvalidValue;
  }
  if (pType == qType && qType == outType)
    return visitDType(pType, [&](auto t) { return f(t, t, t, Two{}); });
  if (pType == DType::Float32 && qType == outType) // Float dy, low x.
    return low(qType, [&](auto lo) { return f(Tag<float>{}, lo, lo, Two{}); });
  return cudaErrorInvalidValue;
}

} // namespace

bool channelAffineSupported(DType pType, bool hasQ, DType qType,
                            DType outType) {
  bool lowQ = qType == DType::BFloat16 || qType == DType::Float16;
  bool lowP = pType == DType::BFloat16 || pType == DType::Float16;
  bool lowOut = outType == DType::BFloat16 || outType == DType::Float16;
  if (!hasQ)
    return pType == outType || (lowP && outType == DType::Float32) ||
           (pType == DType::Float32 && lowOut);
  return (pType == qType && qType == outType) ||
         (pType == DType::Float32 && lowQ && qType == outType);
}

cudaError_t channelAffine(const void *p, DType pType, const void *q,
                          DType qType, void *out, DType outType, Layout layout,
                          Shape shape, int64_t chunk, const void *a,
                          const void *b, const void *c, cudaStream_t stream) {
  bool hasQ = q != nullptr;
  if (!shapeSupported(shape) || chunk < 1 || !a || hasQ != (b != nullptr) ||
      !channelAffineSupported(pType, hasQ, qType, outType))
    return cudaErrorInvalidValue;
  if (shape.n == 0 || shape.c == 0 || shape.h == 0 || shape.w == 0)
    return cudaSuccess;
  return visitAffine(pType, hasQ, qType, outType,
                     [&](auto pTag, auto qTag, auto outTag, auto twoInputs) {
                       using Tp = typename decltype(pTag)::type;
                       using Tq = typename decltype(qTag)::type;
                       using To = typename decltype(outTag)::type;
                       using A = acc_t<To>;
                       return launchAffine<Tp, Tq, To, twoInputs.value>(
                           static_cast<const Tp *>(p),
                           static_cast<const Tq *>(q), static_cast<To *>(out),
                           static_cast<const A *>(a), static_cast<const A *>(b),
                           static_cast<const A *>(c), layout, shape, chunk,
                           stream);
                     });
}

} // namespace composer::ops::gpu
