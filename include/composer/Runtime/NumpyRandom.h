//===- NumpyRandom.h - NumPy's default_rng, bit for bit ---------*- C++ -*-===//
//
// numpy.random.default_rng(seed): a PCG64 generator (XSL-RR output, 128-bit
// LCG) seeded through SeedSequence, and the Generator methods MosaicML
// Streaming draws its sample order with. Each method consumes the same raw
// draws as NumPy's and returns the same values, so an order computed here
// equals the one Streaming computes in Python for the same seed
// (unittests/Runtime/NumpyRandomTest.cpp checks values recorded from NumPy).
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_NUMPYRANDOM_H
#define COMPOSER_RUNTIME_NUMPYRANDOM_H

#include <cstdint>
#include <utility>
#include <vector>

namespace composer::runtime {

class NumpyGenerator {
public:
  /// numpy.random.default_rng(seed) for a non-negative integer seed.
  explicit NumpyGenerator(uint64_t seed);

  /// The raw draws, as NumPy's bit generator gives them: a 32-bit draw uses
  /// the low half of a 64-bit one and keeps the high half for the next.
  uint64_t nextUint64();
  uint32_t nextUint32();
  /// Uniform in [0, 1) with 53 random bits.
  double nextDouble();

  /// Generator.integers(low, high): uniform in [low, high), high > low.
  int64_t integers(int64_t low, int64_t high);
  /// Generator.uniform(low, high) for one value.
  double uniform(double low, double high);

  /// Generator.shuffle of a sequence (a list or a 1-D array): Fisher-Yates
  /// from the back with masked rejection draws.
  template <typename T> void shuffle(T *data, int64_t n) {
    for (int64_t i = n - 1; i > 0; --i) {
      int64_t j = int64_t(interval(uint64_t(i)));
      std::swap(data[i], data[j]);
    }
  }
  template <typename T> void shuffle(std::vector<T> &v) {
    shuffle(v.data(), int64_t(v.size()));
  }
  /// Generator.permutation(n).
  std::vector<int64_t> permutation(int64_t n);
  /// Generator.choice(n, k, replace=False), in the order NumPy returns.
  std::vector<int64_t> choiceWithoutReplacement(int64_t n, int64_t k);

private:
  /// Uniform in [0, max] by masked rejection (NumPy's random_interval).
  uint64_t interval(uint64_t max);
  /// Uniform in [0, range] by Lemire's method (random_bounded_uint64).
  uint64_t bounded(uint64_t range);
  /// Fisher-Yates over data[first-1..n) with Lemire draws (_shuffle_int).
  void shuffleTail(int64_t *data, int64_t n, int64_t first);

  unsigned __int128 state_ = 0, increment_ = 0;
  bool hasHalf_ = false;
  uint32_t half_ = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_NUMPYRANDOM_H
