//===- Data.h - The data loader ---------------------------------*- C++ -*-===//
//
// The loader reads samples from a Dataset (Dataset.h) on demand and draws
// each epoch's order and every augmentation from (seed, epoch, sample index)
// alone, so a run that resumes mid-epoch sees exactly the batches an
// uninterrupted run would.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATA_H
#define COMPOSER_RUNTIME_DATA_H

#include "composer/Runtime/BatchLoader.h"
#include "composer/Runtime/Dataset.h"
#include "composer/Runtime/SampleTransform.h"
#include "composer/Runtime/StreamingOrder.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer::runtime {

struct EpochOrder;

/// torchvision's RandomResizedCrop: a region of `scale` of the image's area
/// and aspect ratio (width / height) in `ratio`, resized to height x width.
struct RandomResizedCrop {
  int64_t height = 0, width = 0;
  double scaleLow = 0.08, scaleHigh = 1.0;
  double ratioLow = 3.0 / 4.0, ratioHigh = 4.0 / 3.0;
};

/// The random numbers a crop draws, in torchvision's order.
struct CropDraws {
  /// Uniform in [low, high).
  std::function<double(double, double)> uniform;
  /// Uniform integer in [0, n), n > 0.
  std::function<int64_t(int64_t)> below;
};

/// The crop torchvision's RandomResizedCrop.get_params picks for an image of
/// height x width given the same draws: ten attempts, then the central crop
/// of the nearest allowed ratio.
ImageCut randomResizedCropCut(int64_t height, int64_t width,
                              const RandomResizedCrop &crop,
                              const CropDraws &draws);

/// What the loader does to uint8 images: cut (random resized crop, or resize
/// of the shorter side then centre crop), scale to [0, 1], normalize, and, for
/// training, random crop (pad then crop back) and horizontal flip.
struct ImageTransforms {
  std::vector<double> mean; // empty: no normalization
  std::vector<double> std;
  int64_t randomCropPadding = 0;
  bool horizontalFlip = false;
  std::optional<RandomResizedCrop> randomResizedCrop;
  /// Resizes the shorter side to this (torchvision's Resize(N)); 0: no.
  int64_t resizeShorter = 0;
  /// Centre crop to height x width after any resize; 0: no.
  int64_t centerCropHeight = 0, centerCropWidth = 0;
  /// Batches in channels-last memory format (still indexed NCHW).
  bool channelsLast = false;
  /// Batches stay uint8 until DataLoader::toDevice, which scales and
  /// normalizes them on the model's device: a quarter of the bytes cross
  /// the bus. Not with per-sample transforms of the normalized sample,
  /// which need the float sample on the CPU.
  bool normalizeOnDevice = false;

  bool cutsImages() const {
    return randomResizedCrop || resizeShorter > 0 || centerCropHeight > 0;
  }
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
  /// Shuffling a dataset stored in shards (Dataset::shardStarts) shuffles the
  /// shards, then the samples within consecutive blocks of this many, so a
  /// worker reads few shards at a time.
  int64_t shuffleBlockSize = 1 << 18;
  /// MosaicML Streaming's order instead (StreamingOrder.h): the batches a
  /// StreamingDataset with these arguments gives this rank through a torch
  /// DataLoader with max(1, numWorkers) workers. Its samplesPerShard, when
  /// empty, are the dataset's shards; `shuffle` above decides shuffling.
  std::optional<StreamingOrderSpec> streaming;
  /// Ranks on each node, for Streaming's partition (0: all on one node).
  int ranksPerNode = 0;
  /// Samples ahead of the one being read whose data the dataset is asked
  /// to fetch in the background (Dataset::prefetch; Streaming's
  /// predownload); 0: none.
  int64_t predownload = 0;
  /// Per-sample augmentations of images, in the order they run within their
  /// stage (SampleTransform.h).
  std::vector<std::shared_ptr<const SampleTransform>> sampleTransforms;
};

class DataLoader final : public BatchLoader {
public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader() override;

  const SampleSpec &spec() const override { return dataset_->spec(); }
  int64_t batchesPerEpoch() const override;
  int64_t samplesPerEpoch() const override;
  int64_t datasetSize() const override { return dataset_->size(); }
  std::optional<std::pair<int, int>> shardedFor() const override {
    return std::make_pair(options_.rank, options_.worldSize);
  }
  const Dataset &dataset() const { return *dataset_; }
  const DataLoaderOptions &options() const { return options_; }

  void startEpoch(int64_t epoch, int64_t firstBatch = 0) override;
  /// With Streaming's order, continues the epoch's global order after
  /// `sampleInEpoch` samples at any world size.
  int64_t resumeEpoch(int64_t epoch, int64_t firstBatch,
                      int64_t sampleInEpoch) override;
  std::optional<Batch> next() override;

  /// Throws std::invalid_argument unless the samples are images.
  void
  setSampleTransform(std::shared_ptr<const SampleTransform> transform) override;

  bool readAgain(int64_t epoch) override;
  std::optional<Batch> readAgainNext() override;

  /// Builds batch `index` of `epoch` (what workers run; deterministic).
  Batch makeBatch(int64_t epoch, int64_t index) const;

  /// `batch` on `device`, finished there: with normalizeOnDevice its uint8
  /// images are scaled and normalized after the copy. Equal, bit for bit,
  /// to the batch the loader would have normalized itself.
  Batch toDevice(Batch batch, torch::Device device) const override;

private:
  struct Prefetcher;
  void begin(std::shared_ptr<const EpochOrder> order, int64_t epoch,
             int64_t firstBatch);
  /// Asks the dataset for the samples up to `predownload` past batch
  /// `batch`'s start.
  void predownload(int64_t batch);
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  int64_t batchesPerEpoch_ = 0, samplesPerEpoch_ = 0;
  /// This epoch's batches (this rank's share).
  std::shared_ptr<const EpochOrder> order_;
  int64_t epoch_ = 0;
  int64_t nextBatch_ = 0;
  int64_t predownloaded_ = 0; // order_ samples already asked for
  std::unique_ptr<Prefetcher> prefetcher_;
  /// readAgain's epoch and its next batch.
  int64_t againEpoch_ = 0, againBatch_ = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_DATA_H
