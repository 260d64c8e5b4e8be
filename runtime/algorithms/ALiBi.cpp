//===- ALiBi.cpp - ALiBi's shorter training sequences ---------------------===//
//
// The runtime half of ALiBi (METHODS.md): a model with composer-opt's
// --composer-alibi biases trains on sequences cut to
// `train_sequence_length_scaling` of their length and runs on any length.
// Training token batches ([B, T] inputs and their [B, T] targets) keep their
// first floor(T * scaling) tokens, at least one, at AFTER_DATALOADER, as
// Composer's Alibi changes the batch there; evaluation batches never pass
// that event and keep their length. Time in tokens counts the tokens trained
// on (State::batchTokens).
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct AlibiOptions {
  double trainSequenceLengthScaling = 0.25;
};

class Alibi final : public Algorithm {
public:
  explicit Alibi(const AlibiOptions &options)
      : scaling_(options.trainSequenceLengthScaling) {
    checkOptionInterval("alibi", "train_sequence_length_scaling", scaling_, 0,
                        1, IntervalEnds::OpenLow);
  }

  std::string name() const override { return "alibi"; }

  bool match(Event event, const State &state) const override {
    const torch::Tensor &input = state.batch.input;
    return event == Event::AfterDataloader && state.batch.size() > 0 &&
           input.dim() == 2 && !torch::isFloatingType(input.scalar_type());
  }

  void apply(Event, State &state, Logger &) override {
    Batch &batch = state.batch;
    int64_t length = batch.input.size(1);
    int64_t kept =
        std::max<int64_t>(1, int64_t(std::floor(double(length) * scaling_)));
    if (kept >= length)
      return;
    batch.input = batch.input.narrow(1, 0, kept).contiguous();
    if (batch.target.dim() >= 2 && batch.target.size(1) == length)
      batch.target = batch.target.narrow(1, 0, kept).contiguous();
    // Per-token columns (attention masks) are cut alike.
    for (auto &[name, values] : batch.columns)
      if (values.dim() >= 2 && values.size(1) == length)
        values = values.narrow(1, 0, kept).contiguous();
    state.batchTokens = state.batchTokens / length * kept;
  }

private:
  double scaling_;
};

const AlgorithmRegistration<Alibi, AlibiOptions> alibiRegistration(
    "alibi", {{"train_sequence_length_scaling",
               &AlibiOptions::trainSequenceLengthScaling,
               "fraction of each training sequence kept (its first tokens)"}});

} // namespace
} // namespace composer::runtime
