//===- ColOut.cpp - Drop random rows and columns (Composer) ---------------===//
//
// Keeps int((1 - p_row) H) rows and int((1 - p_col) W) columns, chosen at
// random and kept in order, so images shrink (a cheaper step) but stay whole
// images. `batch`: one choice for the batch at AFTER_DATALOADER, from the
// batch's generator; otherwise one per sample, in the loader's workers (a
// dataset transform after normalization, as Composer adds it), from the
// sample's own stream. Classification targets are unchanged.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct ColOutOptions {
  double pRow = 0.15;
  double pCol = 0.15;
  bool batch = true;
};

/// Composer's count, int((1 - p) * size); never below one.
int64_t keptCount(double p, int64_t size) {
  return std::max<int64_t>(1, int64_t((1 - p) * double(size)));
}

/// `count` of [0, size) drawn without replacement, in increasing order.
std::vector<int64_t> keptIndices(int64_t size, int64_t count,
                                 SampleRandom &random) {
  std::vector<int64_t> all(static_cast<size_t>(size));
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = 0; i < count; ++i)
    std::swap(all[i], all[i + random.below(size - i)]);
  all.resize(size_t(count));
  std::sort(all.begin(), all.end());
  return all;
}

class ColOutTransform final : public SampleTransform {
public:
  ColOutTransform(double pRow, double pCol) : pRow_(pRow), pCol_(pCol) {}

  std::string name() const override { return "colout"; }
  SampleStage stage() const override { return SampleStage::Normalized; }

  std::vector<int64_t> outputShape(std::vector<int64_t> shape) const override {
    shape[1] = keptCount(pRow_, shape[1]);
    shape[2] = keptCount(pCol_, shape[2]);
    return shape;
  }

  torch::Tensor apply(const torch::Tensor &sample,
                      SampleRandom &random) const override {
    int64_t c = sample.size(0), h = sample.size(1), w = sample.size(2);
    std::vector<int64_t> rows = keptIndices(h, keptCount(pRow_, h), random);
    std::vector<int64_t> cols = keptIndices(w, keptCount(pCol_, w), random);
    torch::Tensor in = sample.contiguous();
    torch::Tensor out = torch::empty(
        {c, int64_t(rows.size()), int64_t(cols.size())}, in.options());
    const float *src = in.data_ptr<float>();
    float *dst = out.data_ptr<float>();
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t row : rows)
        for (int64_t col : cols)
          *dst++ = src[(ch * h + row) * w + col];
    return out;
  }

private:
  double pRow_, pCol_;
};

class ColOut final : public Algorithm {
public:
  void checkData(const SampleSpec &spec) const override {
    requireImages(name(), spec);
  }
  explicit ColOut(const ColOutOptions &options)
      : pRow_(options.pRow), pCol_(options.pCol), batch_(options.batch) {
    checkOptionInterval("colout", "p_row", pRow_, 0, 1, IntervalEnds::OpenHigh);
    checkOptionInterval("colout", "p_col", pCol_, 0, 1, IntervalEnds::OpenHigh);
  }

  std::string name() const override { return "colout"; }

  bool match(Event event, const State &state) const override {
    if (!batch_)
      return event == Event::FitStart && state.trainLoader;
    return event == Event::AfterDataloader && state.batch.size() > 0 &&
           state.batch.input.dim() >= 3;
  }

  void apply(Event, State &state, Logger &) override {
    if (!batch_) {
      state.trainLoader->setSampleTransform(
          std::make_shared<ColOutTransform>(pRow_, pCol_));
      return;
    }
    torch::Tensor x = state.batch.input;
    int64_t height = x.size(-2), width = x.size(-1);
    torch::Generator gen = state.generatorFor(name());
    auto kept = [&](int64_t size, double p) {
      return std::get<0>(torch::randperm(size, gen, torch::kLong)
                             .narrow(0, 0, keptCount(p, size))
                             .sort())
          .to(x.device());
    };
    torch::Tensor rows = kept(height, pRow_), cols = kept(width, pCol_);
    state.batch.input =
        x.index_select(-2, rows).index_select(-1, cols).contiguous(
            x.suggest_memory_format());
  }

private:
  double pRow_, pCol_;
  bool batch_;
};

const AlgorithmRegistration<ColOut, ColOutOptions> colOutRegistration(
    "colout",
    {{"p_row", &ColOutOptions::pRow, "fraction of rows dropped"},
     {"p_col", &ColOutOptions::pCol, "fraction of columns dropped"},
     {"batch", &ColOutOptions::batch,
      "one choice for the batch (true) or one per sample, in the loader"}});

} // namespace
} // namespace composer::runtime
