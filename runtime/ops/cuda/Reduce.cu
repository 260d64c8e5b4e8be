//===- Reduce.cu - per-(group, channel) reductions ------------------------===//
//
// channelMean, channelDot, chunkStats and chunkGradStats are one reduction:
// for each group k of `chunk` samples and channel c, over (n in k, h, w).
// - NCHW: a group's channel is `chunk` planes of H*W contiguous elements.
//   A warp (small planes, or outputs enough to fill the GPU) or a block
//   reduces each output, threads along W.
// - channels_last: a group is a contiguous run of rows of a (N*H*W, C)
//   matrix. Threads run along C, rows are spread over lanes and warps; a
//   block reduces up to 32 channel packs.
// Lanes reduce through warp shuffles, warps through shared memory. When
// there are too few outputs to fill the GPU, each output is split across
// blocks that write partial states to a workspace, and a second kernel
// merges them in a fixed order: deterministic, no float atomics.
// Statistics use Welford's update and Chan's merge, sound where the mean is
// large against the spread (E[x^2] - E[x]^2 is not).
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace composer::ops::gpu {
namespace {

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

template <typename A> struct SumState { A sum; };

template <typename A> struct PairState { A sum0, sum1; };

template <typename A> struct WelfordState { A count, mean, m2; };

/// The fast division of the Welford update (2 ulp; its error scales the
/// update only); exact for double.
__device__ __forceinline__ float divide(float a, float b) {
  return __fdividef(a, b);
}
__device__ __forceinline__ double divide(double a, double b) { return a / b; }

template <typename A> struct MeanOp {
  using State = SumState<A>;
  static constexpr bool kTwoInputs = false;
  static constexpr bool kCentered = false;
  __device__ static State init() { return {A(0)}; }
  __device__ static void add(State &s, A, A x, A) { s.sum += x; }
  __device__ static void merge(State &s, const State &o) { s.sum += o.sum; }
  __device__ static State down(const State &s, int delta) {
    return {shuffleDown(s.sum, delta)};
  }
  __device__ static void finish(const State &s, A count, A *out0, A *,
                                int64_t o) {
    out0[o] = s.sum / count;
  }
};

template <typename A> struct DotOp : MeanOp<A> {
  using State = SumState<A>;
  static constexpr bool kTwoInputs = true;
  __device__ static void add(State &s, A dy, A x, A) { s.sum += dy * x; }
  __device__ static void finish(const State &s, A, A *out0, A *, int64_t o) {
    out0[o] = s.sum;
  }
};

template <typename A> struct StatsOp {
  using State = WelfordState<A>;
  static constexpr bool kTwoInputs = false;
  static constexpr bool kCentered = false;
  __device__ static State init() { return {A(0), A(0), A(0)}; }
  __device__ static void add(State &s, A, A x, A) {
    s.count += 1;
    A delta = x - s.mean;
    s.mean += divide(delta, s.count);
    s.m2 += delta * (x - s.mean);
  }
  __device__ static void merge(State &s, const State &o) {
    if (o.count == 0)
      return;
    if (s.count == 0) {
      s = o;
      return;
    }
    A count = s.count + o.count;
    A delta = o.mean - s.mean;
    A weight = divide(o.count, count);
    s.mean += delta * weight;
    s.m2 += o.m2 + delta * delta * s.count * weight;
    s.count = count;
  }
  __device__ static State down(const State &s, int delta) {
    return {shuffleDown(s.count, delta), shuffleDown(s.mean, delta),
            shuffleDown(s.m2, delta)};
  }
  __device__ static void finish(const State &s, A, A *out0, A *out1,
                                int64_t o) {
    // An empty group has no mean, as aten's mean of nothing.
    out0[o] = s.count > 0 ? s.mean : A(NAN);
    out1[o] = s.m2 / s.count;
  }
};

template <typename A> struct GradStatsOp {
  using State = PairState<A>;
  static constexpr bool kTwoInputs = true;
  static constexpr bool kCentered = true;
  __device__ static State init() { return {A(0), A(0)}; }
  __device__ static void add(State &s, A dy, A x, A center) {
    s.sum0 += dy;
    s.sum1 += dy * (x - center);
  }
  __device__ static void merge(State &s, const State &o) {
    s.sum0 += o.sum0;
    s.sum1 += o.sum1;
  }
  __device__ static State down(const State &s, int delta) {
    return {shuffleDown(s.sum0, delta), shuffleDown(s.sum1, delta)};
  }
  __device__ static void finish(const State &s, A, A *out0, A *out1,
                                int64_t o) {
    out0[o] = s.sum0;
    out1[o] = s.sum1;
  }
};

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

/// How a reduction is laid out on the GPU; a pure function of the problem
/// and the device, so the workspace query and the launch agree.
struct Plan {
  int n, c, hw, chunk, groups;
  /// Blocks (or warps) that share one output, merged by finalize.
  int splits;
  /// NCHW: a warp per (output, split) instead of a block.
  bool warpPerItem;
  /// channels_last: threads along C (packs) and along rows; tiles of
  /// channels (gridDim.y).
  int tx, ty, tiles;

  __host__ __device__ int64_t outputs() const { return int64_t(groups) * c; }
  __host__ __device__ int64_t workspaceStates() const {
    return splits > 1 ? outputs() * splits : 0;
  }
};

constexpr int kMaxSplits = 64;
/// Elements each thread should at least reduce before a split pays.
constexpr int kMinPerThread = 16;

/// V: the pack size of the pair of input types (pack of the wider one).
template <typename Tdy, typename Tx>
constexpr int kPairPack = std::min(kPack<Tdy>, kPack<Tx>);

/// Tiles channels_last's channels in packs of `pack`, up to 32 packs a
/// block.
bool tileChannels(Plan &plan, int pack) {
  int64_t packs = ceilDiv(plan.c, pack);
  plan.tx = std::min(kWarp, pow2Ceil(packs));
  plan.ty = kThreads / plan.tx;
  plan.tiles = int(std::min(ceilDiv(packs, plan.tx), kMaxGridYZ + 1));
  return plan.tiles <= kMaxGridYZ;
}

bool makePlan(Layout layout, Shape s, int64_t chunk, int pack, Plan &plan) {
  if (!shapeSupported(s) || chunk < 1)
    return false;
  chunk = std::min(chunk, std::max<int64_t>(s.n, 1));
  plan.n = int(s.n);
  plan.c = int(s.c);
  plan.hw = int(s.h * s.w);
  plan.chunk = int(chunk);
  plan.groups = int(ceilDiv(s.n, chunk));
  plan.splits = 1;
  plan.warpPerItem = false;
  plan.tx = plan.ty = plan.tiles = 1;
  // Enough resident blocks of kThreads to fill every multiprocessor.
  int64_t targetBlocks = 4 * int64_t(multiprocessorCount());
  int64_t perOutput = chunk * plan.hw;
  if (layout == Layout::NCHW) {
    constexpr int kWarpsPerBlock = kThreads / kWarp;
    if (perOutput <= 4096 || plan.outputs() >= targetBlocks * kWarpsPerBlock) {
      plan.warpPerItem = true;
      return true;
    }
    int64_t most = perOutput / (int64_t(kThreads) * pack * kMinPerThread);
    plan.splits =
        int(std::clamp<int64_t>(ceilDiv(targetBlocks, plan.outputs()), 1,
                                std::clamp<int64_t>(most, 1, kMaxSplits)));
    return true;
  }
  if (!tileChannels(plan, pack))
    return false;
  int64_t base = int64_t(plan.groups) * plan.tiles;
  int64_t most = perOutput / (int64_t(plan.ty) * kMinPerThread);
  plan.splits =
      int(std::clamp<int64_t>(ceilDiv(targetBlocks, base), 1,
                              std::clamp<int64_t>(most, 1, kMaxSplits)));
  return fits31(base * plan.splits);
}

/// Samples [n0, n1) of group g.
struct GroupRange {
  int n0, n1;
};

__device__ __forceinline__ GroupRange groupRange(const Plan &p, int g) {
  int n0 = g * p.chunk;
  return {n0, min(p.n, n0 + p.chunk)};
}

/// Part `split` of [0, length) in `splits` parts.
__device__ __forceinline__ int64_t splitPoint(int64_t length, int split,
                                              int splits) {
  return length * split / splits;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <class Op, typename Tdy, typename Tx, int V>
__device__ __forceinline__ void
addPack(typename Op::State &s, const Tdy *__restrict__ dy,
        const Tx *__restrict__ x, int64_t offset, acc_t<Tx> center) {
  Pack<Tx, V> xs = loadPack<V>(x + offset);
  if constexpr (Op::kTwoInputs) {
    Pack<Tdy, V> dys = loadPack<V>(dy + offset);
#pragma unroll
    for (int k = 0; k < V; ++k)
      Op::add(s, toAcc(dys.v[k]), toAcc(xs.v[k]), center);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      Op::add(s, 0, toAcc(xs.v[k]), center);
  }
}

/// NCHW: one warp or one block per (output, split) item.
template <class Op, typename Tdy, typename Tx, int V>
__global__ void reduceNchw(const Tdy *__restrict__ dy, const Tx *__restrict__ x,
                           const acc_t<Tx> *__restrict__ center, Plan p,
                           acc_t<Tx> *__restrict__ out0,
                           acc_t<Tx> *__restrict__ out1,
                           typename Op::State *__restrict__ partial) {
  using A = acc_t<Tx>;
  using State = typename Op::State;
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  int64_t item = p.warpPerItem ? int64_t(blockIdx.x) * (kThreads / kWarp) + warp
                               : int64_t(blockIdx.x);
  int tid = p.warpPerItem ? lane : int(threadIdx.x);
  int step = p.warpPerItem ? kWarp : kThreads;
  bool active = item < p.outputs() * p.splits;
  int o = int(item / p.splits), split = int(item % p.splits);
  int g = o / p.c, c = o % p.c;
  GroupRange r = groupRange(p, g);

  State s = Op::init();
  if (active) {
    A center0 = Op::kCentered ? center[o] : A(0);
    // Packs never straddle planes: V divides H*W.
    int64_t packs = int64_t(r.n1 - r.n0) * p.hw / V;
    int begin = int(splitPoint(packs, split, p.splits));
    int end = int(splitPoint(packs, split + 1, p.splits));
    for (int k = begin + tid; k < end; k += step) {
      int e = k * V;
      int plane = e / p.hw;
      int64_t offset =
          (int64_t(r.n0 + plane) * p.c + c) * p.hw + (e - plane * p.hw);
      addPack<Op, Tdy, Tx, V>(s, dy, x, offset, center0);
    }
  }
  for (int delta = kWarp / 2; delta > 0; delta /= 2)
    Op::merge(s, Op::down(s, delta));
  if (!p.warpPerItem) {
    __shared__ State warps[kThreads / kWarp];
    if (lane == 0)
      warps[warp] = s;
    __syncthreads();
    s = warps[0];
    for (int w = 1; w < kThreads / kWarp; ++w)
      Op::merge(s, warps[w]);
  }
  if (!active || tid != 0)
    return;
  if (p.splits == 1)
    Op::finish(s, A(r.n1 - r.n0) * p.hw, out0, out1, o);
  else
    partial[item] = s;
}

/// channels_last: block (group * splits + split, channel tile); thread
/// (pack, row lane).
template <class Op, typename Tdy, typename Tx, int V>
__global__ void reduceNhwc(const Tdy *__restrict__ dy, const Tx *__restrict__ x,
                           const acc_t<Tx> *__restrict__ center, Plan p,
                           acc_t<Tx> *__restrict__ out0,
                           acc_t<Tx> *__restrict__ out1,
                           typename Op::State *__restrict__ partial) {
  using A = acc_t<Tx>;
  using State = typename Op::State;
  int g = blockIdx.x / p.splits, split = blockIdx.x % p.splits;
  int c0 = (blockIdx.y * p.tx + threadIdx.x) * V;
  bool active = c0 < p.c;
  GroupRange r = groupRange(p, g);

  State s[V];
#pragma unroll
  for (int k = 0; k < V; ++k)
    s[k] = Op::init();
  if (active) {
    A centers[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      centers[k] = Op::kCentered ? center[int64_t(g) * p.c + c0 + k] : A(0);
    int64_t first = int64_t(r.n0) * p.hw;
    int64_t rows = int64_t(r.n1 - r.n0) * p.hw;
    int64_t end = first + splitPoint(rows, split + 1, p.splits);
    for (int64_t row = first + splitPoint(rows, split, p.splits) + threadIdx.y;
         row < end; row += p.ty) {
      int64_t offset = row * p.c + c0;
      Pack<Tx, V> xs = loadPack<V>(x + offset);
      if constexpr (Op::kTwoInputs) {
        Pack<Tdy, V> dys = loadPack<V>(dy + offset);
#pragma unroll
        for (int k = 0; k < V; ++k)
          Op::add(s[k], toAcc(dys.v[k]), toAcc(xs.v[k]), centers[k]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
          Op::add(s[k], 0, toAcc(xs.v[k]), centers[k]);
      }
    }
  }
  // Lanes tx apart hold the same channels: shuffle rows together within the
  // warp, then merge the warps through shared memory.
  for (int delta = kWarp / 2; delta >= p.tx; delta /= 2)
#pragma unroll
    for (int k = 0; k < V; ++k)
      Op::merge(s[k], Op::down(s[k], delta));
  constexpr int kWarps = kThreads / kWarp;
  __shared__ State warps[kWarps][kWarp * V];
  int linear = threadIdx.y * p.tx + threadIdx.x;
  if (linear % kWarp < p.tx)
#pragma unroll
    for (int k = 0; k < V; ++k)
      warps[linear / kWarp][threadIdx.x * V + k] = s[k];
  __syncthreads();
  if (threadIdx.y != 0 || !active)
    return;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    State t = warps[0][threadIdx.x * V + k];
    for (int w = 1; w < kWarps; ++w)
      Op::merge(t, warps[w][threadIdx.x * V + k]);
    int64_t o = int64_t(g) * p.c + c0 + k;
    if (p.splits == 1)
      Op::finish(t, A(r.n1 - r.n0) * p.hw, out0, out1, o);
    else
      partial[o * p.splits + split] = t;
  }
}

/// Merges each output's split partial states in split order.
template <class Op, typename A>
__global__ void finalize(const typename Op::State *__restrict__ partial, Plan p,
                         A *__restrict__ out0, A *__restrict__ out1) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       o < p.outputs(); o += int64_t(gridDim.x) * blockDim.x) {
    typename Op::State s = partial[o * p.splits];
    for (int split = 1; split < p.splits; ++split)
      Op::merge(s, partial[o * p.splits + split]);
    GroupRange r = groupRange(p, int(o / p.c));
    Op::finish(s, A(r.n1 - r.n0) * p.hw, out0, out1, o);
  }
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

size_t stateBytes(Reduction kind, bool isDouble) {
  size_t scalar = isDouble ? sizeof(double) : sizeof(float);
  switch (kind) {
  case Reduction::Mean:
  case Reduction::Dot:
    return scalar;
  case Reduction::GradStats:
    return 2 * scalar;
  case Reduction::Stats:
    return 3 * scalar;
  }
  return 0;
}

template <class Op, typename Tdy, typename Tx>
cudaError_t launchReduce(const Tdy *dy, const Tx *x, Layout layout, Shape s,
                         const Plan &p, const acc_t<Tx> *center,
                         acc_t<Tx> *out0, acc_t<Tx> *out1, void *workspace,
                         size_t workspaceBytes, cudaStream_t stream) {
  using State = typename Op::State;
  auto *partial = static_cast<State *>(workspace);
  if (size_t(p.workspaceStates()) * sizeof(State) > workspaceBytes)
    return cudaErrorInvalidValue;
  constexpr int V = kPairPack<Tdy, Tx>;
  bool vector = isAligned(x, sizeof(Tx) * V) &&
                (!Op::kTwoInputs || isAligned(dy, sizeof(Tdy) * V));
  cudaError_t err;
  if (layout == Layout::NCHW) {
    int64_t items = p.outputs() * p.splits;
    unsigned blocks =
        unsigned(p.warpPerItem ? ceilDiv(items, kThreads / kWarp) : items);
    if (vector && p.hw % V == 0)
      err = launch(reduceNchw<Op, Tdy, Tx, V>, blocks, kThreads, stream, dy, x,
                   center, p, out0, out1, partial);
    else
      err = launch(reduceNchw<Op, Tdy, Tx, 1>, blocks, kThreads, stream, dy, x,
                   center, p, out0, out1, partial);
  } else {
    // The plan's splits stand; its tiles are redone for the pack in use.
    Plan q = p;
    int pack = vector && s.c % V == 0 ? V : 1;
    if (!tileChannels(q, pack))
      return cudaErrorInvalidValue;
    dim3 grid(unsigned(q.groups * q.splits), unsigned(q.tiles));
    dim3 block(q.tx, q.ty);
    if (pack == V)
      err = launch(reduceNhwc<Op, Tdy, Tx, V>, grid, block, stream, dy, x,
                   center, q, out0, out1, partial);
    else
      err = launch(reduceNhwc<Op, Tdy, Tx, 1>, grid, block, stream, dy, x,
                   center, q, out0, out1, partial);
  }
  if (err != cudaSuccess || p.splits == 1)
    return err;
  int64_t outputs = p.outputs();
  unsigned blocks = unsigned(
      std::min<int64_t>(ceilDiv(outputs, kThreads), 4 * multiprocessorCount()));
  return launch(finalize<Op, acc_t<Tx>>, blocks, kThreads, stream, partial, p,
                out0, out1);
}

/// The pack size the plan assumes: that of (dy, x) when V divides the
/// packed extent (H*W for NCHW, C for channels_last), else 1. Pointer
/// alignment is left to the launch, so the workspace size only depends on
/// the problem.
template <typename Tdy, typename Tx> int planPack(Layout layout, Shape s) {
  constexpr int V = kPairPack<Tdy, Tx>;
  int64_t extent = layout == Layout::NCHW ? s.h * s.w : s.c;
  return extent % V == 0 ? V : 1;
}

/// Calls f(Tag<Tdy>, Tag<Tx>) for a supported pair of activation types.
template <typename F> cudaError_t visitPair(DType dyType, DType xType, F &&f) {
  if (dyType == xType)
    return visitDType(xType, [&](auto tag) { return f(tag, tag); });
  // Float32 dy against a low-precision x (GradStats only).
  if (dyType != DType::Float32)
    return cudaErrorInvalidValue;
  if (xType == DType::BFloat16)
    return f(Tag<float>{}, Tag<__nv_bfloat16>{});
  if (xType == DType::Float16)
    return f(Tag<float>{}, Tag<__half>{});
  return cudaErrorInvalidValue;
}

} // namespace

bool reduceSupported(Reduction kind, DType dyType, DType xType) {
  if (kind == Reduction::Mean || kind == Reduction::Stats || dyType == xType)
    return true;
  return kind == Reduction::GradStats && dyType == DType::Float32 &&
         (xType == DType::BFloat16 || xType == DType::Float16);
}

size_t reduceWorkspaceBytes(Reduction kind, DType xType, Layout layout,
                            Shape shape, int64_t chunk) {
  // Plans from x's dtype alone, as `reduce` does: the workspace size must
  // not depend on dy's dtype or on pointer alignment.
  size_t bytes = 0;
  visitDType(xType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Plan p;
    if (makePlan(layout, shape, chunk, planPack<T, T>(layout, shape), p))
      bytes = size_t(p.workspaceStates()) *
              stateBytes(kind, std::is_same_v<T, double>);
    return cudaSuccess;
  });
  return bytes;
}

cudaError_t reduce(Reduction kind, const void *dy, DType dyType, const void *x,
                   DType xType, Layout layout, Shape shape, int64_t chunk,
                   const void *center, void *out0, void *out1, void *workspace,
                   size_t workspaceBytes, cudaStream_t stream) {
  if (!reduceSupported(kind, dyType, xType))
    return cudaErrorInvalidValue;
  // One-input kinds ignore dy's dtype.
  if (kind == Reduction::Mean || kind == Reduction::Stats)
    dyType = xType;
  return visitPair(dyType, xType, [&](auto dyTag, auto xTag) {
    using Tdy = typename decltype(dyTag)::type;
    using Tx = typename decltype(xTag)::type;
    using A = acc_t<Tx>;
    Plan p;
    // Plan as reduceWorkspaceBytes did, from x's dtype alone.
    if (!makePlan(layout, shape, chunk, planPack<Tx, Tx>(layout, shape), p))
      return cudaErrorInvalidValue;
    if (p.outputs() == 0)
      return cudaSuccess;
    auto *d = static_cast<const Tdy *>(dy);
    auto *xs = static_cast<const Tx *>(x);
    auto *ctr = static_cast<const A *>(center);
    auto *o0 = static_cast<A *>(out0);
    auto *o1 = static_cast<A *>(out1);
    if (kind == Reduction::GradStats)
      return launchReduce<GradStatsOp<A>>(d, xs, layout, shape, p, ctr, o0, o1,
                                          workspace, workspaceBytes, stream);
    // Only GradStats mixes dtypes; no kernels for other mixes.
    if constexpr (std::is_same_v<Tdy, Tx>) {
      switch (kind) {
      case Reduction::Mean:
        return launchReduce<MeanOp<A>>(xs, xs, layout, shape, p, ctr, o0, o1,
                                       workspace, workspaceBytes, stream);
      case Reduction::Dot:
        return launchReduce<DotOp<A>>(d, xs, layout, shape, p, ctr, o0, o1,
                                      workspace, workspaceBytes, stream);
      case Reduction::Stats:
        return launchReduce<StatsOp<A>>(xs, xs, layout, shape, p, ctr, o0, o1,
                                        workspace, workspaceBytes, stream);
      case Reduction::GradStats:
        break;
      }
    }
    return cudaErrorInvalidValue;
  });
}

} // namespace composer::ops::gpu
