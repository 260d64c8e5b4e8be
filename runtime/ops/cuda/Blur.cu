//===- Blur.cu - blur and max-pool+blur, forward and backward -------------===//
//
// One forward and one backward kernel, templated on the layout and on the
// max pool in front, over shared walkers (taps, their transpose, pooling
// windows, the windows holding a pixel). Layouts map threads so that a warp
// reads consecutive addresses: NCHW puts threads along W (one output pixel
// each, tiles of several planes when planes are small), channels_last puts
// them along C (a pack of up to 16 bytes of channels each, pixels across
// warps). Backward passes are gathers (each input pixel sums what reads it),
// so no atomics and deterministic sums. The max-pool map is never stored:
// every blur tap recomputes its window from the input, which the L1 cache
// mostly serves.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace composer::ops::gpu {
namespace {

/// Sizes of one blur problem: input (H, W), the map the blur reads (Hm, Wm:
/// the input itself, or the max-pool map), output (Ho, Wo).
struct Dims {
  int n, c, h, w, hm, wm, ho, wo, sh, sw;
};

struct Pool {
  int kh, kw, ph, pw, dh, dw;
};

Dims makeDims(Shape in, int64_t hm, int64_t wm, Stride2d s) {
  return {int(in.n),
          int(in.c),
          int(in.h),
          int(in.w),
          int(hm),
          int(wm),
          int((hm - 1) / s.h + 1),
          int((wm - 1) / s.w + 1),
          int(s.h),
          int(s.w)};
}

/// The output rows (or columns) whose taps read map row y: i with
/// i * s + a - 1 = y for a tap a in [0, 3), i in [0, outSize).
struct TapRange {
  int lo, hi;
};

__device__ __forceinline__ TapRange tapRange(int y, int s, int outSize) {
  return {y >= 1 ? (y + s - 2) / s : 0, min(outSize - 1, (y + 1) / s)};
}

//===----------------------------------------------------------------------===//
// Walkers: the index and bounds loops, shared by every kernel and layout
//===----------------------------------------------------------------------===//

/// The map pixels blur output (i, j) reads: tap(a * 3 + b, ym, xm) for each
/// (ym, xm) = (i * sh - 1 + a, j * sw - 1 + b) inside the map.
template <typename F>
__device__ __forceinline__ void forEachTap(int i, int j, const Dims &d, F tap) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    int ym = i * d.sh - 1 + a;
    if (ym < 0 || ym >= d.hm)
      continue;
#pragma unroll
    for (int b = 0; b < 3; ++b) {
      int xm = j * d.sw - 1 + b;
      if (xm >= 0 && xm < d.wm)
        tap(a * 3 + b, ym, xm);
    }
  }
}

/// The transpose of forEachTap: reader(tap, i, j) for each blur output (i, j)
/// whose tap reads map pixel (y, x).
template <typename F>
__device__ __forceinline__ void forEachReader(int y, int x, const Dims &d,
                                              F reader) {
  TapRange rows = tapRange(y, d.sh, d.ho), cols = tapRange(x, d.sw, d.wo);
  for (int i = rows.lo; i <= rows.hi; ++i) {
    int a = y + 1 - i * d.sh;
    for (int j = cols.lo; j <= cols.hi; ++j)
      reader(a * 3 + x + 1 - j * d.sw, i, j);
  }
}

/// The input pixels (y, x) of the max-pool window at map pixel (ym, xm), in
/// max_pool2d's order with their offset in the window, while `visit` returns
/// true.
template <typename F>
__device__ __forceinline__ void forEachInWindow(int ym, int xm, const Dims &d,
                                                const Pool &p, F visit) {
  for (int i = 0; i < p.kh; ++i) {
    int y = ym - p.ph + i * p.dh;
    if (y < 0 || y >= d.h)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int x = xm - p.pw + j * p.dw;
      if (x >= 0 && x < d.w && !visit(i * p.kw + j, y, x))
        return;
    }
  }
}

/// The transpose of forEachInWindow: window(offset, ym, xm) for each map
/// pixel whose window holds input pixel (y, x), as its element `offset`.
template <typename F>
__device__ __forceinline__ void
forEachWindowHolding(int y, int x, const Dims &d, const Pool &p, F window) {
  for (int i = 0; i < p.kh; ++i) {
    int ym = y + p.ph - i * p.dh;
    if (ym < 0 || ym >= d.hm)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int xm = x + p.pw - j * p.dw;
      if (xm >= 0 && xm < d.wm)
        window(i * p.kw + j, ym, xm);
    }
  }
}

