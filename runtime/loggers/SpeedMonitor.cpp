//===- SpeedMonitor.cpp - Training throughput -----------------------------===//

#include "composer/Runtime/Callbacks.h"

#include <chrono>
#include <deque>
#include <optional>
#include <stdexcept>

namespace composer::runtime {

namespace {

using Clock = std::chrono::steady_clock;

class SpeedMonitor : public Callback {
public:
  explicit SpeedMonitor(int64_t windowSize) : windowSize_(windowSize) {
    if (windowSize < 1)
      throw std::invalid_argument("speed monitor: window_size must be >= 1");
  }

  void runEvent(Event event, State &state, Logger &logger) override {
    switch (event) {
    // Whatever ran since these (eval, checkpointing) is not training.
    case Event::FitStart:
    case Event::EpochStart:
    case Event::EvalEnd:
    case Event::BatchCheckpoint:
    case Event::EpochCheckpoint:
      mark_ = Clock::now();
      break;
    case Event::BatchStart:
      // Without a mark (a loop that fires only batch events) the batch starts
      // here; with one, the data loading before this event counts too.
      batchStart_ = mark_ ? *mark_ : Clock::now();
      samplesAtStart_ = state.timestamp.sample;
      batchSize_ = state.batch.size();
      break;
    case Event::BatchEnd:
      batchEnd(state, logger);
      break;
    default:
      break;
    }
  }

private:
  void batchEnd(State &state, Logger &logger) {
    if (!batchStart_)
      return;
    Clock::time_point now = Clock::now();
    double seconds = std::chrono::duration<double>(now - *batchStart_).count();
    batchStart_.reset();
    mark_ = now;
    // The loop's own count where it advanced, else the batch as it started.
    int64_t samples = state.timestamp.sample > samplesAtStart_
                          ? state.timestamp.sample - samplesAtStart_
                          : batchSize_;
    window_.push_back({seconds, samples});
    if (int64_t(window_.size()) > windowSize_)
      window_.pop_front();
    trainSeconds_ += seconds;

    std::map<std::string, double> metrics{{"wall_clock/train", trainSeconds_}};
    if (int64_t(window_.size()) == windowSize_) {
      double windowSeconds = 0;
      int64_t windowSamples = 0;
      for (const Entry &entry : window_) {
        windowSeconds += entry.seconds;
        windowSamples += entry.samples;
      }
      if (windowSeconds > 0) {
        metrics["throughput/batches_per_sec"] =
            double(window_.size()) / windowSeconds;
        metrics["throughput/samples_per_sec"] =
            double(windowSamples) / windowSeconds;
      }
    }
    logger.logMetrics(metrics, state.timestamp.batch);
  }

  struct Entry {
    double seconds;
    int64_t samples;
  };

  int64_t windowSize_;
  std::deque<Entry> window_;
  double trainSeconds_ = 0;
  std::optional<Clock::time_point> mark_, batchStart_;
  int64_t samplesAtStart_ = 0, batchSize_ = 0;
};

} // namespace

std::unique_ptr<Callback> createSpeedMonitor(int64_t windowSize) {
  return std::make_unique<SpeedMonitor>(windowSize);
}

} // namespace composer::runtime
