//===- SpeedMonitor.cpp - Training throughput -----------------------------===//

#include "BatchTimer.h"
#include "composer/Runtime/Callbacks.h"

#include <deque>
#include <stdexcept>

namespace composer::runtime {

namespace {

class SpeedMonitor : public Callback {
public:
  explicit SpeedMonitor(int64_t windowSize) : windowSize_(windowSize) {
    if (windowSize < 1)
      throw std::invalid_argument("speed monitor: window_size must be >= 1");
  }

  void runEvent(Event event, State &state, Logger &logger) override {
    if (std::optional<TimedBatch> batch = timer_.observe(event, state))
      batchEnd(*batch, state, logger);
  }

private:
  void batchEnd(const TimedBatch &batch, State &state, Logger &logger) {
    auto [seconds, samples] = batch;
    window_.push_back({seconds, samples});
    if (int64_t(window_.size()) > windowSize_)
      window_.pop_front();
    trainSeconds_ += seconds;

    std::map<std::string, double> metrics{{"wall_clock/train", trainSeconds_}};
    if (int64_t(window_.size()) == windowSize_) {
      double windowSeconds = 0;
      int64_t windowSamples = 0;
      for (const TimedBatch &entry : window_) {
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

  int64_t windowSize_;
  std::deque<TimedBatch> window_;
  double trainSeconds_ = 0;
  BatchTimer timer_;
};

} // namespace

std::unique_ptr<Callback> createSpeedMonitor(int64_t windowSize) {
  return std::make_unique<SpeedMonitor>(windowSize);
}

} // namespace composer::runtime
