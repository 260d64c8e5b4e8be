//===- Callbacks.h - Progress, speed and stopping ---------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_CALLBACKS_H
#define COMPOSER_RUNTIME_CALLBACKS_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Time.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

namespace composer::runtime {

/// Shows epoch, batch, loss, throughput and ETA after every batch. An
/// interactive bar redraws one line with '\r'; otherwise (CI logs, files) it
/// prints a line every 10% of an epoch and at the epoch's end.
std::unique_ptr<Callback> createProgressBar(std::ostream &out,
                                            bool interactive);

/// Composer's SpeedMonitor: logs "throughput/batches_per_sec" and
/// "throughput/samples_per_sec" over the last `windowSize` batches once that
/// many have run, and "wall_clock/train" (seconds spent training) after every
/// batch. A batch's time runs from the end of the previous one (so data
/// loading counts) but leaves out evaluation and checkpointing.
std::unique_ptr<Callback> createSpeedMonitor(int64_t windowSize = 20);

/// Which way a monitored metric improves.
enum class MetricDirection {
  /// Lower for names with loss, error or perplexity in them (any case), as
  /// Composer decides, and with entropy (CrossEntropy); higher otherwise.
  Infer,
  Higher,
  Lower,
};

/// What a stopper watches: `monitor` (a Metric::name(), "Accuracy") of the
/// evaluator labelled `label`, after each of its evaluations. An evaluation
/// without that metric is a TrainingError naming the metrics it has.
struct MonitoredMetric {
  std::string monitor;
  std::string label = "eval";
  MetricDirection direction = MetricDirection::Infer;
};

/// Composer's EarlyStopper: stops the run once more than `patience` (epochs
/// or batches) has passed since the monitored metric last improved on its
/// best by more than `minDelta`.
std::unique_ptr<Callback> createEarlyStopper(MonitoredMetric metric,
                                             double minDelta, Time patience);

/// Composer's ThresholdStopper: stops the run as soon as the monitored
/// metric is better than `threshold`.
std::unique_ptr<Callback> createThresholdStopper(MonitoredMetric metric,
                                                 double threshold);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_CALLBACKS_H