//===----------------------------------------------------------------------===//
// Layouts: what a thread holds and where it reads
//===----------------------------------------------------------------------===//

/// This thread's V lanes of one activation: one plane (NCHW, V = 1) or V
/// consecutive channels of one sample (channels_last), read and written in
/// the accumulation type.
template <Layout L, typename T, int V> struct Lanes {
  T *base; ///< Lane 0 at pixel (0, 0).
  int width, channels;

  __device__ __forceinline__ int64_t offset(int y, int x) const {
    if constexpr (L == Layout::NCHW)
      return y * width + x;
    else
      return int64_t(y * width + x) * channels;
  }

  template <typename A>
  __device__ __forceinline__ void load(int y, int x, A (&v)[V]) const {
    Pack<std::remove_const_t<T>, V> pack = loadPack<V>(base + offset(y, x));
#pragma unroll
    for (int k = 0; k < V; ++k)
      v[k] = toAcc(pack.v[k]);
  }

  template <typename A>
  __device__ __forceinline__ void store(int y, int x, const A (&v)[V]) const {
    Pack<T, V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k)
      pack.v[k] = fromAcc<T>(v[k]);
    storePack<V>(base + offset(y, x), pack);
  }
};

/// NCHW: the plane's own 3x3 filter.
template <typename A> struct PlaneFilter {
  const A *taps;
  __device__ __forceinline__ A at(int tap, int) const { return taps[tap]; }
};

/// Channels-last: this block's channels of the filter in shared memory,
/// tap-major, so a thread reads its V channels of a tap as one vector and the
/// filter costs no registers.
template <typename A, int V> struct FilterTile {
  A taps[9][kWarp * V];

  __device__ void load(const A *__restrict__ filter, int channels) {
    int first = blockIdx.x * blockDim.x * V;
    int count = min(int(blockDim.x) * V, channels - first);
    int thread = threadIdx.y * blockDim.x + threadIdx.x;
    for (int k = thread; k < count * 9; k += blockDim.x * blockDim.y)
      taps[k % 9][k / 9] = filter[int64_t(first) * 9 + k];
    __syncthreads();
  }

  __device__ __forceinline__ A at(int tap, int v) const {
    return taps[tap][threadIdx.x * V + v];
  }
};

struct Launch {
  dim3 grid, block;
};

/// NCHW: tiles of up to 32 columns by rows by planes, threads along W (small
/// planes share a block).
Launch planeLaunch(int64_t planes, int64_t height, int64_t width) {
  int tx = std::min(kWarp, pow2Ceil(width));
  int ty = std::min(kThreads / tx, pow2Ceil(height));
  // blockDim.z is at most 64: tiny planes leave some rows idle.
  int tz = std::min(64, kThreads / (tx * ty));
  ty = kThreads / (tx * tz);
  return {dim3(unsigned(ceilDiv(width, tx)),
               unsigned(std::min(ceilDiv(height, ty), kMaxGridYZ)),
               unsigned(std::min(ceilDiv(planes, tz), kMaxGridYZ))),
          dim3(tx, ty, tz)};
}

/// Channels-last: tiles of up to 32 channel packs by pixels, threads along C.
Launch pixelLaunch(int64_t packs, int64_t pixels) {
  int tx = std::min(kWarp, pow2Ceil(packs));
  int ty = kThreads / tx;
  return {dim3(unsigned(ceilDiv(packs, tx)),
               unsigned(std::min(ceilDiv(pixels, ty), kMaxGridYZ))),
          dim3(tx, ty)};
}

