//===- Blur.cu - blur and max-pool+blur, forward and backward -------------===//
//
// Layouts map threads so that a warp reads consecutive addresses: NCHW puts
// threads along W (one output pixel each, tiles of several planes when
// planes are small), channels_last puts them along C (a pack of up to 16
// bytes of channels each, pixels across warps). Backward passes are gathers
// (each input pixel sums what reads it), so no atomics and deterministic
// sums. The max-pool map is never stored: every blur tap recomputes its
// window from the input, which the L1 cache mostly serves.
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
// Max-pool windows
//===----------------------------------------------------------------------===//

/// max_pool2d's value at map pixel (ym, xm) of one plane; `at(offset)` loads
/// an input element by its plane offset. NaN wins, as in max_pool2d.
template <typename A, typename Load>
__device__ __forceinline__ A windowMax(int ym, int xm, const Dims &d,
                                       const Pool &p, Load at) {
  A best = -INFINITY;
  for (int i = 0; i < p.kh; ++i) {
    int y = ym - p.ph + i * p.dh;
    if (y < 0 || y >= d.h)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int x = xm - p.pw + j * p.dw;
      if (x < 0 || x >= d.w)
        continue;
      A v = at(y * d.w + x);
      if (v > best || isnan(v))
        best = v;
    }
  }
  return best;
}

/// Whether the element at window offset `target` (value v0) would be
/// max_pool2d's argmax of the window at map pixel (ym, xm). aten keeps the
/// first element, then moves to each one above the running maximum or NaN;
/// so `target` wins iff every element before it is below v0 (or v0 is NaN,
/// which takes the lead where it stands) and none after it is above v0 or
/// NaN. Stops at the first element against, where recomputing the argmax
/// would read the whole window: most windows are lost within a few loads.
__device__ __forceinline__ bool beatsTarget(float e, float v0, bool before) {
  return before ? !(e < v0 || isnan(v0)) : e > v0 || isnan(e);
}
__device__ __forceinline__ bool beatsTarget(double e, double v0, bool before) {
  return before ? !(e < v0 || isnan(v0)) : e > v0 || isnan(e);
}

template <typename A, typename Load>
__device__ __forceinline__ bool windowWins(int ym, int xm, const Dims &d,
                                           const Pool &p, int target, A v0,
                                           Load at) {
  for (int i = 0; i < p.kh; ++i) {
    int y = ym - p.ph + i * p.dh;
    if (y < 0 || y >= d.h)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int x = xm - p.pw + j * p.dw;
      int offset = i * p.kw + j;
      if (x < 0 || x >= d.w || offset == target)
        continue;
      if (beatsTarget(at(y * d.w + x), v0, offset < target))
        return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// NCHW: one thread per pixel, threads along W
//===----------------------------------------------------------------------===//

/// Walks this thread's (plane, row, column) points of a (planes, height,
/// width) grid laid out by planeLaunch: column from x, rows and planes
/// grid-strided over y and z. Plane indices are 32-bit (shapeSupported), so
/// `plane % C` is no 64-bit division, which would be a call.
template <typename F>
__device__ __forceinline__ void forEachPlanePixel(int64_t planes, int height,
                                                  int width, F f) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= width)
    return;
  for (int64_t plane = blockIdx.z * blockDim.z + threadIdx.z; plane < planes;
       plane += int64_t(gridDim.z) * blockDim.z)
    for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < height;
         y += int64_t(gridDim.y) * blockDim.y)
      f(int(plane), int(y), x);
}

struct Launch {
  dim3 grid, block;
};

/// Tiles of up to 32 columns by rows by planes: small planes share a block.
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

