//===- ScratchBuffer.h - Reused per-thread storage --------------*- C++ -*-===//
//
// Private to runtime/data. The loader's workers decode and resample image
// after image; buffers the size of an image, allocated afresh each time,
// come from the kernel page by page (a sixth of a worker's time here). A
// thread_local ScratchBuffer keeps the largest one a thread has needed.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATA_SCRATCHBUFFER_H
#define COMPOSER_RUNTIME_DATA_SCRATCHBUFFER_H

#include <cstddef>
#include <memory>
#include <type_traits>

namespace composer::runtime::detail {

/// Storage for at least `count` Ts, uninitialized, valid until the next
/// reserve. Grows, never shrinks.
template <typename T> class ScratchBuffer {
  static_assert(std::is_trivial_v<T>, "scratch holds plain values");

public:
  T *reserve(size_t count) {
    if (count > capacity_) {
      data_.reset(new T[count]);
      capacity_ = count;
    }
    return data_.get();
  }

private:
  std::unique_ptr<T[]> data_;
  size_t capacity_ = 0;
};

} // namespace composer::runtime::detail

#endif // COMPOSER_RUNTIME_DATA_SCRATCHBUFFER_H
