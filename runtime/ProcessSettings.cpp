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

#include "composer/Runtime/Trainer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace composer::runtime {

bool retainFreedHostMemory() {
#if defined(__GLIBC__)
  // Blocks below the threshold come from the heap instead of fresh mmaps;
  // glibc caps it at 32 MiB on 64-bit. The heap is trimmed only past 1 GiB
  // of free memory at its top.
  bool ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  ok &= mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  ok &= mallopt(M_TOP_PAD, 64 << 20) == 1;
  return ok;
#else
  return false;
#endif
}

bool flushDenormals() {
  // Threads inherit the floating-point environment of the thread that
  // creates them, so this reaches the OpenMP pool if it runs first.
  return at::globalContext().setFlushDenormal(true);
}

} // namespace composer::runtime
