//===- CutOut.cpp - Zero random squares (DeVries & Taylor 2017) -----------===//
//
// Holes are drawn per image, as Composer's cutout_batch: a square of side
// `length` (rounded down to even, since it spans centre -/+ length/2) around
// a uniform centre, clipped at the borders.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct CutOutOptions {
  int64_t numHoles = 1;
  double length = 0.5;
};

class CutOut final : public Algorithm {
public:
  void checkData(const SampleSpec &spec) const override {
    requireImages(name(), spec);
  }
  explicit CutOut(const CutOutOptions &options)
      : numHoles_(options.numHoles), length_(options.length) {
    if (numHoles_ < 1)
      throwInvalidOption("cutout", "num_holes",
                         "must be >= 1, got " + std::to_string(numHoles_));
    if (!(length_ > 0))
      throwInvalidOption("cutout", "length",
                         "must be > 0, got " + std::to_string(length_));
  }

  std::string name() const override { return "cutout"; }

  bool match(Event event, const State &state) const override {
    return event == Event::AfterDataloader && state.batch.size() > 0 &&
           state.batch.input.dim() >= 3;
  }

  void apply(Event, State &state, Logger &) override {
    torch::Tensor x = state.batch.input;
    int64_t batch = x.size(0), height = x.size(-2), width = x.size(-1);
    int64_t side = length_ < 1 ? int64_t(length_ * std::min(height, width))
                               : int64_t(length_);
    int64_t half = side / 2;
    if (half == 0)
      return;
    torch::Generator gen = state.generatorFor(name());
    torch::Tensor cy = torch::randint(height, {batch, numHoles_, 1}, gen);
    torch::Tensor cx = torch::randint(width, {batch, numHoles_, 1}, gen);
    torch::Tensor rows = torch::arange(height, torch::kLong);
    torch::Tensor cols = torch::arange(width, torch::kLong);
    // [B, holes, H] and [B, holes, W] memberships; their outer product is the
    // hole, and any hole covering a pixel zeroes it.
    torch::Tensor inRows = (rows >= cy - half) & (rows < cy + half);
    torch::Tensor inCols = (cols >= cx - half) & (cols < cx + half);
    torch::Tensor holes =
        (inRows.unsqueeze(-1) & inCols.unsqueeze(-2)).any(/*dim=*/1);
    // Broadcast over every non-spatial dimension after the batch one.
    std::vector<int64_t> shape(x.dim(), 1);
    shape[0] = batch;
    shape[x.dim() - 2] = height;
    shape[x.dim() - 1] = width;
    state.batch.input = x.masked_fill(holes.view(shape).to(x.device()), 0);
  }

private:
  int64_t numHoles_;
  double length_;
};

const AlgorithmRegistration<CutOut, CutOutOptions> cutOutRegistration(
    "cutout", {{"num_holes", &CutOutOptions::numHoles, "squares per image"},
               {"length", &CutOutOptions::length,
                "side of a square: a fraction of the shorter side if < 1, "
                "else pixels"}});

} // namespace
} // namespace composer::runtime
