//===- SampleTransform.h - Per-sample augmentations -------------*- C++ -*-===//
//
// Augmentations that act on one sample at a time (RandAugment, AugMix, ColOut
// per sample) run where the loader builds batches, on its worker threads, as
// dataset transforms do in PyTorch (with `num_workers: 0` the loader builds
// batches in line, samples spread over the intra-op threads). Each draws from
// its own random stream, keyed by (seed, epoch, dataset index, its name)
// alone, so a batch stays a pure function of its epoch and index.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_SAMPLETRANSFORM_H
#define COMPOSER_RUNTIME_SAMPLETRANSFORM_H

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// SplitMix64's mixing step, which the loader's and the transforms' sample
/// streams both draw from.
uint64_t splitmix64(uint64_t x);

/// One sample's random stream (SplitMix64): cheap to seed, so every sample
/// of every epoch owns one per transform.
class SampleRandom {
public:
  SampleRandom(uint64_t seed, int64_t epoch, int64_t index,
               std::string_view purpose);

  uint64_t next();
  /// Uniform in [0, 1), 53 bits.
  double uniform();
  /// Uniform in [low, high).
  double uniform(double low, double high) {
    return low + (high - low) * uniform();
  }
  /// Uniform in [0, n); n > 0.
  int64_t below(int64_t n);
  /// Standard normal (Box-Muller).
  double normal();
  /// Gamma(alpha, 1), alpha > 0 (Marsaglia and Tsang).
  double gamma(double alpha);
  /// Beta(a, b) as G1 / (G1 + G2).
  double beta(double a, double b);
  /// Symmetric Dirichlet(alpha) over `k` weights.
  std::vector<double> dirichlet(double alpha, int64_t k);

private:
  uint64_t state_;
};

/// Where in the loader a transform runs.
enum class SampleStage {
  /// On the uint8 [C, H, W] image, before scaling, crop, flip and
  /// normalization (where torchvision's PIL transforms run); shape kept.
  Image,
  /// On the float [C, H, W] sample after normalization; may change H and W.
  Normalized,
};

/// A per-sample augmentation. `apply` runs on loader workers, many samples
/// at once: it must be thread-safe, draw only from `random`, return a new
/// contiguous tensor (never write into `sample`) and keep clear of ATen's
/// parallel kernels (plain loops over the data).
class SampleTransform {
public:
  virtual ~SampleTransform();
  /// Identifies the transform (a loader holds one per name) and keys its
  /// random stream.
  virtual std::string name() const = 0;
  virtual SampleStage stage() const = 0;
  /// The sample shape [C, H, W] this transform makes of `shape`.
  virtual std::vector<int64_t> outputShape(std::vector<int64_t> shape) const {
    return shape;
  }
  virtual torch::Tensor apply(const torch::Tensor &sample,
                              SampleRandom &random) const = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_SAMPLETRANSFORM_H