template <typename T>
__global__ void blurNchw(const T *__restrict__ in, T *__restrict__ out,
                         const acc_t<T> *__restrict__ filter, Dims d) {
  using A = acc_t<T>;
  forEachPlanePixel(
      int64_t(d.n) * d.c, d.ho, d.wo, [&](int plane, int i, int j) {
        const A *f = filter + (plane % d.c) * 9;
        const T *src = in + int64_t(plane) * d.h * d.w;
        A acc = 0;
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          int y = i * d.sh - 1 + a;
          if (y < 0 || y >= d.h)
            continue;
#pragma unroll
          for (int b = 0; b < 3; ++b) {
            int x = j * d.sw - 1 + b;
            if (x >= 0 && x < d.w)
              acc += f[a * 3 + b] * toAcc(src[y * d.w + x]);
          }
        }
        out[int64_t(plane) * d.ho * d.wo + i * d.wo + j] = fromAcc<T>(acc);
      });
}

/// The blur's input gradient at map pixel (y, x) of one plane.
template <typename T, typename A>
__device__ __forceinline__ A blurGatherNchw(const T *__restrict__ gradOut,
                                            const A *__restrict__ f, int y,
                                            int x, const Dims &d) {
  TapRange rows = tapRange(y, d.sh, d.ho), cols = tapRange(x, d.sw, d.wo);
  A acc = 0;
  for (int i = rows.lo; i <= rows.hi; ++i) {
    int a = y + 1 - i * d.sh;
    for (int j = cols.lo; j <= cols.hi; ++j)
      acc += f[a * 3 + x + 1 - j * d.sw] * toAcc(gradOut[i * d.wo + j]);
  }
  return acc;
}

template <typename T>
__global__ void blurBackwardNchw(const T *__restrict__ gradOut,
                                 T *__restrict__ gradIn,
                                 const acc_t<T> *__restrict__ filter, Dims d) {
  forEachPlanePixel(int64_t(d.n) * d.c, d.h, d.w, [&](int plane, int y, int x) {
    auto acc = blurGatherNchw(gradOut + int64_t(plane) * d.ho * d.wo,
                              filter + (plane % d.c) * 9, y, x, d);
    gradIn[int64_t(plane) * d.h * d.w + y * d.w + x] = fromAcc<T>(acc);
  });
}

template <typename T>
__global__ void maxBlurNchw(const T *__restrict__ in, T *__restrict__ out,
                            const acc_t<T> *__restrict__ filter, Dims d,
                            Pool p) {
  using A = acc_t<T>;
  forEachPlanePixel(
      int64_t(d.n) * d.c, d.ho, d.wo, [&](int plane, int i, int j) {
        const A *f = filter + (plane % d.c) * 9;
        const T *src = in + int64_t(plane) * d.h * d.w;
        auto at = [src](int offset) { return toAcc(src[offset]); };
        A acc = 0;
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          int ym = i * d.sh - 1 + a;
          if (ym < 0 || ym >= d.hm)
            continue;
#pragma unroll
          for (int b = 0; b < 3; ++b) {
            int xm = j * d.sw - 1 + b;
            if (xm >= 0 && xm < d.wm)
              acc += f[a * 3 + b] * windowMax<A>(ym, xm, d, p, at);
          }
        }
        out[int64_t(plane) * d.ho * d.wo + i * d.wo + j] = fromAcc<T>(acc);
      });
}

template <typename T>
__global__ void
maxBlurBackwardNchw(const T *__restrict__ gradOut, const T *__restrict__ in,
                    T *__restrict__ gradIn, const acc_t<T> *__restrict__ filter,
                    Dims d, Pool p) {
  using A = acc_t<T>;
  forEachPlanePixel(int64_t(d.n) * d.c, d.h, d.w, [&](int plane, int y, int x) {
    const T *src = in + int64_t(plane) * d.h * d.w;
    const T *go = gradOut + int64_t(plane) * d.ho * d.wo;
    const A *f = filter + (plane % d.c) * 9;
    auto at = [src](int offset) { return toAcc(src[offset]); };
    A v0 = at(y * d.w + x);
    A acc = 0;
    // The windows holding (y, x) are those at (y + ph - i dh, x + pw - j dw)
    // with (y, x) as their element (i, j).
    for (int i = 0; i < p.kh; ++i) {
      int ym = y + p.ph - i * p.dh;
      if (ym < 0 || ym >= d.hm)
        continue;
      for (int j = 0; j < p.kw; ++j) {
        int xm = x + p.pw - j * p.dw;
        if (xm < 0 || xm >= d.wm)
          continue;
        if (windowWins<A>(ym, xm, d, p, i * p.kw + j, v0, at))
          acc += blurGatherNchw(go, f, ym, xm, d);
      }
    }
    gradIn[int64_t(plane) * d.h * d.w + y * d.w + x] = fromAcc<T>(acc);
  });
}

