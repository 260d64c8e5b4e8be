//===- Data.h - Datasets and the data loader --------------------*- C++ -*-===//
//
// Datasets live in memory as two tensors; the loader draws each epoch's order
// and every augmentation from (seed, epoch, sample index) alone, so a run that
// resumes mid-epoch sees exactly the batches an uninterrupted run would.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATA_H
#define COMPOSER_RUNTIME_DATA_H

#include "composer/Runtime/SampleTransform.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer::runtime {

/// A batch as the loop sees it. `target` holds class indices (int64) or, once
/// an algorithm has mixed or smoothed it, class probabilities (float).
struct Batch {
  torch::Tensor input;
  torch::Tensor target;
  int64_t size() const { return input.defined() ? input.size(0) : 0; }
};

/// A whole dataset in memory.
struct Dataset {
  /// Images: uint8 [N, C, H, W]. Tokens: int64 [N, T].
  torch::Tensor inputs;
  /// Classes: int64 [N]. Next tokens: int64 [N, T].
  torch::Tensor targets;
  /// Tokens per sample (0 for images).
  int64_t tokensPerSample = 0;

  int64_t size() const { return inputs.size(0); }
};

/// Reads an IDX image file and its label file (MNIST, Fashion-MNIST), raw or
/// gzip-compressed. Throws std::runtime_error naming the file on bad input.
Dataset loadIdx(const std::string &imagesPath, const std::string &labelsPath);

/// Reads a flat file of little-endian uint16 tokens and cuts it into samples
/// of `sequenceLength` inputs whose targets are the next tokens.
Dataset loadTokenFile(const std::string &path, int64_t sequenceLength);

/// Random data of a fixed shape, reproducible from `seed`: images with
/// `numClasses` labels, or tokens below `vocabSize` when that is set.
struct SyntheticSpec {
  int64_t numSamples = 1024;
  std::vector<int64_t> sampleShape = {3, 32, 32};
  int64_t numClasses = 10;
  int64_t vocabSize = 0;
  uint64_t seed = 0;
};
Dataset makeSynthetic(const SyntheticSpec &spec);

/// What the loader does to uint8 images: scale to [0, 1], normalize, and, for
/// training, random crop (pad then crop back) and horizontal flip.
struct ImageTransforms {
  std::vector<double> mean; // empty: no normalization
  std::vector<double> std;
  int64_t randomCropPadding = 0;
  bool horizontalFlip = false;
};

struct DataLoaderOptions {
  int64_t batchSize = 128;
  bool shuffle = true;
  bool dropLast = false;
  /// Threads that prepare batches ahead of the loop; 0 prepares in line.
  int numWorkers = 0;
  uint64_t seed = 0;
  ImageTransforms transforms;
  /// Data-parallel sharding: this rank's share of every epoch.
  int rank = 0;
  int worldSize = 1;
  /// Per-sample augmentations of images, in the order they run within their
  /// stage (SampleTransform.h).
  std::vector<std::shared_ptr<const SampleTransform>> sampleTransforms;
};

class DataLoader {
public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();

  int64_t batchesPerEpoch() const;
  int64_t samplesPerEpoch() const;
  const Dataset &dataset() const { return *dataset_; }
  const DataLoaderOptions &options() const { return options_; }

  /// Starts `epoch` at batch `firstBatch` (to resume mid-epoch). Replaces any
  /// epoch in progress.
  void startEpoch(int64_t epoch, int64_t firstBatch = 0);
  /// The next batch of the current epoch, or nullopt at its end.
  std::optional<Batch> next();

  /// Adds `transform` to the per-sample augmentations, replacing one of the
  /// same name; it applies from the next startEpoch. Throws
  /// std::invalid_argument unless the data are uint8 images [N, C, H, W].
  void setSampleTransform(std::shared_ptr<const SampleTransform> transform);

  /// Builds batch `index` of `epoch` (what workers run; deterministic).
  Batch makeBatch(int64_t epoch, int64_t index) const;

private:
  struct Prefetcher;
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  torch::Tensor order_; // this epoch's sample order (this rank's share)
  int64_t epoch_ = 0;
  int64_t nextBatch_ = 0;
  std::unique_ptr<Prefetcher> prefetcher_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_DATA_H