/// Calls point(lanes, filter, y, x) for each of this thread's points of a
/// (height, width) grid laid out by planeLaunch (NCHW) or pixelLaunch
/// (channels_last). lanes(ptr, h, w) are the point's Lanes of an activation
/// with h x w planes; filter.at(tap, k) is lane k's filter tap. Plane and
/// pixel indices are 32-bit (shapeSupported), so `plane % C` and the pixel
/// split are no 64-bit divisions, which would be calls.
template <Layout L, int V, typename A, typename F>
__device__ __forceinline__ void forEachPoint(const A *__restrict__ filter,
                                             const Dims &d, int height,
                                             int width, F point) {
  if constexpr (L == Layout::NCHW) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width)
      return;
    int64_t planes = int64_t(d.n) * d.c;
    for (int64_t plane = blockIdx.z * blockDim.z + threadIdx.z; plane < planes;
         plane += int64_t(gridDim.z) * blockDim.z) {
      auto lanes = [&](auto *ptr, int h, int w) {
        using T = std::remove_pointer_t<decltype(ptr)>;
        return Lanes<L, T, 1>{ptr + plane * h * w, w, d.c};
      };
      PlaneFilter<A> f{filter + int(plane) % d.c * 9};
      for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < height;
           y += int64_t(gridDim.y) * blockDim.y)
        point(lanes, f, int(y), x);
    }
  } else {
    __shared__ FilterTile<A, V> f;
    f.load(filter, d.c);
    int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= d.c)
      return;
    int64_t pixels = int64_t(d.n) * height * width;
    for (int64_t next = blockIdx.y * blockDim.y + threadIdx.y; next < pixels;
         next += int64_t(gridDim.y) * blockDim.y) {
      int pixel = int(next);
      int x = pixel % width, rest = pixel / width;
      int n = rest / height;
      auto lanes = [&](auto *ptr, int h, int w) {
        using T = std::remove_pointer_t<decltype(ptr)>;
        return Lanes<L, T, V>{ptr + int64_t(n) * h * w * d.c + c0, w, d.c};
      };
      point(lanes, f, rest % height, x);
    }
  }
}

//===----------------------------------------------------------------------===//
// Max-pool windows
//===----------------------------------------------------------------------===//

/// max_pool2d's values at map pixel (ym, xm). NaN wins, as in max_pool2d.
template <typename In, typename A, int V>
__device__ __forceinline__ void windowMax(const In &in, int ym, int xm,
                                          const Dims &d, const Pool &p,
                                          A (&best)[V]) {
#pragma unroll
  for (int k = 0; k < V; ++k)
    best[k] = -INFINITY;
  forEachInWindow(ym, xm, d, p, [&](int, int y, int x) {
    A v[V];
    in.load(y, x, v);
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (v[k] > best[k] || isnan(v[k]))
        best[k] = v[k];
    return true;
  });
}

/// Whether the element at window offset `target` (value v0) would be
/// max_pool2d's argmax of the window at map pixel (ym, xm). aten keeps the
/// first element, then moves to each one above the running maximum or NaN;
/// so `target` wins iff every element before it is below v0 (or v0 is NaN,
/// which takes the lead where it stands) and none after it is above v0 or
/// NaN.
__device__ __forceinline__ bool beatsTarget(float e, float v0, bool before) {
  return before ? !(e < v0 || isnan(v0)) : e > v0 || isnan(e);
}
__device__ __forceinline__ bool beatsTarget(double e, double v0, bool before) {
  return before ? !(e < v0 || isnan(v0)) : e > v0 || isnan(e);
}

/// For each lane k, whether `target` wins the window at (ym, xm) (bit k of
/// the result). Stops when every lane has lost, where recomputing the argmax
/// would read the whole window: most windows are lost within a few loads.
template <typename In, typename A, int V>
__device__ __forceinline__ unsigned windowWins(const In &in, int ym, int xm,
                                               const Dims &d, const Pool &p,
                                               int target, const A (&v0)[V]) {
  constexpr unsigned kAll = (1u << V) - 1;
  unsigned lost = 0;
  forEachInWindow(ym, xm, d, p, [&](int offset, int y, int x) {
    if (offset == target)
      return true;
    A e[V];
    in.load(y, x, e);
#pragma unroll
    for (int k = 0; k < V; ++k)
      lost |= unsigned(beatsTarget(e[k], v0[k], offset < target)) << k;
    return lost != kAll;
  });
  return ~lost & kAll;
}

//===----------------------------------------------------------------------===//
// Kernels: blur, or max pool then blur, for either layout
//===----------------------------------------------------------------------===//