//===----------------------------------------------------------------------===//
// Channels-last: one thread per (pixel, pack of V channels), threads along C
//===----------------------------------------------------------------------===//

/// Tiles of up to 32 channel packs by pixels.
Launch pixelLaunch(int64_t packs, int64_t pixels) {
  int tx = std::min(kWarp, pow2Ceil(packs));
  int ty = kThreads / tx;
  return {dim3(unsigned(ceilDiv(packs, tx)),
               unsigned(std::min(ceilDiv(pixels, ty), kMaxGridYZ))),
          dim3(tx, ty)};
}

/// This block's channels of the filter in shared memory, tap-major, so a
/// thread reads its V channels of a tap as one vector and the filter costs
/// no registers.
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

/// Walks this thread's pixels (n, y, x) of an (N, height, width) grid laid
/// out by pixelLaunch, for its pack of channels at c0 (the caller has
/// returned if c0 is past C).
template <typename F>
__device__ __forceinline__ void forEachPixel(int n, int height, int width,
                                             F f) {
  int64_t pixels = int64_t(n) * height * width;
  for (int64_t next = blockIdx.y * blockDim.y + threadIdx.y; next < pixels;
       next += int64_t(gridDim.y) * blockDim.y) {
    // 32-bit division: shapeSupported bounds the pixel count.
    int pixel = int(next);
    int x = pixel % width;
    int rest = pixel / width;
    f(rest / height, rest % height, x);
  }
}

template <typename T, int V>
__global__ void blurNhwc(const T *__restrict__ in, T *__restrict__ out,
                         const acc_t<T> *__restrict__ filter, Dims d) {
  using A = acc_t<T>;
  __shared__ FilterTile<A, V> f;
  f.load(filter, d.c);
  int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (c0 >= d.c)
    return;
  forEachPixel(d.n, d.ho, d.wo, [&](int n, int i, int j) {
    const T *src = in + int64_t(n) * d.h * d.w * d.c + c0;
    A acc[V] = {};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      int y = i * d.sh - 1 + a;
      if (y < 0 || y >= d.h)
        continue;
#pragma unroll
      for (int b = 0; b < 3; ++b) {
        int x = j * d.sw - 1 + b;
        if (x < 0 || x >= d.w)
          continue;
        Pack<T, V> v = loadPack<V>(src + int64_t(y * d.w + x) * d.c);
#pragma unroll
        for (int k = 0; k < V; ++k)
          acc[k] += f.at(a * 3 + b, k) * toAcc(v.v[k]);
      }
    }
    Pack<T, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k)
      r.v[k] = fromAcc<T>(acc[k]);
    storePack<V>(out + ((int64_t(n) * d.ho + i) * d.wo + j) * d.c + c0, r);
  });
}

/// The blur's input gradient at map pixel (y, x) for V channels; `go` points
/// at channel c0 of sample n.
template <typename T, int V, typename A>
__device__ __forceinline__ void
blurGatherNhwc(const T *__restrict__ go, const FilterTile<A, V> &f, int y,
               int x, const Dims &d, A (&acc)[V]) {
  TapRange rows = tapRange(y, d.sh, d.ho), cols = tapRange(x, d.sw, d.wo);
  for (int i = rows.lo; i <= rows.hi; ++i) {
    int a = y + 1 - i * d.sh;
    for (int j = cols.lo; j <= cols.hi; ++j) {
      int tap = a * 3 + x + 1 - j * d.sw;
      Pack<T, V> v = loadPack<V>(go + int64_t(i * d.wo + j) * d.c);
#pragma unroll
      for (int k = 0; k < V; ++k)
        acc[k] += f.at(tap, k) * toAcc(v.v[k]);
    }
  }
}

