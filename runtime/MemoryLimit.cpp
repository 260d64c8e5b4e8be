//===- MemoryLimit.cpp - Out-of-memory errors, and a CPU budget -----------===//
//
// The budget is enforced by an allocator that wraps LibTorch's CPU allocator
// from the first ScopedCpuMemoryLimit on. Threads without a limit pass
// straight through to the wrapped allocator (their DataPtrs are its own);
// under a limit each allocation carries its size and its budget, so that
// freeing it, on any thread and after the limit is gone, gives the bytes
// back to the budget it was taken from.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/MemoryLimit.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

namespace composer::runtime {

struct ScopedCpuMemoryLimit::Budget {
  int64_t limit = 0;
  std::atomic<int64_t> live{0}, peak{0};
};

namespace {

thread_local std::shared_ptr<ScopedCpuMemoryLimit::Budget> currentBudget;

/// What a limited allocation's DataPtr points to as its context.
struct Charged {
  c10::DataPtr inner;
  std::shared_ptr<ScopedCpuMemoryLimit::Budget> budget;
  int64_t bytes;
};

void releaseCharged(void *context) {
  auto *charged = static_cast<Charged *>(context);
  charged->budget->live -= charged->bytes;
  delete charged;
}

class LimitingAllocator final : public c10::Allocator {
public:
  explicit LimitingAllocator(c10::Allocator *inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t bytes) const override {
    const std::shared_ptr<ScopedCpuMemoryLimit::Budget> &budget = currentBudget;
    if (!budget)
      return inner_->allocate(bytes);
    int64_t live = budget->live += int64_t(bytes);
    if (live > budget->limit) {
      budget->live -= int64_t(bytes);
      TORCH_CHECK_WITH(OutOfMemoryError, false,
                       "out of memory: tried to allocate ", bytes,
                       " bytes with ", live - int64_t(bytes), " of ",
                       budget->limit, " bytes of the CPU memory limit in use");
    }
    int64_t peak = budget->peak;
    while (live > peak && !budget->peak.compare_exchange_weak(peak, live)) {
    }
    c10::DataPtr inner = inner_->allocate(bytes);
    void *data = inner.get();
    c10::Device device = inner.device();
    auto *charged = new Charged{std::move(inner), budget, int64_t(bytes)};
    return {data, charged, &releaseCharged, device};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    // Limited DataPtrs have a context apart from their data, which
    // raw_allocate cannot hand out.
    return currentBudget ? nullptr : inner_->raw_deleter();
  }

private:
  c10::Allocator *inner_;
};

void installLimitingAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    static LimitingAllocator allocator(c10::GetCPUAllocator());
    // Above the default allocator's priority (0), so it stays in place.
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
  });
}

bool mentionsOutOfMemory(const std::string &what) {
  for (const char *phrase :
       {"out of memory", "not enough memory", "can't allocate memory"})
    if (what.find(phrase) != std::string::npos)
      return true;
  return false;
}

} // namespace

bool isOutOfMemory(const std::exception &error) {
  if (dynamic_cast<const c10::OutOfMemoryError *>(&error))
    return true;
  return mentionsOutOfMemory(error.what());
}

ScopedCpuMemoryLimit::ScopedCpuMemoryLimit(int64_t bytes)
    : budget_(std::make_shared<Budget>()) {
  if (bytes <= 0)
    throw std::invalid_argument("a CPU memory limit must be positive");
  if (currentBudget)
    throw std::logic_error("CPU memory limits do not nest");
  installLimitingAllocator();
  budget_->limit = bytes;
  currentBudget = budget_;
}

ScopedCpuMemoryLimit::~ScopedCpuMemoryLimit() { currentBudget.reset(); }

int64_t ScopedCpuMemoryLimit::peakBytes() const { return budget_->peak; }

} // namespace composer::runtime
