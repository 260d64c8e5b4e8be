//===- Registry.cpp - Evaluation metrics, by name -------------------------===//

#include "composer/Runtime/Metrics.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

ComponentRegistry<Metric> &metricRegistry() {
  static ComponentRegistry<Metric> metrics("metric");
  return metrics;
}

} // namespace

Metric::~Metric() = default;

Metric::Metric(int64_t size) : totals_(torch::zeros({size}, torch::kDouble)) {}

void Metric::add(const torch::Tensor &values) {
  totals_.add_(values.detach().reshape({-1}).to(torch::kCPU, torch::kDouble));
}

std::optional<double> Metric::ratio(const torch::Tensor &totals) {
  double counted = totals[1].item<double>();
  if (counted == 0)
    return std::nullopt;
  return totals[0].item<double>() / counted;
}

std::vector<const MetricInfo *> getRegisteredMetrics() {
  return metricRegistry().all();
}

const MetricInfo *findMetric(std::string_view name) {
  return metricRegistry().find(name);
}

std::unique_ptr<Metric> createMetric(std::string_view name,
                                     const OptionValues &options) {
  return metricRegistry().create(name, options);
}

void registerMetric(MetricInfo info) { metricRegistry().add(std::move(info)); }

int64_t classDimension(const torch::Tensor &outputs) {
  return outputs.dim() == 3 ? 2 : 1;
}

void checkClassTargets(const std::string &metric, const torch::Tensor &outputs,
                       const torch::Tensor &target) {
  bool fits = outputs.dim() >= 2 &&
              !torch::isFloatingType(target.scalar_type()) &&
              target.dim() == outputs.dim() - 1;
  int64_t classes = fits ? classDimension(outputs) : 0;
  for (int64_t d = 0, t = 0; fits && d < outputs.dim(); ++d)
    if (d != classes)
      fits = outputs.size(d) == target.size(t++);
  if (!fits)
    throw std::invalid_argument(
        metric +
        ": needs class-index targets for the outputs' logits; got "
        "outputs " +
        describeShape(outputs) + " and " +
        (torch::isFloatingType(target.scalar_type()) ? "float " : "") +
        "targets " + describeShape(target));
}

} // namespace composer::runtime
