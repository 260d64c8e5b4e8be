//===- BatchLoader.h - Where a trainer's batches come from ------*- C++ -*-===//
//
// The Trainer reads batches through this interface: the project's own
// DataLoader (Data.h), which draws each epoch's order and augmentations from
// (seed, epoch, sample) alone, or a loader the caller brings (a PyTorch
// DataLoader driven from Python), which orders its batches itself. What
// only the project's loader can do (per-sample augmentations in its
// workers, rebuilding any batch of an epoch) is asked for through it and
// refused, with a message, by loaders that cannot.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_BATCHLOADER_H
#define COMPOSER_RUNTIME_BATCHLOADER_H

#include "composer/Runtime/Dataset.h"

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace composer::runtime {

class SampleTransform;

/// A batch as the loop sees it. `target` holds class indices (int64) or, once
/// an algorithm has mixed or smoothed it, class probabilities (float).
/// `columns` holds the dataset's other columns by name (SampleSpec::columns),
/// one row per sample as well.
struct Batch {
  torch::Tensor input;
  torch::Tensor target;
  std::map<std::string, torch::Tensor> columns;
  int64_t size() const { return input.defined() ? input.size(0) : 0; }
  /// The rows `indices` of every column.
  Batch select(const torch::Tensor &indices) const;
  /// Consecutive batches of `size` rows (the last may hold fewer).
  std::vector<Batch> split(int64_t size) const;
};

class BatchLoader {
public:
  virtual ~BatchLoader();

  /// What every sample of the data looks like, known before the first
  /// batch.
  virtual const SampleSpec &spec() const = 0;
  /// Batches in one epoch of this rank, and the samples they hold.
  virtual int64_t batchesPerEpoch() const = 0;
  virtual int64_t samplesPerEpoch() const = 0;
  /// Samples in the whole data set (every rank's), for messages.
  virtual int64_t datasetSize() const = 0;
  /// The (rank, world size) the loader gives its share of, when it knows.
  virtual std::optional<std::pair<int, int>> shardedFor() const {
    return std::nullopt;
  }

  /// Starts `epoch` at batch `firstBatch` (to resume mid-epoch). Replaces any
  /// epoch in progress.
  virtual void startEpoch(int64_t epoch, int64_t firstBatch = 0) = 0;
  /// Resumes `epoch` where a run stopped after `firstBatch` batches that
  /// held `sampleInEpoch` samples of all ranks. A loader whose global order
  /// is the same at every world size continues it after those samples even
  /// when the run had another world size; others start at `firstBatch`.
  /// Returns the batches left in the epoch.
  virtual int64_t resumeEpoch(int64_t epoch, int64_t firstBatch,
                              int64_t sampleInEpoch) {
    (void)sampleInEpoch;
    startEpoch(epoch, firstBatch);
    return batchesPerEpoch() - firstBatch;
  }
  /// The next batch of the current epoch, or nullopt at its end.
  virtual std::optional<Batch> next() = 0;

  /// `batch` on `device`; every column copied there (asynchronously from
  /// pinned memory).
  virtual Batch toDevice(Batch batch, torch::Device device) const;

  /// Adds a per-sample augmentation run in the loader's workers, replacing
  /// one of the same name, from the next startEpoch. Throws
  /// std::invalid_argument where the loader cannot (the default).
  virtual void setSampleTransform(std::shared_ptr<const SampleTransform>);

  /// Starts reading `epoch` again from its first batch on the side, without
  /// disturbing the epoch in progress, for a pass over the training data
  /// (SWA's batch-norm statistics). readAgainNext() then gives its batches
  /// in order and nullopt at the end. Loaders that cannot read an epoch
  /// twice return false (the default).
  virtual bool readAgain(int64_t epoch) { return false; }
  virtual std::optional<Batch> readAgainNext() { return std::nullopt; }
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_BATCHLOADER_H
