//===- MemoryLimit.h - Out-of-memory errors, and a CPU budget ---*- C++ -*-===//
//
// `device_train_microbatch_size: auto` halves the microbatch when a step runs
// out of memory. A device reports that from its allocator; on the CPU a
// ScopedCpuMemoryLimit plays the device's memory, so the same path runs (and
// is tested) without one.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_MEMORYLIMIT_H
#define COMPOSER_RUNTIME_MEMORYLIMIT_H

#include <cstdint>
#include <exception>
#include <memory>

namespace composer::runtime {

/// Whether `error` reports an allocation that failed for want of memory:
/// c10::OutOfMemoryError (CUDA's caching allocator, ScopedCpuMemoryLimit), or
/// the same error after TorchScript's interpreter or autograd rethrew it as
/// text, or the CPU allocator's own.
bool isOutOfMemory(const std::exception &error);

/// While alive, CPU allocations made on the constructing thread fail with
/// c10::OutOfMemoryError once the bytes they hold together (those still
/// alive of the ones made under this limit) would exceed `bytes`. Other
/// threads are not limited, so ranks run as threads of one test can be
/// given different budgets. Limits do not nest.
class ScopedCpuMemoryLimit {
public:
  explicit ScopedCpuMemoryLimit(int64_t bytes);
  ~ScopedCpuMemoryLimit();
  ScopedCpuMemoryLimit(const ScopedCpuMemoryLimit &) = delete;
  ScopedCpuMemoryLimit &operator=(const ScopedCpuMemoryLimit &) = delete;

  /// The largest number of bytes held at once under this limit so far.
  int64_t peakBytes() const;

  /// What allocations under the limit are charged to (MemoryLimit.cpp).
  struct Budget;

private:
  std::shared_ptr<Budget> budget_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_MEMORYLIMIT_H