template <typename T, int V>
__global__ void blurBackwardNhwc(const T *__restrict__ gradOut,
                                 T *__restrict__ gradIn,
                                 const acc_t<T> *__restrict__ filter, Dims d) {
  using A = acc_t<T>;
  __shared__ FilterTile<A, V> f;
  f.load(filter, d.c);
  int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (c0 >= d.c)
    return;
  forEachPixel(d.n, d.h, d.w, [&](int n, int y, int x) {
    A acc[V] = {};
    blurGatherNhwc<T, V>(gradOut + int64_t(n) * d.ho * d.wo * d.c + c0, f, y, x,
                         d, acc);
    Pack<T, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k)
      r.v[k] = fromAcc<T>(acc[k]);
    storePack<V>(gradIn + ((int64_t(n) * d.h + y) * d.w + x) * d.c + c0, r);
  });
}

/// max_pool2d's values at map pixel (ym, xm) for V channels; `src` points at
/// channel c0 of sample n.
template <typename T, int V, typename A>
__device__ __forceinline__ void windowMaxNhwc(const T *__restrict__ src, int ym,
                                              int xm, const Dims &d,
                                              const Pool &p, A (&best)[V]) {
#pragma unroll
  for (int k = 0; k < V; ++k)
    best[k] = -INFINITY;
  for (int i = 0; i < p.kh; ++i) {
    int y = ym - p.ph + i * p.dh;
    if (y < 0 || y >= d.h)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int x = xm - p.pw + j * p.dw;
      if (x < 0 || x >= d.w)
        continue;
      Pack<T, V> v = loadPack<V>(src + int64_t(y * d.w + x) * d.c);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        A e = toAcc(v.v[k]);
        if (e > best[k] || isnan(e))
          best[k] = e;
      }
    }
  }
}

/// For V channels, whether the window at (ym, xm)'s argmax is its element
/// `target` (values v0), as bit k of the result; see windowWins. Stops when
/// every channel has lost.
template <typename T, int V, typename A>
__device__ __forceinline__ unsigned
windowWinsNhwc(const T *__restrict__ src, int ym, int xm, const Dims &d,
               const Pool &p, int target, const A (&v0)[V]) {
  constexpr unsigned kAll = (1u << V) - 1;
  unsigned lost = 0;
  for (int i = 0; i < p.kh; ++i) {
    int y = ym - p.ph + i * p.dh;
    if (y < 0 || y >= d.h)
      continue;
    for (int j = 0; j < p.kw; ++j) {
      int x = xm - p.pw + j * p.dw;
      int offset = i * p.kw + j;
      if (x < 0 || x >= d.w || offset == target)
        continue;
      Pack<T, V> v = loadPack<V>(src + int64_t(y * d.w + x) * d.c);
#pragma unroll
      for (int k = 0; k < V; ++k)
        lost |= unsigned(beatsTarget(toAcc(v.v[k]), v0[k], offset < target))
                << k;
      if (lost == kAll)
        return 0;
    }
  }
  return ~lost & kAll;
}

