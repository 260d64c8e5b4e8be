//===- Callbacks.h - Progress, speed and stopping ---------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_CALLBACKS_H
#define COMPOSER_RUNTIME_CALLBACKS_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Options.h"
#include "composer/Runtime/Time.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// Callbacks by name, as a recipe's `callbacks:` names them. The built-in
/// ones register themselves from their files (runtime/loggers/), and a
/// plugin's the same way (CallbackRegistration), each with its options.
using CallbackInfo = ComponentInfo<Callback>;

/// Every callback linked or loaded in, sorted by name.
std::vector<const CallbackInfo *> getRegisteredCallbacks();
/// The callback registered as `name`, or null.
const CallbackInfo *findCallback(std::string_view name);
/// Creates the callback registered as `name`; throws std::invalid_argument
/// for an unknown name or bad options.
std::unique_ptr<Callback> createCallback(std::string_view name,
                                         const OptionValues &options = {});
/// Adds `info`; a name registered twice is noted as a conflict
/// (takeRegistrationConflicts).
void registerCallback(CallbackInfo info);

/// Registers `CallbackT`, constructed from `Options`, at static
/// initialization.
template <typename CallbackT, typename Options> class CallbackRegistration {
public:
  CallbackRegistration(std::string name,
                       std::initializer_list<OptionField<Options>> fields) {
    registerCallback(describeComponent<Callback, CallbackT, Options>(
        std::move(name), fields));
  }
};

/// Shows epoch, batch, loss, throughput and ETA after every batch. An
/// interactive bar redraws one line with '\r'; otherwise (CI logs, files) it
/// prints a line every 10% of an epoch and at the epoch's end.
std::unique_ptr<Callback> createProgressBar(std::ostream &out,
                                            bool interactive);

struct SpeedMonitorOptions {
  int64_t windowSize = 20;
  /// Training FLOPs (forward and backward) of one sample. 0: the model's
  /// `composer_flops_per_sample` attribute when it has one; without either,
  /// MFU is unknown (said once on stderr, never an error).
  double flopsPerSample = 0;
  /// One device's peak in GFLOP/s. 0: the peak table (Support/PeakFlops.h)
  /// for the run's precision on a CPU; on another device MFU is unknown.
  double peakGflops = 0;
};

/// Composer's SpeedMonitor: logs "throughput/batches_per_sec",
/// "throughput/samples_per_sec" and, for token data,
/// "throughput/tokens_per_sec" over the last `windowSize` batches once that
/// many have run, with FLOPs "throughput/flops_per_sec",
/// "throughput/device/flops_per_sec" and "throughput/device/mfu"; and
/// "wall_clock/train" (seconds spent training) after every batch. A batch's
/// time runs from the end of the previous one (so data loading counts) but
/// leaves out evaluation and checkpointing.
std::unique_ptr<Callback> createSpeedMonitor(SpeedMonitorOptions options = {});

/// Composer's MemoryMonitor, for the host: "memory/rss_bytes" and
/// "memory/peak_rss_bytes" of this process after every batch.
std::unique_ptr<Callback> createMemoryMonitor();

/// Composer's OptimizerMonitor: after every batch, the L2 norms of the
/// gradients the optimizer used ("l2_norm/grad/global") and, with
/// `perLayer`, of each parameter's gradient and value
/// ("l2_norm/grad/<name>", "l2_norm/param/<name>").
std::unique_ptr<Callback> createOptimizerMonitor(bool perLayer = true);

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
