//===- GyroDropout.cpp - GyroDropout's re-selection period ----------------===//
//
// The runtime half of GyroDropout (METHODS.md): composer-opt's
// --composer-gyro-dropout re-selects each site's active masks every
// `_composer_gyro_dropout.period` training steps, a buffer it exports as its
// `period` option, or 0 for "one epoch", which only the trainer knows. At
// fit start this algorithm sets the buffer: to the recipe's `period` if
// given, else to the steps of one epoch unless the buffer already holds a
// period (composer-opt's, or a resumed run's). The masks, the active
// indices and the step counters are buffers too, so a checkpoint carries
// them and a resumed run continues where it stopped.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Support/GyroDropoutState.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct GyroDropoutOptions {
  Time period{0, TimeUnit::Batch};
};

class GyroDropout final : public Algorithm {
public:
  explicit GyroDropout(const GyroDropoutOptions &options)
      : period_(options.period) {
    if (!(period_.value >= 0))
      throwInvalidOption("gyro_dropout", "period",
                         "must be >= 0, got " + period_.str());
  }

  std::string name() const override { return "gyro_dropout"; }

  bool match(Event event, const State &) const override {
    return event == Event::FitStart;
  }

  void apply(Event, State &state, Logger &logger) override {
    torch::Tensor buffer;
    for (auto &[name, tensor] : namedBuffers(state.model))
      if (name == kGyroDropoutPeriodBuffer)
        buffer = tensor;
    if (!buffer.defined())
      throw std::runtime_error(
          "gyro_dropout: the model has no " +
          std::string(kGyroDropoutPeriodBuffer) +
          " buffer; run composer-opt --composer-gyro-dropout");
    int64_t steps;
    if (period_.value > 0)
      steps = std::max<int64_t>(1, std::llround(state.time.toBatches(period_)));
    else if (int64_t recorded = buffer.item<int64_t>(); recorded > 0)
      steps = recorded;
    else
      steps = state.time.batchesPerEpoch;
    torch::NoGradGuard noGrad;
    buffer.fill_(steps);
    logger.logMetrics({{"gyro_dropout/period", double(steps)}},
                      state.timestamp.batch);
  }

private:
  Time period_;
};

const AlgorithmRegistration<GyroDropout, GyroDropoutOptions>
    gyroDropoutRegistration(
        "gyro_dropout",
        {{"period", &GyroDropoutOptions::period,
          "training steps between re-selections of the active "
          "masks (default: composer-opt's period if it set one, "
          "else one epoch)"}});

} // namespace
} // namespace composer::runtime