template <typename T, int V>
__global__ void maxBlurNhwc(const T *__restrict__ in, T *__restrict__ out,
                            const acc_t<T> *__restrict__ filter, Dims d,
                            Pool p) {
  using A = acc_t<T>;
  __shared__ FilterTile<A, V> f;
  f.load(filter, d.c);
  int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (c0 >= d.c)
    return;
  forEachPixel(d.n, d.ho, d.wo, [&](int n, int i, int j) {
    const T *src = in + int64_t(n) * d.h * d.w * d.c + c0;
    A acc[V] = {};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      int ym = i * d.sh - 1 + a;
      if (ym < 0 || ym >= d.hm)
        continue;
#pragma unroll
      for (int b = 0; b < 3; ++b) {
        int xm = j * d.sw - 1 + b;
        if (xm < 0 || xm >= d.wm)
          continue;
        A m[V];
        windowMaxNhwc<T, V>(src, ym, xm, d, p, m);
#pragma unroll
        for (int k = 0; k < V; ++k)
          acc[k] += f.at(a * 3 + b, k) * m[k];
      }
    }
    Pack<T, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k)
      r.v[k] = fromAcc<T>(acc[k]);
    storePack<V>(out + ((int64_t(n) * d.ho + i) * d.wo + j) * d.c + c0, r);
  });
}

template <typename T, int V>
__global__ void
maxBlurBackwardNhwc(const T *__restrict__ gradOut, const T *__restrict__ in,
                    T *__restrict__ gradIn, const acc_t<T> *__restrict__ filter,
                    Dims d, Pool p) {
  using A = acc_t<T>;
  __shared__ FilterTile<A, V> f;
  f.load(filter, d.c);
  int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (c0 >= d.c)
    return;
  forEachPixel(d.n, d.h, d.w, [&](int n, int y, int x) {
    const T *src = in + int64_t(n) * d.h * d.w * d.c + c0;
    const T *go = gradOut + int64_t(n) * d.ho * d.wo * d.c + c0;
    Pack<T, V> here = loadPack<V>(src + int64_t(y * d.w + x) * d.c);
    A v0[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      v0[k] = toAcc(here.v[k]);
    A acc[V] = {};
    for (int i = 0; i < p.kh; ++i) {
      int ym = y + p.ph - i * p.dh;
      if (ym < 0 || ym >= d.hm)
        continue;
      for (int j = 0; j < p.kw; ++j) {
        int xm = x + p.pw - j * p.dw;
        if (xm < 0 || xm >= d.wm)
          continue;
        unsigned wins =
            windowWinsNhwc<T, V, A>(src, ym, xm, d, p, i * p.kw + j, v0);
        if (!wins)
          continue;
        A g[V] = {};
        blurGatherNhwc<T, V>(go, f, ym, xm, d, g);
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (wins >> k & 1u)
            acc[k] += g[k];
      }
    }
    Pack<T, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k)
      r.v[k] = fromAcc<T>(acc[k]);
    storePack<V>(gradIn + ((int64_t(n) * d.h + y) * d.w + x) * d.c + c0, r);
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

} // namespace

cudaError_t blur(const void *input, void *output, DType dtype, Layout layout,
                 Shape in, const void *filter, Stride2d stride,
                 cudaStream_t stream) {
  if (!geometryValid(in, stride))
    return cudaErrorInvalidValue;
  Dims d = makeDims(in, in.h, in.w, stride);
  if (in.n == 0 || in.c == 0)
    return cudaSuccess;
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto *x = static_cast<const T *>(input);
    auto *y = static_cast<T *>(output);
    auto *f = static_cast<const A *>(filter);
    if (layout == Layout::NCHW) {
      Launch l = planeLaunch(in.n * in.c, d.ho, d.wo);
      return launch(blurNchw<T>, l.grid, l.block, stream, x, y, f, d);
    }
    return withPack<T>(in.c, {x, y}, [&](auto pack) {
      constexpr int V = decltype(pack)::value;
      Launch l = pixelLaunch(in.c / V, in.n * d.ho * d.wo);
      return launch(blurNhwc<T, V>, l.grid, l.block, stream, x, y, f, d);
    });
  });
}

