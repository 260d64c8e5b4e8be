//===- Metrics.h - Evaluation metrics, by name ------------------*- C++ -*-===//
//
// An evaluator (Trainer.h) updates its metrics with every batch's outputs
// and targets, adds their running totals across ranks, and logs each as
// metrics/<evaluator>/<Metric::name()>, as Composer logs torchmetrics'.
// Every metric registers itself from its own family's file
// (runtime/metrics/) with a MetricRegistration, as losses do; a recipe's
// `metrics:` lists them by name, with options.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_METRICS_H
#define COMPOSER_RUNTIME_METRICS_H

#include "composer/Runtime/Losses.h"
#include "composer/Runtime/Options.h"

#include <torch/types.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// A metric accumulated over an evaluation as running totals: sums that
/// ranks add together before the value is computed from them.
class Metric {
public:
  virtual ~Metric();
  /// The logged name ("Accuracy", "Top5Accuracy", "MIoU").
  virtual std::string name() const = 0;
  /// Adds one batch's predictions and targets to the totals. Throws
  /// std::invalid_argument naming the metric when they do not fit it.
  virtual void update(const torch::Tensor &outputs,
                      const torch::Tensor &target) = 0;
  /// The value over every batch since reset(), from `totals` (this rank's,
  /// or every rank's summed). Null when nothing was counted.
  virtual std::optional<double> compute(const torch::Tensor &totals) const = 0;

  /// The running totals, float64.
  const torch::Tensor &totals() const { return totals_; }
  void reset() { totals_.zero_(); }

protected:
  explicit Metric(int64_t size);
  /// Adds `values` (any shape, `size` elements in all) to the totals.
  void add(const torch::Tensor &values);
  /// totals[0] / totals[1], or null when totals[1] is 0 (nothing counted).
  static std::optional<double> ratio(const torch::Tensor &totals);

private:
  torch::Tensor totals_;
};

using MetricInfo = ComponentInfo<Metric>;

/// Every metric linked in, sorted by name.
std::vector<const MetricInfo *> getRegisteredMetrics();
/// The metric registered as `name`, or null.
const MetricInfo *findMetric(std::string_view name);
/// Creates the metric registered as `name`; throws std::invalid_argument
/// for an unknown name or bad options.
std::unique_ptr<Metric> createMetric(std::string_view name,
                                     const OptionValues &options = {});
/// Adds `info` to the registry; a name registered twice is noted as a conflict
/// (takeRegistrationConflicts).
void registerMetric(MetricInfo info);

template <typename MetricT, typename Options> class MetricRegistration {
public:
  MetricRegistration(std::string name,
                     std::initializer_list<OptionField<Options>> fields) {
    registerMetric(
        describeComponent<Metric, MetricT, Options>(std::move(name), fields));
  }
};

/// What an evaluator without `metrics` logs: Accuracy (of batches whose
/// targets are class indices), the mean of the recipe's `loss` per sample
/// as CrossEntropy, and, for a language model's [B, T, V] logits under
/// cross entropy, Perplexity.
std::vector<std::shared_ptr<Metric>>
createDefaultMetrics(std::shared_ptr<const Loss> loss);

/// The classes of `outputs`' logits: the last dimension of a language
/// model's [B, T, V], else dimension 1.
int64_t classDimension(const torch::Tensor &outputs);

/// Throws std::invalid_argument naming `metric` unless `target` holds class
/// indices for `outputs`: integers, shaped as the outputs without their
/// class dimension.
void checkClassTargets(const std::string &metric, const torch::Tensor &outputs,
                       const torch::Tensor &target);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_METRICS_H
