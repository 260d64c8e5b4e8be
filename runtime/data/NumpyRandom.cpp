//===- NumpyRandom.cpp - NumPy's default_rng, bit for bit -----------------===//
//
// Constants and algorithms follow numpy/random: bit_generator.pyx
// (SeedSequence), pcg64.h (PCG64), distributions.c (random_interval,
// random_bounded_uint64) and _generator.pyx (shuffle, permutation, choice).
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/NumpyRandom.h"

#include <stdexcept>
#include <string>
#include <unordered_set>

namespace composer::runtime {
namespace {

using u128 = unsigned __int128;

/// SeedSequence(seed).generate_state(words, uint32): the entropy (the seed's
/// 32-bit words, least significant first) mixed into a pool of four words,
/// then hashed out.
std::vector<uint32_t> seedSequenceState(uint64_t seed, int words) {
  constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875;
  constexpr uint32_t kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
  constexpr int kPoolSize = 4, kShift = 16;
  std::vector<uint32_t> entropy{uint32_t(seed)};
  if (seed >> 32)
    entropy.push_back(uint32_t(seed >> 32));

  uint32_t hashConst = kInitA;
  auto hashmix = [&](uint32_t value) {
    value ^= hashConst;
    hashConst *= kMultA;
    value *= hashConst;
    return value ^ (value >> kShift);
  };
  auto mix = [](uint32_t x, uint32_t y) {
    uint32_t result = kMixMultL * x - kMixMultR * y;
    return result ^ (result >> kShift);
  };
  uint32_t pool[kPoolSize];
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < int(entropy.size()) ? entropy[i] : 0);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst)
        pool[dst] = mix(pool[dst], hashmix(pool[src]));

  std::vector<uint32_t> state(words);
  uint32_t outConst = kInitB;
  for (int i = 0; i < words; ++i) {
    uint32_t value = pool[i % kPoolSize] ^ outConst;
    outConst *= kMultB;
    value *= outConst;
    state[i] = value ^ (value >> kShift);
  }
  return state;
}

constexpr u128 kPcgMultiplier =
    (u128(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

} // namespace

NumpyGenerator::NumpyGenerator(uint64_t seed) {
  // PCG64 takes generate_state(4, uint64): words (2i, 2i+1) make the i-th
  // 64-bit value; values 0-1 are the initial state, 2-3 the stream.
  std::vector<uint32_t> w = seedSequenceState(seed, 8);
  auto word64 = [&](int i) {
    return uint64_t(w[2 * i]) | uint64_t(w[2 * i + 1]) << 32;
  };
  u128 initState = u128(word64(0)) << 64 | word64(1);
  u128 initSequence = u128(word64(2)) << 64 | word64(3);
  // pcg_setseq_128_srandom_r.
  increment_ = initSequence << 1 | 1;
  state_ = 0;
  state_ = state_ * kPcgMultiplier + increment_;
  state_ += initState;
  state_ = state_ * kPcgMultiplier + increment_;
}

uint64_t NumpyGenerator::nextUint64() {
  state_ = state_ * kPcgMultiplier + increment_;
  uint64_t high = uint64_t(state_ >> 64), low = uint64_t(state_);
  uint64_t x = high ^ low;
  unsigned rot = unsigned(high >> 58);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

uint32_t NumpyGenerator::nextUint32() {
  if (hasHalf_) {
    hasHalf_ = false;
    return half_;
  }
  uint64_t next = nextUint64();
  hasHalf_ = true;
  half_ = uint32_t(next >> 32);
  return uint32_t(next);
}

double NumpyGenerator::nextDouble() {
  return double(nextUint64() >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t NumpyGenerator::interval(uint64_t max) {
  if (max == 0)
    return 0;
  uint64_t mask = max;
  for (int shift : {1, 2, 4, 8, 16, 32})
    mask |= mask >> shift;
  uint64_t value;
  if (max <= 0xFFFFFFFFULL) {
    while ((value = (nextUint32() & mask)) > max) {
    }
  } else {
    while ((value = (nextUint64() & mask)) > max) {
    }
  }
  return value;
}

uint64_t NumpyGenerator::bounded(uint64_t range) {
  if (range == 0)
    return 0;
  if (range == 0xFFFFFFFFULL)
    return nextUint32();
  if (range < 0xFFFFFFFFULL) {
    const uint32_t excl = uint32_t(range) + 1;
    uint64_t m = uint64_t(nextUint32()) * excl;
    uint32_t leftover = uint32_t(m);
    if (leftover < excl) {
      const uint32_t threshold = (UINT32_MAX - uint32_t(range)) % excl;
      while (leftover < threshold) {
        m = uint64_t(nextUint32()) * excl;
        leftover = uint32_t(m);
      }
    }
    return m >> 32;
  }
  if (range == UINT64_MAX)
    return nextUint64();
  const uint64_t excl = range + 1;
  u128 m = u128(nextUint64()) * excl;
  uint64_t leftover = uint64_t(m);
  if (leftover < excl) {
    const uint64_t threshold = (UINT64_MAX - range) % excl;
    while (leftover < threshold) {
      m = u128(nextUint64()) * excl;
      leftover = uint64_t(m);
    }
  }
  return uint64_t(m >> 64);
}

int64_t NumpyGenerator::integers(int64_t low, int64_t high) {
  if (high <= low)
    throw std::invalid_argument("integers: low >= high (" +
                                std::to_string(low) +
                                " >= " + std::to_string(high) + ")");
  return low + int64_t(bounded(uint64_t(high) - uint64_t(low) - 1));
}

double NumpyGenerator::uniform(double low, double high) {
  return low + (high - low) * nextDouble();
}

std::vector<int64_t> NumpyGenerator::permutation(int64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i)
    out[i] = i;
  shuffle(out);
  return out;
}

void NumpyGenerator::shuffleTail(int64_t *data, int64_t n, int64_t first) {
  for (int64_t i = n - 1; i >= first; --i) {
    int64_t j = int64_t(bounded(uint64_t(i)));
    std::swap(data[i], data[j]);
  }
}

std::vector<int64_t> NumpyGenerator::choiceWithoutReplacement(int64_t n,
                                                              int64_t k) {
  if (k < 0 || k > n)
    throw std::invalid_argument("choice: cannot take " + std::to_string(k) +
                                " of " + std::to_string(n) +
                                " without replacement");
  // NumPy shuffles the tail of the whole range for large draws from large
  // populations, else runs Floyd's algorithm and shuffles its result.
  if (n > 10000 && k > n / 50) {
    std::vector<int64_t> all(size_t(n), 0);
    for (int64_t i = 0; i < n; ++i)
      all[i] = i;
    shuffleTail(all.data(), n, std::max<int64_t>(n - k, 1));
    return std::vector<int64_t>(all.end() - k, all.end());
  }
  std::vector<int64_t> out;
  out.reserve(size_t(k));
  std::unordered_set<int64_t> taken;
  for (int64_t j = n - k; j < n; ++j) {
    int64_t value = int64_t(bounded(uint64_t(j)));
    if (!taken.insert(value).second) {
      value = j;
      taken.insert(j);
    }
    out.push_back(value);
  }
  shuffleTail(out.data(), k, 1);
  return out;
}

} // namespace composer::runtime
