//===- BatchTimer.h - Wall time of training batches -------------*- C++ -*-===//
//
// What the progress bar and the speed monitor both measure: a batch's time
// runs from the previous BATCH_END (or FIT_START, EPOCH_START) to its own
// BATCH_END, so waiting for data counts; evaluation and checkpointing
// restart the clock, so they do not.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_LOGGERS_BATCHTIMER_H
#define COMPOSER_RUNTIME_LOGGERS_BATCHTIMER_H

#include "composer/Runtime/Event.h"
#include "composer/Runtime/State.h"

#include <chrono>
#include <optional>

namespace composer::runtime {

struct TimedBatch {
  double seconds;
  int64_t samples;
  /// The tokens the loop counted (0 for data without tokens).
  int64_t tokens = 0;
};

class BatchTimer {
public:
  using Clock = std::chrono::steady_clock;

  /// Feeds one event; at a timed BATCH_END, returns that batch.
  std::optional<TimedBatch> observe(Event event, const State &state) {
    switch (event) {
    case Event::FitStart:
    case Event::EpochStart:
    case Event::EvalEnd:
    case Event::BatchCheckpoint:
    case Event::EpochCheckpoint:
      mark_ = Clock::now();
      return std::nullopt;
    case Event::BatchStart:
      // Without a mark (a loop that fires only batch events) the batch
      // starts here.
      start_ = mark_ ? *mark_ : Clock::now();
      samplesAtStart_ = state.timestamp.sample;
      tokensAtStart_ = state.timestamp.token;
      batchSize_ = state.batch.size();
      return std::nullopt;
    case Event::BatchEnd:
      break;
    default:
      return std::nullopt;
    }
    Clock::time_point now = Clock::now();
    mark_ = now;
    if (!start_)
      return std::nullopt;
    double seconds = std::chrono::duration<double>(now - *start_).count();
    start_.reset();
    // The loop's own count where it advanced, else the batch as it started.
    int64_t samples = state.timestamp.sample > samplesAtStart_
                          ? state.timestamp.sample - samplesAtStart_
                          : batchSize_;
    return TimedBatch{seconds, samples, state.timestamp.token - tokensAtStart_};
  }

private:
  std::optional<Clock::time_point> mark_, start_;
  int64_t samplesAtStart_ = 0, tokensAtStart_ = 0, batchSize_ = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_LOGGERS_BATCHTIMER_H
