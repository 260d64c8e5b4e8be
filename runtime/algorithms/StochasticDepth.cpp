//===- StochasticDepth.cpp - Stochastic depth's drop-rate warm-up ---------===//
//
// The runtime half of stochastic depth (METHODS.md): composer-opt's
// --composer-stochastic-depth with drop-warmup > 0 scales every block's drop
// rate by the buffer `_composer_stochastic_depth.scale` (1 as exported).
// This algorithm ramps it linearly from 0 to 1 over the first `drop_warmup`
// of the run, set at every batch start, as Composer's StochasticDepth
// updates its modules' drop rates. Without drop_warmup in the recipe, the
// ramp is the fraction of the run the pass recorded (the buffer
// `_composer_stochastic_depth.warmup`); with neither, nothing changes.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Support/StochasticDepthState.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct StochasticDepthOptions {
  Time dropWarmup{0, TimeUnit::Duration};
};

class StochasticDepth final : public Algorithm {
public:
  explicit StochasticDepth(const StochasticDepthOptions &options)
      : dropWarmup_(options.dropWarmup) {
    if (!(dropWarmup_.value >= 0))
      throwInvalidOption("stochastic_depth", "drop_warmup",
                         "must be >= 0, got " +
                             std::to_string(dropWarmup_.value));
  }

  std::string name() const override { return "stochastic_depth"; }

  bool match(Event event, const State &) const override {
    return event == Event::BatchStart;
  }

  void apply(Event, State &state, Logger &logger) override {
    Time warmup = dropWarmup_;
    if (!(warmup.value > 0))
      if (torch::Tensor recorded =
              findBuffer(state, kStochasticDepthWarmupBuffer);
          recorded.defined())
        warmup = Time{recorded.item<double>(), TimeUnit::Duration};
    torch::Tensor scale = findBuffer(state, kStochasticDepthScaleBuffer);
    if (!scale.defined()) {
      if (warmup.value > 0)
        throw std::runtime_error(
            "stochastic_depth: the model has no " +
            std::string(kStochasticDepthScaleBuffer) +
            " buffer; run composer-opt --composer-stochastic-depth with "
            "drop-warmup > 0");
      return; // No warm-up: the rates are the pass's.
    }
    double warmupBatches = state.time.toBatches(warmup);
    double value =
        warmupBatches <= 0
            ? 1.0
            : std::min(1.0, double(state.timestamp.batch) / warmupBatches);
    torch::NoGradGuard noGrad;
    scale.fill_(value);
    logger.logMetrics({{"stochastic_depth/drop_rate_scale", value}},
                      state.timestamp.batch);
  }

private:
  static torch::Tensor findBuffer(const State &state, std::string_view key) {
    for (auto &[name, buffer] : namedBuffers(state.model))
      if (name == key)
        return buffer;
    return {};
  }

  Time dropWarmup_;
};

const AlgorithmRegistration<StochasticDepth, StochasticDepthOptions>
    stochasticDepthRegistration(
        "stochastic_depth",
        {{"drop_warmup", &StochasticDepthOptions::dropWarmup,
          "time over which the drop rates ramp up from 0 (default: "
          "the drop-warmup fraction composer-opt recorded)"}});

} // namespace
} // namespace composer::runtime