template <typename T, int V, Layout L, bool WithMaxPool>
__global__ void blurForwardKernel(const T *__restrict__ in, T *__restrict__ out,
                                  const acc_t<T> *__restrict__ filter, Dims d,
                                  Pool p) {
  using A = acc_t<T>;
  forEachPoint<L, V>(filter, d, d.ho, d.wo,
                     [&](auto lanes, const auto &f, int i, int j) {
                       auto src = lanes(in, d.h, d.w);
                       A acc[V] = {};
                       forEachTap(i, j, d, [&](int tap, int ym, int xm) {
                         A v[V];
                         if constexpr (WithMaxPool)
                           windowMax(src, ym, xm, d, p, v);
                         else
                           src.load(ym, xm, v);
#pragma unroll
                         for (int k = 0; k < V; ++k)
                           acc[k] += f.at(tap, k) * v[k];
                       });
                       lanes(out, d.ho, d.wo).store(i, j, acc);
                     });
}

/// Gathers: each input pixel sums the blur taps that read it (through the
/// windows it is the argmax of, with the max pool).
template <typename T, int V, Layout L, bool WithMaxPool>
__global__ void
blurBackwardKernel(const T *__restrict__ gradOut, const T *__restrict__ in,
                   T *__restrict__ gradIn, const acc_t<T> *__restrict__ filter,
                   Dims d, Pool p) {
  using A = acc_t<T>;
  forEachPoint<L, V>(
      filter, d, d.h, d.w, [&](auto lanes, const auto &f, int y, int x) {
        auto go = lanes(gradOut, d.ho, d.wo);
        // The blur's input gradient at map pixel (ym, xm).
        auto gather = [&](int ym, int xm, A(&g)[V]) {
          forEachReader(ym, xm, d, [&](int tap, int i, int j) {
            A v[V];
            go.load(i, j, v);
#pragma unroll
            for (int k = 0; k < V; ++k)
              g[k] += f.at(tap, k) * v[k];
          });
        };
        A acc[V] = {};
        if constexpr (!WithMaxPool) {
          gather(y, x, acc);
        } else {
          auto src = lanes(in, d.h, d.w);
          A v0[V];
          src.load(y, x, v0);
          forEachWindowHolding(y, x, d, p, [&](int offset, int ym, int xm) {
            unsigned wins = windowWins(src, ym, xm, d, p, offset, v0);
            if (!wins)
              return;
            A g[V] = {};
            gather(ym, xm, g);
#pragma unroll
            for (int k = 0; k < V; ++k)
              if (wins >> k & 1u)
                acc[k] += g[k];
          });
        }
        lanes(gradIn, d.h, d.w).store(y, x, acc);
      });
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// Calls f(std::integral_constant<int, V>) with the widest pack the channel
/// count and every pointer allow.
template <typename T, typename F>
cudaError_t withPack(int64_t channels, std::initializer_list<const void *> ptrs,
                     F &&f) {
  constexpr int V = kPack<T>;
  bool vector = channels % V == 0;
  for (const void *ptr : ptrs)
    vector = vector && isAligned(ptr, sizeof(T) * V);
  if (vector)
    return f(std::integral_constant<int, V>{});
  return f(std::integral_constant<int, 1>{});
}

bool geometryValid(Shape in, Stride2d s) {
  return shapeSupported(in) && in.h >= 1 && in.w >= 1 && s.h >= 1 && s.w >= 1 &&
         fits31(s.h) && fits31(s.w);
}

bool poolValid(Shape in, const MaxPool &p, int64_t hm, int64_t wm) {
  // max_pool2d's own limit on padding is the op's to check; a window with no
  // input element would just never win.
  return p.kernelH >= 1 && p.kernelW >= 1 && p.dilationH >= 1 &&
         p.dilationW >= 1 && p.padH >= 0 && p.padW >= 0 && hm >= 1 && wm >= 1 &&
         fits31(hm * wm) && fits31(in.n * hm * wm) &&
         fits31(p.kernelH * p.kernelW) && fits31(p.dilationH * p.kernelH) &&
         fits31(p.dilationW * p.kernelW);
}

Pool makePool(const MaxPool &p) {
  return {int(p.kernelH), int(p.kernelW),   int(p.padH),
          int(p.padW),    int(p.dilationH), int(p.dilationW)};
}

/// The kernel's pointer type for an untyped buffer.
template <typename T> const T *typed(const void *p) {
  return static_cast<const T *>(p);
}
template <typename T> T *typed(void *p) { return static_cast<T *>(p); }

/// The sizes of a blur problem, behind the max pool when WithMaxPool, or false
/// where the kernels cannot take it.
template <bool WithMaxPool>
bool blurDims(Shape in, Stride2d stride, const MaxPool &pool, Dims &d,
              Pool &p) {
  if (!geometryValid(in, stride))
    return false;
  int64_t hm = in.h, wm = in.w;
  p = Pool{};
  if constexpr (WithMaxPool) {
    hm = maxPoolSize(in.h, pool.kernelH, pool.padH, pool.dilationH);
    wm = maxPoolSize(in.w, pool.kernelW, pool.padW, pool.dilationW);
    if (!poolValid(in, pool, hm, wm))
      return false;
    p = makePool(pool);
  }
  d = makeDims(in, hm, wm, stride);
  return true;
}

/// Runs blurForwardKernel, or blurBackwardKernel, on the activations `ptrs`:
/// over the points of the output (or of the input, for backward) per plane
/// (NCHW) or per sample (channels_last, with the widest channel pack that
/// all `ptrs` allow).
template <bool Backward, bool WithMaxPool, typename... Ptrs>
cudaError_t launchBlur(DType dtype, Layout layout, Shape in, Stride2d stride,
                       const MaxPool &pool, const void *filter,
                       cudaStream_t stream, Ptrs... ptrs) {
  Dims d;
  Pool p;
  if (!blurDims<WithMaxPool>(in, stride, pool, d, p))
    return cudaErrorInvalidValue;
  if (in.n == 0 || in.c == 0)
    return cudaSuccess;
  int64_t rows = Backward ? d.h : d.ho, cols = Backward ? d.w : d.wo;
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto run = [&](auto pack, auto layoutTag, Launch l) {
      constexpr int V = decltype(pack)::value;
      constexpr Layout L = decltype(layoutTag)::value;
      auto kernel = [] {
        if constexpr (Backward)
          return blurBackwardKernel<T, V, L, WithMaxPool>;
        else
          return blurForwardKernel<T, V, L, WithMaxPool>;
      }();
      return launch(kernel, l.grid, l.block, stream, typed<T>(ptrs)...,
                    typed<acc_t<T>>(filter), d, p);
    };
    if (layout == Layout::NCHW)
      return run(std::integral_constant<int, 1>{},
                 std::integral_constant<Layout, Layout::NCHW>{},
                 planeLaunch(in.n * in.c, rows, cols));
    return withPack<T>(in.c, {ptrs...}, [&](auto pack) {
      return run(pack, std::integral_constant<Layout, Layout::NHWC>{},
                 pixelLaunch(in.c / decltype(pack)::value, in.n * rows * cols));
    });
  });
}

} // namespace

