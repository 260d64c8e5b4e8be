//===- LabelSmoothing.cpp - Targets y(1-e) + e/K --------------------------===//
//
// As Composer: the smoothed targets are only what the loss sees; the original
// targets come back at AFTER_LOSS so training metrics still compare indices.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct LabelSmoothingOptions {
  double smoothing = 0.1;
};

class LabelSmoothing final : public Algorithm {
public:
  void checkData(const SampleSpec &spec) const override {
    requireClassTargets(name(), spec);
  }
  explicit LabelSmoothing(const LabelSmoothingOptions &options)
      : smoothing_(options.smoothing) {
    checkOptionInterval("label_smoothing", "smoothing", smoothing_, 0, 1);
  }

  std::string name() const override { return "label_smoothing"; }

  bool match(Event event, const State &state) const override {
    if (event == Event::BeforeLoss)
      return state.batch.target.defined() && state.outputs.defined();
    return event == Event::AfterLoss && original_.defined();
  }

  void apply(Event event, State &state, Logger &) override {
    if (event == Event::AfterLoss) {
      state.batch.target = original_;
      original_ = torch::Tensor();
      return;
    }
    torch::Tensor target = state.batch.target;
    int64_t numClasses = state.outputs.size(-1);
    original_ = target;
    // Index targets become one-hot probabilities; mixed ones stay as they are.
    torch::Tensor probs =
        target.is_floating_point()
            ? target
            : torch::one_hot(target, numClasses).to(torch::kFloat);
    state.batch.target = probs * (1 - smoothing_) + smoothing_ / numClasses;
  }

private:
  double smoothing_;
  torch::Tensor original_;
};

const AlgorithmRegistration<LabelSmoothing, LabelSmoothingOptions>
    labelSmoothingRegistration(
        "label_smoothing",
        {{"smoothing", &LabelSmoothingOptions::smoothing,
          "weight e of the uniform distribution in y(1-e) + e/K"}});

} // namespace
} // namespace composer::runtime
