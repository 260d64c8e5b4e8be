//===- Dataset.cpp - In-memory, limited and self-healing datasets ---------===//

#include "composer/Runtime/Dataset.h"

#include <algorithm>

#include <iostream>
#include <mutex>
#include <set>

namespace composer::runtime {

Dataset::~Dataset() = default;

Sample Dataset::getCut(int64_t index, const ImageCutPlanner &plan) const {
  if (spec().kind != SampleKind::Image)
    throw std::invalid_argument(describe(index) +
                                ": only images can be cut and resized");
  Sample sample = get(index);
  const torch::Tensor &image = sample.input;
  sample.input = applyImageCut(image, plan(image.size(1), image.size(2)));
  return sample;
}

std::string Dataset::describe(int64_t index) const {
  return "sample " + std::to_string(index);
}

TensorDataset::TensorDataset(
    torch::Tensor inputs, torch::Tensor targets, std::optional<SampleKind> kind,
    std::vector<std::pair<std::string, torch::Tensor>> columns)
    : inputs_(std::move(inputs)), targets_(std::move(targets)) {
  if (!inputs_.defined() || !targets_.defined())
    throw std::invalid_argument("TensorDataset: dataset has no tensors");
  if (inputs_.dim() < 1 || targets_.dim() < 1 ||
      inputs_.size(0) != targets_.size(0))
    throw std::invalid_argument(
        "TensorDataset: dataset has " +
        std::to_string(inputs_.dim() ? inputs_.size(0) : 0) + " inputs but " +
        std::to_string(targets_.dim() ? targets_.size(0) : 0) + " targets");
  if (!inputs_.device().is_cpu() || !targets_.device().is_cpu())
    throw std::invalid_argument("TensorDataset: dataset must be on the CPU");
  // Batches are gathered by raw row copies.
  inputs_ = inputs_.contiguous();
  targets_ = targets_.contiguous();
  bool images = inputs_.scalar_type() == torch::kUInt8 && inputs_.dim() == 4;
  spec_.kind = kind.value_or(images ? SampleKind::Image : SampleKind::Tensor);
  if (spec_.kind == SampleKind::Image && !images)
    throw std::invalid_argument("TensorDataset: images must be uint8 "
                                "[N, C, H, W]");
  if (spec_.kind == SampleKind::Tokens &&
      (inputs_.dim() != 2 || inputs_.scalar_type() != torch::kLong))
    throw std::invalid_argument("TensorDataset: tokens must be int64 [N, T]");
  spec_.inputShape = inputs_.sizes().slice(1).vec();
  spec_.inputType = inputs_.scalar_type();
  spec_.targetShape = targets_.sizes().slice(1).vec();
  spec_.targetType = targets_.scalar_type();
  for (auto &[name, values] : columns) {
    if (!values.defined() || values.dim() < 1 ||
        values.size(0) != inputs_.size(0) || !values.device().is_cpu())
      throw std::invalid_argument("TensorDataset: column '" + name +
                                  "' must have one CPU row per input");
    if (name == spec_.inputName || name == spec_.targetName ||
        std::any_of(spec_.columns.begin(), spec_.columns.end(),
                    [&](const ColumnSpec &c) { return c.name == name; }))
      throw std::invalid_argument("TensorDataset: column '" + name +
                                  "' is named twice");
    spec_.columns.push_back(
        {name, values.sizes().slice(1).vec(), values.scalar_type()});
    columns_.push_back(values.contiguous());
  }
}

Sample TensorDataset::get(int64_t index) const {
  Sample sample{inputs_[index], targets_[index]};
  for (const torch::Tensor &values : columns_)
    sample.columns.push_back(values[index]);
  return sample;
}

namespace {
class FirstSamples final : public Dataset {
public:
  FirstSamples(std::shared_ptr<const Dataset> dataset, int64_t count)
      : dataset_(std::move(dataset)), count_(count) {}
  int64_t size() const override { return count_; }
  const SampleSpec &spec() const override { return dataset_->spec(); }
  Sample get(int64_t index) const override { return dataset_->get(index); }
  Sample getCut(int64_t index, const ImageCutPlanner &plan) const override {
    return dataset_->getCut(index, plan);
  }
  std::string describe(int64_t index) const override {
    return dataset_->describe(index);
  }
  std::vector<int64_t> shardStarts() const override {
    std::vector<int64_t> starts;
    for (int64_t start : dataset_->shardStarts())
      if (start < count_)
        starts.push_back(start);
    return starts;
  }
  void prefetch(const int64_t *indices, int64_t count) const override {
    dataset_->prefetch(indices, count);
  }

private:
  std::shared_ptr<const Dataset> dataset_;
  int64_t count_;
};
} // namespace

std::shared_ptr<const Dataset>
firstSamples(std::shared_ptr<const Dataset> dataset, int64_t count) {
  if (count < 1 || count > dataset->size())
    throw std::out_of_range("limit " + std::to_string(count) + " outside [1, " +
                            std::to_string(dataset->size()) + "]");
  if (count == dataset->size())
    return dataset;
  if (auto *tensors = dynamic_cast<const TensorDataset *>(dataset.get()))
    return std::make_shared<TensorDataset>(
        tensors->inputs().narrow(0, 0, count),
        tensors->targets().narrow(0, 0, count), tensors->spec().kind);
  return std::make_shared<FirstSamples>(std::move(dataset), count);
}

namespace {
/// Datasets one after another, as Streaming lays out its streams' samples.
class Concatenated final : public Dataset {
public:
  explicit Concatenated(std::vector<std::shared_ptr<const Dataset>> parts)
      : parts_(std::move(parts)) {
    for (const auto &part : parts_) {
      starts_.push_back(size_);
      size_ += part->size();
    }
  }
  int64_t size() const override { return size_; }
  const SampleSpec &spec() const override { return parts_[0]->spec(); }
  Sample get(int64_t index) const override {
    auto [part, local] = locate(index);
    return parts_[part]->get(local);
  }
  Sample getCut(int64_t index, const ImageCutPlanner &plan) const override {
    auto [part, local] = locate(index);
    return parts_[part]->getCut(local, plan);
  }
  std::string describe(int64_t index) const override {
    auto [part, local] = locate(index);
    return parts_[part]->describe(local);
  }
  std::vector<int64_t> shardStarts() const override {
    std::vector<int64_t> starts;
    for (size_t p = 0; p < parts_.size(); ++p) {
      std::vector<int64_t> inner = parts_[p]->shardStarts();
      if (inner.empty())
        inner.push_back(0);
      for (int64_t start : inner)
        if (starts_[p] + start < size_ &&
            (starts.empty() || starts.back() < starts_[p] + start))
          starts.push_back(starts_[p] + start);
    }
    return starts;
  }
  void prefetch(const int64_t *indices, int64_t count) const override {
    for (int64_t i = 0; i < count; ++i) {
      auto [part, local] = locate(indices[i]);
      parts_[part]->prefetch(&local, 1);
    }
  }

private:
  std::pair<size_t, int64_t> locate(int64_t index) const {
    if (index < 0 || index >= size_)
      throw std::out_of_range("sample " + std::to_string(index) +
                              " outside [0, " + std::to_string(size_) + ")");
    size_t part =
        size_t(std::upper_bound(starts_.begin(), starts_.end(), index) -
               starts_.begin()) -
        1;
    while (parts_[part]->size() == 0)
      ++part;
    return {part, index - starts_[part]};
  }
  std::vector<std::shared_ptr<const Dataset>> parts_;
  std::vector<int64_t> starts_;
  int64_t size_ = 0;
};

bool sameSamples(const SampleSpec &a, const SampleSpec &b) {
  return a.kind == b.kind && a.inputType == b.inputType &&
         a.targetType == b.targetType && a.targetShape == b.targetShape &&
         (a.kind == SampleKind::Image ? a.inputShape.at(0) == b.inputShape.at(0)
                                      : a.inputShape == b.inputShape) &&
         a.columns.size() == b.columns.size();
}
} // namespace

std::shared_ptr<const Dataset>
concatenateDatasets(std::vector<std::shared_ptr<const Dataset>> parts) {
  if (parts.empty())
    throw std::invalid_argument("no datasets to concatenate");
  for (size_t p = 1; p < parts.size(); ++p)
    if (!sameSamples(parts[0]->spec(), parts[p]->spec()))
      throw std::invalid_argument(
          "dataset " + std::to_string(p) +
          " holds samples of another kind, shape or type than dataset 0's");
  if (parts.size() == 1)
    return parts[0];
  return std::make_shared<Concatenated>(std::move(parts));
}

struct SkipBadSamples::Log {
  std::mutex mutex;
  std::set<int64_t> skipped;
};

SkipBadSamples::SkipBadSamples(std::shared_ptr<const Dataset> dataset)
    : dataset_(std::move(dataset)), log_(std::make_shared<Log>()) {}

template <typename Read>
Sample SkipBadSamples::firstGood(int64_t index, Read read) const {
  const int64_t n = dataset_->size();
  for (int64_t step = 0; step < n; ++step) {
    int64_t candidate = (index + step) % n;
    try {
      return read(candidate);
    } catch (const DataError &e) {
      std::lock_guard<std::mutex> lock(log_->mutex);
      if (log_->skipped.insert(candidate).second)
        std::cerr << "skip_bad_samples: skipping " << e.what() << "\n";
    }
  }
  throw std::runtime_error("skip_bad_samples: none of the " +
                           std::to_string(n) + " samples can be read");
}

Sample SkipBadSamples::get(int64_t index) const {
  return firstGood(index, [&](int64_t i) { return dataset_->get(i); });
}

Sample SkipBadSamples::getCut(int64_t index,
                              const ImageCutPlanner &plan) const {
  return firstGood(index, [&](int64_t i) { return dataset_->getCut(i, plan); });
}

int64_t SkipBadSamples::skipped() const {
  std::lock_guard<std::mutex> lock(log_->mutex);
  return int64_t(log_->skipped.size());
}

} // namespace composer::runtime