cudaError_t blurBackward(const void *gradOutput, void *gradInput, DType dtype,
                         Layout layout, Shape in, const void *filter,
                         Stride2d stride, cudaStream_t stream) {
  if (!geometryValid(in, stride))
    return cudaErrorInvalidValue;
  Dims d = makeDims(in, in.h, in.w, stride);
  if (in.n == 0 || in.c == 0)
    return cudaSuccess;
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto *go = static_cast<const T *>(gradOutput);
    auto *gi = static_cast<T *>(gradInput);
    auto *f = static_cast<const A *>(filter);
    if (layout == Layout::NCHW) {
      Launch l = planeLaunch(in.n * in.c, in.h, in.w);
      return launch(blurBackwardNchw<T>, l.grid, l.block, stream, go, gi, f, d);
    }
    return withPack<T>(in.c, {go, gi}, [&](auto pack) {
      constexpr int V = decltype(pack)::value;
      Launch l = pixelLaunch(in.c / V, in.n * in.h * in.w);
      return launch(blurBackwardNhwc<T, V>, l.grid, l.block, stream, go, gi, f,
                    d);
    });
  });
}

cudaError_t maxBlur(const void *input, void *output, DType dtype, Layout layout,
                    Shape in, const void *filter, MaxPool pool, Stride2d stride,
                    cudaStream_t stream) {
  int64_t hm = maxPoolSize(in.h, pool.kernelH, pool.padH, pool.dilationH);
  int64_t wm = maxPoolSize(in.w, pool.kernelW, pool.padW, pool.dilationW);
  if (!geometryValid(in, stride) || !poolValid(in, pool, hm, wm))
    return cudaErrorInvalidValue;
  Dims d = makeDims(in, hm, wm, stride);
  Pool p = makePool(pool);
  if (in.n == 0 || in.c == 0)
    return cudaSuccess;
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto *x = static_cast<const T *>(input);
    auto *y = static_cast<T *>(output);
    auto *f = static_cast<const A *>(filter);
    if (layout == Layout::NCHW) {
      Launch l = planeLaunch(in.n * in.c, d.ho, d.wo);
      return launch(maxBlurNchw<T>, l.grid, l.block, stream, x, y, f, d, p);
    }
    return withPack<T>(in.c, {x, y}, [&](auto pack) {
      constexpr int V = decltype(pack)::value;
      Launch l = pixelLaunch(in.c / V, in.n * d.ho * d.wo);
      return launch(maxBlurNhwc<T, V>, l.grid, l.block, stream, x, y, f, d, p);
    });
  });
}

cudaError_t maxBlurBackward(const void *gradOutput, const void *input,
                            void *gradInput, DType dtype, Layout layout,
                            Shape in, const void *filter, MaxPool pool,
                            Stride2d stride, cudaStream_t stream) {
  int64_t hm = maxPoolSize(in.h, pool.kernelH, pool.padH, pool.dilationH);
  int64_t wm = maxPoolSize(in.w, pool.kernelW, pool.padW, pool.dilationW);
  if (!geometryValid(in, stride) || !poolValid(in, pool, hm, wm))
    return cudaErrorInvalidValue;
  Dims d = makeDims(in, hm, wm, stride);
  Pool p = makePool(pool);
  if (in.n == 0 || in.c == 0)
    return cudaSuccess;
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto *go = static_cast<const T *>(gradOutput);
    auto *x = static_cast<const T *>(input);
    auto *gi = static_cast<T *>(gradInput);
    auto *f = static_cast<const A *>(filter);
    if (layout == Layout::NCHW) {
      Launch l = planeLaunch(in.n * in.c, in.h, in.w);
      return launch(maxBlurBackwardNchw<T>, l.grid, l.block, stream, go, x, gi,
                    f, d, p);
    }
    return withPack<T>(in.c, {go, x, gi}, [&](auto pack) {
      constexpr int V = decltype(pack)::value;
      Launch l = pixelLaunch(in.c / V, in.n * in.h * in.w);
      return launch(maxBlurBackwardNhwc<T, V>, l.grid, l.block, stream, go, x,
                    gi, f, d, p);
    });
  });
}

} // namespace composer::ops::gpu
