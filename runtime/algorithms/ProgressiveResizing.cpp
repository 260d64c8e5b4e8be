//===- ProgressiveResizing.cpp - Small images early in training -----------===//
//
// The scale stays at `initialScale` until `delayFraction` of the run, ramps
// linearly to 1 at 1 - `finetuneFraction` and stays there. Classification
// targets do not depend on the image size, so only inputs change. `crop`
// takes a window at a position drawn per batch from the batch's generator.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct ProgressiveResizingOptions {
  double initialScale = 0.5;
  double delayFraction = 0.5;
  double finetuneFraction = 0.2;
  int64_t sizeIncrement = 4;
  std::string mode = "resize";
};

class ProgressiveResizing final : public Algorithm {
public:
  void checkData(const SampleSpec &spec) const override {
    requireImages(name(), spec);
  }
  explicit ProgressiveResizing(const ProgressiveResizingOptions &options)
      : initialScale_(options.initialScale),
        delayFraction_(options.delayFraction),
        finetuneFraction_(options.finetuneFraction),
        sizeIncrement_(options.sizeIncrement), crop_(options.mode == "crop") {
    const char *algorithm = "progressive_resizing";
    auto fail = [&](const char *option, const std::string &problem) {
      throwInvalidOption(algorithm, option, problem);
    };
    checkOptionInterval(algorithm, "initial_scale", initialScale_, 0, 1,
                        IntervalEnds::OpenLow);
    checkOptionInterval(algorithm, "delay_fraction", delayFraction_, 0, 1);
    checkOptionInterval(algorithm, "finetune_fraction", finetuneFraction_, 0,
                        1);
    if (delayFraction_ + finetuneFraction_ > 1)
      throw InvalidOption(
          {"finetune_fraction", "delay_fraction"},
          "progressive_resizing: delay_fraction + finetune_fraction must be "
          "<= 1, got " +
              std::to_string(delayFraction_ + finetuneFraction_));
    if (sizeIncrement_ < 1)
      fail("size_increment",
           "must be >= 1, got " + std::to_string(sizeIncrement_));
    if (options.mode != "resize" && options.mode != "crop")
      fail("mode", "must be 'resize' or 'crop', got '" + options.mode + "'");
  }

  std::string name() const override { return "progressive_resizing"; }

  bool match(Event event, const State &state) const override {
    return event == Event::AfterDataloader && state.batch.size() > 0 &&
           state.batch.input.dim() == 4;
  }

  void apply(Event, State &state, Logger &) override {
    double scale = scaleAt(state.fractionDone());
    if (scale >= 1)
      return; // rounding would shrink sides that are not multiples
    torch::Tensor x = state.batch.input;
    int64_t height = x.size(2), width = x.size(3);
    int64_t newHeight = scaledSide(height, scale);
    int64_t newWidth = scaledSide(width, scale);
    if (newHeight == height && newWidth == width)
      return;
    if (crop_) {
      // One window per batch at a uniform position (Composer's _make_crop;
      // every position, where Composer's randint misses the last one).
      torch::Generator gen = state.generatorFor(name());
      int64_t top =
          torch::randint(height - newHeight + 1, {1}, gen).item<int64_t>();
      int64_t left =
          torch::randint(width - newWidth + 1, {1}, gen).item<int64_t>();
      state.batch.input = x.slice(2, top, top + newHeight)
                              .slice(3, left, left + newWidth)
                              .contiguous(x.suggest_memory_format());
      return;
    }
    namespace F = torch::nn::functional;
    state.batch.input =
        F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{newHeight, newWidth})
                              .mode(torch::kBilinear)
                              .align_corners(false));
  }

private:
  double scaleAt(double fraction) const {
    double ramp = 1 - finetuneFraction_ - delayFraction_;
    double progress;
    if (fraction < delayFraction_)
      progress = 0;
    else if (ramp <= 0)
      progress = 1;
    else
      progress = std::min(1.0, (fraction - delayFraction_) / ramp);
    return initialScale_ + (1 - initialScale_) * progress;
  }

  int64_t scaledSide(int64_t side, double scale) const {
    // The epsilon keeps exact products (32 * 0.75 / 4) from flooring down.
    int64_t steps = int64_t(std::floor(side * scale / sizeIncrement_ + 1e-9));
    return std::min(side, std::max<int64_t>(1, steps) * sizeIncrement_);
  }

  double initialScale_, delayFraction_, finetuneFraction_;
  int64_t sizeIncrement_;
  bool crop_;
};

const AlgorithmRegistration<ProgressiveResizing, ProgressiveResizingOptions>
    progressiveResizingRegistration(
        "progressive_resizing",
        {{"initial_scale", &ProgressiveResizingOptions::initialScale,
          "scale of the first batches"},
         {"delay_fraction", &ProgressiveResizingOptions::delayFraction,
          "fraction of the run at the initial scale"},
         {"finetune_fraction", &ProgressiveResizingOptions::finetuneFraction,
          "fraction of the run at full size, at the end"},
         {"size_increment", &ProgressiveResizingOptions::sizeIncrement,
          "sides are rounded down to a multiple of this"},
         {"mode", &ProgressiveResizingOptions::mode,
          "'resize' (bilinear) or 'crop' (at a random position)"}});

} // namespace
} // namespace composer::runtime
