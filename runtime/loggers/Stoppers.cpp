//===- Stoppers.cpp - early_stopper and threshold_stopper -----------------===//
//
// Both watch one metric of one evaluator at EVAL_END and ask the run to stop
// (State::stopRequested), which the trainer honours after the batch or
// epoch in progress, as Composer's state.stop_training() does.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/Options.h"
#include "composer/Runtime/State.h"
#include "composer/Runtime/TrainingStep.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace composer::runtime {
namespace {

/// Whether `value` is better than `reference` for `metric`.
bool better(const MonitoredMetric &metric, double value, double reference) {
  bool lower = metric.direction == MetricDirection::Lower;
  if (metric.direction == MetricDirection::Infer) {
    std::string name = metric.monitor;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    for (const char *word : {"loss", "error", "perplexity", "entropy"})
      lower = lower || name.find(word) != std::string::npos;
  }
  return lower ? value < reference : value > reference;
}

/// The monitored value after an evaluation of its evaluator; nullopt at
/// any other event.
std::optional<double> observe(const MonitoredMetric &metric, Event event,
                              const State &state, const char *callback) {
  if (event != Event::EvalEnd || state.evalLabel != metric.label)
    return std::nullopt;
  auto found = state.evalMetrics.find(metric.monitor);
  if (found != state.evalMetrics.end())
    return found->second;
  std::vector<std::string> names;
  for (const auto &[name, value] : state.evalMetrics)
    names.push_back(name);
  throw TrainingError(std::string(callback) + ": evaluator '" + metric.label +
                      "' has no metric '" + metric.monitor +
                      "'; it logs: " + joinNames(names));
}

/// What a recipe gives either stopper; `comp` is "higher", "lower" or
/// empty (inferred from the name).
struct StopperOptions {
  std::string monitor;
  std::string dataloaderLabel = "eval";
  std::string comp;
  double minDelta = 0;
  Time patience{1, TimeUnit::Epoch};
  double threshold = 0;
};

MonitoredMetric monitoredMetric(const char *callback,
                                const StopperOptions &options) {
  MonitoredMetric metric{options.monitor, options.dataloaderLabel};
  if (options.comp == "higher")
    metric.direction = MetricDirection::Higher;
  else if (options.comp == "lower")
    metric.direction = MetricDirection::Lower;
  else if (!options.comp.empty())
    throwInvalidOption(callback, "comp",
                       "must be 'higher' or 'lower' (which way the metric "
                       "improves), got '" +
                           options.comp + "'");
  return metric;
}

class EarlyStopper final : public Callback {
public:
  EarlyStopper(MonitoredMetric metric, double minDelta, Time patience)
      : metric_(std::move(metric)), minDelta_(minDelta), patience_(patience) {
    if (patience.unit != TimeUnit::Epoch && patience.unit != TimeUnit::Batch)
      throwInvalidOption("early_stopper", "patience",
                         "must be in epochs or batches, got " + patience.str());
  }
  explicit EarlyStopper(const StopperOptions &options)
      : EarlyStopper(monitoredMetric("early_stopper", options),
                     options.minDelta, options.patience) {}

  void runEvent(Event event, State &state, Logger &) override {
    std::optional<double> value =
        observe(metric_, event, state, "early_stopper");
    if (!value)
      return;
    if (!best_ || (better(metric_, *value, *best_) &&
                   std::abs(*value - *best_) > minDelta_)) {
      best_ = value;
      bestAt_ = state.timestamp;
    }
    const Timestamp &now = state.timestamp;
    int64_t since = patience_.unit == TimeUnit::Epoch
                        ? now.epoch - bestAt_.epoch
                        : now.batch - bestAt_.batch;
    if (double(since) > patience_.value) {
      state.stopRequested = true;
      state.stopReason =
          "early_stopper: " + metric_.monitor + " has not improved for " +
          std::to_string(since) +
          (patience_.unit == TimeUnit::Epoch ? " epochs" : " batches");
    }
  }

private:
  MonitoredMetric metric_;
  double minDelta_;
  Time patience_;
  std::optional<double> best_;
  Timestamp bestAt_;
};

class ThresholdStopper final : public Callback {
public:
  ThresholdStopper(MonitoredMetric metric, double threshold)
      : metric_(std::move(metric)), threshold_(threshold) {}
  explicit ThresholdStopper(const StopperOptions &options)
      : ThresholdStopper(monitoredMetric("threshold_stopper", options),
                         options.threshold) {}

  void runEvent(Event event, State &state, Logger &) override {
    std::optional<double> value =
        observe(metric_, event, state, "threshold_stopper");
    if (value && better(metric_, *value, threshold_)) {
      state.stopRequested = true;
      state.stopReason = "threshold_stopper: " + metric_.monitor + " reached " +
                         std::to_string(*value);
    }
  }

private:
  MonitoredMetric metric_;
  double threshold_;
};

const char *const kMonitorDoc = "the metric watched (Metric::name())";
const char *const kLabelDoc = "the evaluator whose metric it is";
const char *const kCompDoc =
    "'higher' or 'lower' is better; empty: lower for names with loss, "
    "error, perplexity or entropy";

const CallbackRegistration<EarlyStopper, StopperOptions>
    earlyStopperRegistration(
        "early_stopper",
        {{"monitor", &StopperOptions::monitor, kMonitorDoc, true},
         {"dataloader_label", &StopperOptions::dataloaderLabel, kLabelDoc},
         {"comp", &StopperOptions::comp, kCompDoc},
         {"min_delta", &StopperOptions::minDelta,
          "the least change that counts as an improvement"},
         {"patience", &StopperOptions::patience,
          "how long without improvement before stopping"}});

const CallbackRegistration<ThresholdStopper, StopperOptions>
    thresholdStopperRegistration(
        "threshold_stopper",
        {{"monitor", &StopperOptions::monitor, kMonitorDoc, true},
         {"dataloader_label", &StopperOptions::dataloaderLabel, kLabelDoc},
         {"comp", &StopperOptions::comp, kCompDoc},
         {"threshold", &StopperOptions::threshold,
          "stop once the metric is better than this", true}});

} // namespace

std::unique_ptr<Callback> createEarlyStopper(MonitoredMetric metric,
                                             double minDelta, Time patience) {
  return std::make_unique<EarlyStopper>(std::move(metric), minDelta, patience);
}

std::unique_ptr<Callback> createThresholdStopper(MonitoredMetric metric,
                                                 double threshold) {
  return std::make_unique<ThresholdStopper>(std::move(metric), threshold);
}

} // namespace composer::runtime
