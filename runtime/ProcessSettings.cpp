//===- ProcessSettings.cpp - CPU settings a training process wants --------===//
//
// Host memory: every training step frees and reallocates the same activation
// buffers. glibc returns large blocks to the kernel (mmap/munmap, heap
// trimming), so each step pays page faults for all of them again: 2-3x the step
// time of a small CNN on this machine. Keeping freed memory mapped is what
// PyTorch's CUDA caching allocator does for device memory.
//
// Denormals: late in training, small gradients and activations underflow
// into denormal floats, which x86 handles in microcode, many times slower.
// Flushing them to zero (as torch.set_flush_denormal(True) does) changes
// results only below 1e-38.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/ProcessSettings.h"

#include <ATen/Context.h>

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

void retainFreedHostMemory() {
#if defined(__GLIBC__)
  // Blocks below the threshold come from the heap instead of fresh mmaps;
  // glibc caps it at 32 MiB on 64-bit. The heap is trimmed only past 1 GiB
  // of free memory at its top.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

void flushDenormals() {
  // Threads inherit the floating-point environment of the thread that
  // creates them, so this reaches the OpenMP pool if it runs first. A CPU
  // that cannot flush computes as before.
  at::globalContext().setFlushDenormal(true);
}

} // namespace

void composer::runtime::applyTrainingProcessSettings() {
  retainFreedHostMemory();
  if (!std::getenv("COMPOSER_KEEP_DENORMALS"))
    flushDenormals();
}

/// For tools that load the runtime on demand (composer-opt's step timing).
extern "C" __attribute__((visibility("default"))) void
composerApplyTrainingProcessSettings() {
  composer::runtime::applyTrainingProcessSettings();
}
