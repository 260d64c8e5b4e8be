//===- CudaEmulation.h - run the CUDA kernels on the host -------*- C++ -*-===//
//
// For tests on machines without a GPU: the kernels of runtime/ops/cuda are
// compiled as C++ (with COMPOSER_CUDA_EMULATION defined and this header
// force-included) and each launch runs on the host, one block after
// another, each CUDA thread a fiber (ucontext) of one OS thread. Barriers
// and warp shuffles switch fibers, so block reductions run as written; the
// index arithmetic, tiling, splits and packing of the real kernels are what
// is tested. Not emulated: memory-model races, shared-memory limits, timing.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_UNITTESTS_RUNTIME_CUDAEMULATION_H
#define COMPOSER_UNITTESTS_RUNTIME_CUDAEMULATION_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <ucontext.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

// Static locals: one instance for the fibers of the running block. Blocks
// run one at a time; a kernel's shared memory starts as the last block left
// it, which the kernels never rely on.
#undef __shared__
#define __shared__ static

inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

using std::isnan;
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline float __fdividef(float a, float b) { return a / b; }

namespace cudaEmulation {

/// What multiprocessorCount() reports, so tests can steer reduction splits.
inline int multiprocessorCount = 4;
/// Launches so far (a test can check that a path launched at all).
inline int64_t launches = 0;

constexpr int kWarp = 32;
constexpr size_t kStackBytes = 256 * 1024;

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  uint3 index;
  int warp = 0;
  bool done = false;
  /// A barrier generation the fiber waits to see change, if any.
  const unsigned *waitOn = nullptr;
  unsigned waitFor = 0;
};

/// A barrier over a group of fibers whose members may exit early (exited
/// fibers stop counting, as exited CUDA threads do).
struct Barrier {
  int live = 0, arrived = 0;
  unsigned generation = 0;

  void releaseIfComplete() {
    if (arrived > 0 && arrived == live) {
      arrived = 0;
      ++generation;
    }
  }
};

struct Scheduler {
  ucontext_t main;
  std::vector<Fiber> fibers;
  Fiber *current = nullptr;
  Barrier block;
  std::vector<Barrier> warps;
  /// Per warp, the values of a shuffle in flight, one slot per lane.
  std::vector<std::array<uint64_t, kWarp>> slots;
  const std::function<void()> *body = nullptr;

  static Scheduler &get() {
    static Scheduler scheduler;
    return scheduler;
  }

  static void trampoline() {
    Scheduler &s = get();
    (*s.body)();
    Fiber &f = *s.current;
    f.done = true;
    --s.block.live;
    s.block.releaseIfComplete();
    --s.warps[f.warp].live;
    s.warps[f.warp].releaseIfComplete();
    swapcontext(&f.context, &s.main);
  }

  void wait(Barrier &b) {
    ++b.arrived;
    unsigned generation = b.generation;
    b.releaseIfComplete();
    if (b.generation != generation)
      return;
    current->waitOn = &b.generation;
    current->waitFor = generation;
    swapcontext(&current->context, &main);
  }

  void runBlock(const std::function<void()> &kernel, uint3 index) {
    int count = int(blockDim.x * blockDim.y * blockDim.z);
    if (int(fibers.size()) < count)
      fibers.resize(count);
    int warpCount = (count + kWarp - 1) / kWarp;
    warps.assign(warpCount, Barrier());
    slots.resize(warpCount);
    block = Barrier();
    block.live = count;
    body = &kernel;
    for (int t = 0; t < count; ++t) {
      Fiber &f = fibers[t];
      if (!f.stack)
        f.stack.reset(new char[kStackBytes]);
      f.index = {unsigned(t % blockDim.x),
                 unsigned(t / blockDim.x % blockDim.y),
                 unsigned(t / (blockDim.x * blockDim.y))};
      f.warp = t / kWarp;
      f.done = false;
      f.waitOn = nullptr;
      ++warps[f.warp].live;
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = f.stack.get();
      f.context.uc_stack.ss_size = kStackBytes;
      f.context.uc_link = nullptr;
      makecontext(&f.context, &Scheduler::trampoline, 0);
    }
    blockIdx = index;
    for (int remaining = count; remaining > 0;) {
      bool progress = false;
      for (int t = 0; t < count; ++t) {
        Fiber &f = fibers[t];
        if (f.done || (f.waitOn && *f.waitOn == f.waitFor))
          continue;
        f.waitOn = nullptr;
        current = &f;
        threadIdx = f.index;
        swapcontext(&main, &f.context);
        progress = true;
        if (f.done)
          --remaining;
      }
      if (!progress) {
        std::fprintf(stderr, "cudaEmulation: deadlock (a barrier some "
                             "threads of the block never reach)\n");
        std::abort();
      }
    }
  }
};

template <typename... Params, typename... Args>
cudaError_t run(void (*kernel)(Params...), dim3 grid, dim3 block,
                Args... args) {
  ++launches;
  // CUDA's own limits, so a launch the GPU would refuse fails here too.
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 ||
      grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 ||
      grid.z > 65535)
    return cudaErrorInvalidConfiguration;
  gridDim = grid;
  blockDim = block;
  std::function<void()> body = [&] { kernel(args...); };
  Scheduler &s = Scheduler::get();
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x)
        s.runBlock(body, uint3{x, y, z});
  return cudaSuccess;
}

} // namespace cudaEmulation

inline void __syncthreads() {
  cudaEmulation::Scheduler &s = cudaEmulation::Scheduler::get();
  s.wait(s.block);
}

template <typename T> T __shfl_down_sync(unsigned, T value, int delta) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "one slot per lane");
  cudaEmulation::Scheduler &s = cudaEmulation::Scheduler::get();
  int warp = s.current->warp;
  int lane = int(s.current - &s.fibers[warp * cudaEmulation::kWarp]);
  auto &slots = s.slots[warp];
  std::memcpy(&slots[lane], &value, sizeof(T));
  s.wait(s.warps[warp]);
  T result = value;
  if (lane + delta < cudaEmulation::kWarp)
    std::memcpy(&result, &slots[lane + delta], sizeof(T));
  // Nobody overwrites a slot before every lane has read.
  s.wait(s.warps[warp]);
  return result;
}

#endif // COMPOSER_UNITTESTS_RUNTIME_CUDAEMULATION_H
