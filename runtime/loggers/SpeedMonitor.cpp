//===- SpeedMonitor.cpp - Training throughput and MFU ---------------------===//

#include "BatchTimer.h"
#include "composer/Runtime/Callbacks.h"
#include "composer/Support/PeakFlops.h"

#include <deque>
#include <iostream>
#include <stdexcept>

namespace composer::runtime {

namespace {

/// The model's `composer_flops_per_sample` attribute, or 0.
double modelFlopsPerSample(const torch::jit::Module &model) {
  const char *attribute = "composer_flops_per_sample";
  try {
    if (!model.hasattr(attribute))
      return 0;
    c10::IValue value = model.attr(attribute);
    return value.isDouble() || value.isInt() ? value.toScalar().toDouble() : 0;
  } catch (const c10::Error &) {
    return 0; // a state without a model (callback tests)
  }
}

class SpeedMonitor : public Callback {
public:
  explicit SpeedMonitor(const SpeedMonitorOptions &options)
      : options_(options) {
    if (options.windowSize < 1)
      throw std::invalid_argument("speed monitor: window_size must be >= 1");
    if (options.flopsPerSample < 0 || options.peakGflops < 0)
      throw std::invalid_argument(
          "speed monitor: flops_per_sample and peak_gflops must be >= 0");
  }

  void runEvent(Event event, State &state, Logger &logger) override {
    if (event == Event::FitStart)
      prepareFlops(state);
    if (std::optional<TimedBatch> batch = timer_.observe(event, state))
      batchEnd(*batch, state, logger);
  }

private:
  /// FLOPs per sample and the peak, or a note that MFU is unknown.
  void prepareFlops(const State &state) {
    flopsPerSample_ = options_.flopsPerSample;
    if (flopsPerSample_ == 0)
      flopsPerSample_ = modelFlopsPerSample(state.model);
    peakFlops_ = options_.peakGflops * 1e9;
    if (peakFlops_ == 0 && state.device.is_cpu()) {
      support::PeakFlops peak = support::detectPeakFlops();
      bool bf16 = state.precision == Precision::AmpBF16;
      peakFlops_ = (bf16 ? peak.bf16 : peak.fp32) * 1e9;
    }
    if (flopsPerSample_ == 0 && !noted_) {
      std::cerr << "composer-train: speed_monitor: MFU unknown: no "
                   "flops_per_sample in the recipe, and the model has no "
                   "composer_flops_per_sample\n";
      noted_ = true;
    } else if (peakFlops_ == 0 && !noted_) {
      std::cerr << "composer-train: speed_monitor: MFU unknown: no peak for "
                   "device "
                << state.device << "; set peak_gflops\n";
      noted_ = true;
    }
  }

  void batchEnd(const TimedBatch &batch, State &state, Logger &logger) {
    window_.push_back(batch);
    if (int64_t(window_.size()) > options_.windowSize)
      window_.pop_front();
    trainSeconds_ += batch.seconds;

    std::map<std::string, double> metrics{{"wall_clock/train", trainSeconds_}};
    if (int64_t(window_.size()) == options_.windowSize) {
      double seconds = 0;
      int64_t samples = 0, tokens = 0;
      for (const TimedBatch &entry : window_) {
        seconds += entry.seconds;
        samples += entry.samples;
        tokens += entry.tokens;
      }
      if (seconds > 0) {
        double samplesPerSecond = double(samples) / seconds;
        metrics["throughput/batches_per_sec"] =
            double(window_.size()) / seconds;
        metrics["throughput/samples_per_sec"] = samplesPerSecond;
        if (tokens > 0)
          metrics["throughput/tokens_per_sec"] = double(tokens) / seconds;
        if (flopsPerSample_ > 0) {
          // Samples count the whole group's; a device does its share.
          double flops = flopsPerSample_ * samplesPerSecond;
          double device = flops / double(state.worldSize);
          metrics["throughput/flops_per_sec"] = flops;
          metrics["throughput/device/flops_per_sec"] = device;
          if (peakFlops_ > 0)
            metrics["throughput/device/mfu"] = device / peakFlops_;
        }
      }
    }
    logger.logMetrics(metrics, state.timestamp.batch);
  }

  SpeedMonitorOptions options_;
  double flopsPerSample_ = 0, peakFlops_ = 0;
  bool noted_ = false;
  std::deque<TimedBatch> window_;
  double trainSeconds_ = 0;
  BatchTimer timer_;
};

const CallbackRegistration<SpeedMonitor, SpeedMonitorOptions>
    speedMonitorRegistration(
        "speed_monitor",
        {{"window_size", &SpeedMonitorOptions::windowSize,
          "batches the throughput is averaged over"},
         {"flops_per_sample", &SpeedMonitorOptions::flopsPerSample,
          "training FLOPs of one sample, for MFU (0: the model's "
          "composer_flops_per_sample)"},
         {"peak_gflops", &SpeedMonitorOptions::peakGflops,
          "one device's peak GFLOP/s (0: this CPU's, from the peak table)"}});

} // namespace

std::unique_ptr<Callback> createSpeedMonitor(SpeedMonitorOptions options) {
  return std::make_unique<SpeedMonitor>(options);
}

} // namespace composer::runtime