cudaError_t blur(const void *input, void *output, DType dtype, Layout layout,
                 Shape in, const void *filter, Stride2d stride,
                 cudaStream_t stream) {
  return launchBlur<false, false>(dtype, layout, in, stride, MaxPool{}, filter,
                                  stream, input, output);
}

cudaError_t blurBackward(const void *gradOutput, void *gradInput, DType dtype,
                         Layout layout, Shape in, const void *filter,
                         Stride2d stride, cudaStream_t stream) {
  return launchBlur<true, false>(dtype, layout, in, stride, MaxPool{}, filter,
                                 stream, gradOutput,
                                 static_cast<const void *>(nullptr), gradInput);
}

cudaError_t maxBlur(const void *input, void *output, DType dtype, Layout layout,
                    Shape in, const void *filter, MaxPool pool, Stride2d stride,
                    cudaStream_t stream) {
  return launchBlur<false, true>(dtype, layout, in, stride, pool, filter,
                                 stream, input, output);
}

cudaError_t maxBlurBackward(const void *gradOutput, const void *input,
                            void *gradInput, DType dtype, Layout layout,
                            Shape in, const void *filter, MaxPool pool,
                            Stride2d stride, cudaStream_t stream) {
  return launchBlur<true, true>(dtype, layout, in, stride, pool, filter, stream,
                                gradOutput, input, gradInput);
}

} // namespace composer::ops::gpu
