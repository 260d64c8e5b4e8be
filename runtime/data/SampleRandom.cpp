//===- SampleRandom.cpp - A sample's own random stream --------------------===//
//
// SplitMix64 keyed by (seed, epoch, dataset index, purpose). The loader's own
// crop and flip draws use another key, so adding a transform never changes
// them.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/SampleTransform.h"

#include <cmath>

namespace composer::runtime {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

SampleTransform::~SampleTransform() = default;

SampleRandom::SampleRandom(uint64_t seed, int64_t epoch, int64_t index,
                           std::string_view purpose) {
  uint64_t key = splitmix64(seed ^ 0x5A17C0DE5A17C0DEULL);
  for (char c : purpose)
    key = splitmix64(key ^ uint64_t(uint8_t(c)));
  key = splitmix64(key ^ uint64_t(epoch));
  state_ = splitmix64(key ^ uint64_t(index));
}

uint64_t SampleRandom::next() {
  uint64_t r = splitmix64(state_);
  state_ += 0x9E3779B97F4A7C15ULL;
  return r;
}

double SampleRandom::uniform() { return double(next() >> 11) * 0x1.0p-53; }

int64_t SampleRandom::below(int64_t n) {
  // Lemire's multiply-shift: unbiased enough for n far below 2^64.
  return int64_t((__uint128_t(next()) * uint64_t(n)) >> 64);
}

double SampleRandom::normal() {
  double u = 1.0 - uniform(); // (0, 1]: log is finite
  double v = uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

double SampleRandom::gamma(double alpha) {
  if (alpha < 1) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a).
    double u = 1.0 - uniform();
    return gamma(alpha + 1) * std::pow(u, 1.0 / alpha);
  }
  double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = normal(), v = 1.0 + c * x;
    if (v <= 0)
      continue;
    v = v * v * v;
    double u = 1.0 - uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v))
      return d * v;
  }
}

double SampleRandom::beta(double a, double b) {
  double x = gamma(a), y = gamma(b);
  return x + y > 0 ? x / (x + y) : 0.5;
}

std::vector<double> SampleRandom::dirichlet(double alpha, int64_t k) {
  std::vector<double> weights(size_t(std::max<int64_t>(k, 0)));
  double sum = 0;
  for (double &w : weights)
    sum += w = gamma(alpha);
  for (double &w : weights)
    w = sum > 0 ? w / sum : 1.0 / double(weights.size());
  return weights;
}

} // namespace composer::runtime
