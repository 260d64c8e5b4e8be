//===- Dataset.h - Datasets read sample by sample ---------------*- C++ -*-===//
//
// A dataset is random access by index, its size known before any sample is
// read. It says nothing of order, batching or augmentation: the loader
// (Data.h) owns those, so every dataset gets the same resumable order, rank
// sharding and prefetching. `get` is called from the loader's worker threads
// at once and must be thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATASET_H
#define COMPOSER_RUNTIME_DATASET_H

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {

/// A sample whose data cannot be read or decoded (a corrupt or truncated
/// file, a shard row that contradicts its index). The message names the
/// sample's source. It is the one error `skip_bad_samples` may skip; every
/// other error (a missing directory, an unsupported format) stops the run.
class DataError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One sample: the model's input, the target of the loss, and the values
/// of the dataset's other columns (SampleSpec::columns), in their order.
struct Sample {
  torch::Tensor input;
  torch::Tensor target;
  std::vector<torch::Tensor> columns;
};

/// A column of a dataset besides its input and target (an attention mask):
/// every sample's value has this shape and type.
struct ColumnSpec {
  std::string name;
  std::vector<int64_t> shape;
  torch::ScalarType type = torch::kLong;
};

enum class SampleKind {
  /// uint8 [C, H, W]; the target is a class index (int64 scalar).
  Image,
  /// int64 [T] tokens; the target is the next tokens, int64 [T].
  Tokens,
  /// Any tensor; the target as the dataset gives it.
  Tensor,
};

/// What every sample of a dataset looks like, known before any is read.
struct SampleSpec {
  SampleKind kind = SampleKind::Tensor;
  /// Images: {C, H, W}, with H and W 0 when images differ in size.
  /// Tokens: {T}. Tensors: the input's shape.
  std::vector<int64_t> inputShape;
  torch::ScalarType inputType = torch::kFloat;
  /// The target's shape ({} for a class index).
  std::vector<int64_t> targetShape;
  torch::ScalarType targetType = torch::kLong;
  /// Number of classes when the dataset knows it (an image folder's class
  /// folders), else 0.
  int64_t numClasses = 0;
  /// The names a recipe's model_inputs use for the input and the target
  /// (an MDS dataset's column names); "input" and "target" always work too.
  std::string inputName = "input", targetName = "target";
  /// Columns besides the input and the target, batched by name
  /// (Batch::columns).
  std::vector<ColumnSpec> columns;

  bool fixedImageSize() const {
    return kind == SampleKind::Image && inputShape.size() == 3 &&
           inputShape[1] > 0 && inputShape[2] > 0;
  }
  int64_t tokensPerSample() const {
    return kind == SampleKind::Tokens ? inputShape.at(0) : 0;
  }
};

/// A region of an image in source pixels and the size it is resized to.
/// The region may reach outside the image (a centre crop larger than the
/// image); what lies outside is black, as torchvision pads.
struct ImageCut {
  int64_t top = 0, left = 0, height = 0, width = 0;
  int64_t outHeight = 0, outWidth = 0;

  bool resizes() const { return outHeight != height || outWidth != width; }
};

/// Chooses the cut of one image from its size (height, width).
using ImageCutPlanner = std::function<ImageCut(int64_t, int64_t)>;

class Dataset {
public:
  virtual ~Dataset();

  virtual int64_t size() const = 0;
  virtual const SampleSpec &spec() const = 0;
  /// Sample `index` in [0, size()). Thread-safe.
  virtual Sample get(int64_t index) const = 0;
  /// Images only: sample `index` with its image cut as `plan` chooses from
  /// the image's size, uint8 [C, cut.outHeight, cut.outWidth]. Datasets of
  /// compressed images decode only what the cut needs, at the smallest scale
  /// that covers it; the default reads the whole image and cuts it.
  virtual Sample getCut(int64_t index, const ImageCutPlanner &plan) const;
  /// Where sample `index` comes from, for messages: a file, a shard's row.
  virtual std::string describe(int64_t index) const;
  /// Where the samples are stored in blocks that are cheapest read together
  /// (compressed shards): the first index of each block, ascending from 0.
  /// Empty when any order reads as cheaply as any other.
  virtual std::vector<int64_t> shardStarts() const { return {}; }
  /// Samples that will be read soon: a dataset whose samples must first be
  /// downloaded starts downloading them in the background. The default
  /// does nothing.
  virtual void prefetch(const int64_t *indices, int64_t count) const {
    (void)indices;
    (void)count;
  }
};

/// Cuts `image` (uint8 [C, H, W]) as `cut` says: crop, pad with black
/// outside the image, and resize bilinearly with PIL's antialiasing.
torch::Tensor applyImageCut(const torch::Tensor &image, const ImageCut &cut);

/// A dataset held in memory: row i of `inputs` and of `targets`.
class TensorDataset final : public Dataset {
public:
  /// Image needs uint8 [N, C, H, W] inputs, Tokens int64 [N, T]. Without a
  /// kind, uint8 [N, C, H, W] inputs are images and anything else tensors.
  /// `columns` are further named columns of N rows each.
  TensorDataset(
      torch::Tensor inputs, torch::Tensor targets,
      std::optional<SampleKind> kind = std::nullopt,
      std::vector<std::pair<std::string, torch::Tensor>> columns = {});

  int64_t size() const override { return inputs_.size(0); }
  const SampleSpec &spec() const override { return spec_; }
  Sample get(int64_t index) const override;

  /// All inputs, [N, ...], and all targets, [N, ...], contiguous.
  const torch::Tensor &inputs() const { return inputs_; }
  const torch::Tensor &targets() const { return targets_; }
  /// The further columns' values, [N, ...] each, in SampleSpec order.
  const std::vector<torch::Tensor> &columns() const { return columns_; }

private:
  torch::Tensor inputs_, targets_;
  std::vector<torch::Tensor> columns_;
  SampleSpec spec_;
};

/// The first `count` samples of `dataset`, in [1, size()].
std::shared_ptr<const Dataset>
firstSamples(std::shared_ptr<const Dataset> dataset, int64_t count);

/// The samples of `parts` one after another (Streaming's streams). Throws
/// std::invalid_argument unless every part's samples are of one kind, shape
/// and type.
std::shared_ptr<const Dataset>
concatenateDatasets(std::vector<std::shared_ptr<const Dataset>> parts);

/// `dataset` with every unreadable sample replaced by the next readable one
/// (index + 1, + 2, ... wrapping around), so the replacement depends on the
/// data alone. Each replacement is counted and logged once per sample.
class SkipBadSamples final : public Dataset {
public:
  explicit SkipBadSamples(std::shared_ptr<const Dataset> dataset);

  int64_t size() const override { return dataset_->size(); }
  const SampleSpec &spec() const override { return dataset_->spec(); }
  Sample get(int64_t index) const override;
  Sample getCut(int64_t index, const ImageCutPlanner &plan) const override;
  std::string describe(int64_t index) const override {
    return dataset_->describe(index);
  }
  std::vector<int64_t> shardStarts() const override {
    return dataset_->shardStarts();
  }
  void prefetch(const int64_t *indices, int64_t count) const override {
    dataset_->prefetch(indices, count);
  }
  /// Distinct samples skipped so far.
  int64_t skipped() const;

private:
  template <typename Read> Sample firstGood(int64_t index, Read read) const;
  std::shared_ptr<const Dataset> dataset_;
  struct Log;
  std::shared_ptr<Log> log_;
};

/// Reads an IDX image file and its label file (MNIST, Fashion-MNIST), raw or
/// gzip-compressed, into memory. Throws std::runtime_error naming the file.
std::shared_ptr<TensorDataset> loadIdx(const std::string &imagesPath,
                                       const std::string &labelsPath);

/// A token file mapped into memory, never read whole: little-endian uint16
/// or uint32 tokens (`tokenBytes` 2 or 4) cut into samples of
/// `sequenceLength` inputs whose targets are the next tokens.
std::shared_ptr<const Dataset> openTokenFile(const std::string &path,
                                             int64_t sequenceLength,
                                             int tokenBytes = 2);

/// Random data of a fixed shape, reproducible from `seed`: images with
/// `numClasses` labels, or tokens below `vocabSize` when that is set.
struct SyntheticSpec {
  int64_t numSamples = 1024;
  std::vector<int64_t> sampleShape = {3, 32, 32};
  int64_t numClasses = 10;
  int64_t vocabSize = 0;
  uint64_t seed = 0;
};
std::shared_ptr<TensorDataset> makeSynthetic(const SyntheticSpec &spec);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_DATASET_H
