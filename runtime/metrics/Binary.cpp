//===- Binary.cpp - binary and multilabel accuracy and F1 -----------------===//
//
// Logits against 0/1 targets, as torchmetrics' Binary* and Multilabel*
// metrics take them: a prediction is positive when sigmoid(logit) exceeds
// `threshold`. Binary outputs are [B] or [B, 1]; multilabel ones [B, L]
// against [B, L] targets. Multilabel F1 is the macro average over labels; a
// label with no positive prediction or target scores 0, as in torchmetrics.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Metrics.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct ThresholdOptions {
  double threshold = 0.5;
  int64_t numLabels = 0;
};

/// Predictions and targets as booleans of one shape; `labels` > 0 checks
/// [B, labels] outputs.
std::pair<torch::Tensor, torch::Tensor>
decide(const std::string &metric, const torch::Tensor &outputs,
       const torch::Tensor &target, double threshold, int64_t labels) {
  torch::Tensor predictions = outputs, truth = target;
  if (labels == 0 && outputs.dim() == 2 && outputs.size(1) == 1)
    predictions = outputs.squeeze(1);
  if (labels == 0 && target.dim() == 2 && target.size(1) == 1)
    truth = target.squeeze(1);
  bool fits =
      predictions.sizes() == truth.sizes() &&
      (labels == 0 ? predictions.dim() == 1
                   : predictions.dim() == 2 && predictions.size(1) == labels);
  if (!fits)
    throw std::invalid_argument(
        metric + ": outputs " + describeShape(outputs) + " and targets " +
        describeShape(target) + " must be " +
        (labels == 0 ? std::string("[B] (or [B, 1]) each")
                     : "[B, " + std::to_string(labels) + "] each"));
  return {predictions.to(torch::kFloat).sigmoid().gt(threshold), truth.ne(0)};
}

void checkThreshold(const std::string &metric, const ThresholdOptions &o) {
  checkOptionInterval(metric, "threshold", o.threshold, 0.0, 1.0);
}

/// Totals: true positives, false positives, false negatives, true
/// negatives (per label when multilabel).
class Confusion : public Metric {
public:
  Confusion(std::string metric, std::string name, bool f1,
            const ThresholdOptions &options, int64_t labels)
      : Metric(4 * std::max<int64_t>(labels, 1)), metric_(std::move(metric)),
        name_(std::move(name)), f1_(f1), options_(options), labels_(labels) {
    checkThreshold(metric_, options_);
  }
  std::string name() const override { return name_; }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    auto [p, t] = decide(metric_, outputs, target, options_.threshold, labels_);
    if (labels_ == 0) {
      p = p.unsqueeze(1);
      t = t.unsqueeze(1);
    }
    // [4, labels], summed over the batch.
    add(torch::stack(
        {(p & t).sum(0), (p & ~t).sum(0), (~p & t).sum(0), (~p & ~t).sum(0)}));
  }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    torch::Tensor counts = totals.reshape({4, -1});
    torch::Tensor tp = counts[0], fp = counts[1], fn = counts[2],
                  tn = counts[3];
    torch::Tensor all = tp + fp + fn + tn;
    if (all.sum().item<double>() == 0)
      return std::nullopt;
    if (!f1_)
      return ((tp + tn).sum() / all.sum()).item<double>();
    torch::Tensor denominator = 2 * tp + fp + fn;
    torch::Tensor f1 =
        torch::where(denominator > 0, 2 * tp / denominator.clamp_min(1),
                     torch::zeros_like(tp));
    return f1.mean().item<double>();
  }

private:
  std::string metric_, name_;
  bool f1_;
  ThresholdOptions options_;
  int64_t labels_;
};

class BinaryAccuracy final : public Confusion {
public:
  explicit BinaryAccuracy(const ThresholdOptions &options)
      : Confusion("binary_accuracy", "BinaryAccuracy", false, options, 0) {}
};

class BinaryF1 final : public Confusion {
public:
  explicit BinaryF1(const ThresholdOptions &options)
      : Confusion("binary_f1", "BinaryF1Score", true, options, 0) {}
};

int64_t checkedLabels(const std::string &metric,
                      const ThresholdOptions &options) {
  if (options.numLabels < 1)
    throw InvalidOption({"num_labels"},
                        metric + ": num_labels must be at least 1");
  return options.numLabels;
}

class MultilabelAccuracy final : public Confusion {
public:
  explicit MultilabelAccuracy(const ThresholdOptions &options)
      : Confusion("multilabel_accuracy", "MultilabelAccuracy", false, options,
                  checkedLabels("multilabel_accuracy", options)) {}
};

class MultilabelF1 final : public Confusion {
public:
  explicit MultilabelF1(const ThresholdOptions &options)
      : Confusion("multilabel_f1", "MultilabelF1Score", true, options,
                  checkedLabels("multilabel_f1", options)) {}
};

const char *const kThresholdDoc =
    "a prediction is positive when sigmoid(logit) exceeds this";
const char *const kLabelsDoc = "labels per sample: outputs are [B, num_labels]";

const MetricRegistration<BinaryAccuracy, ThresholdOptions>
    binaryAccuracyRegistration("binary_accuracy",
                               {{"threshold", &ThresholdOptions::threshold,
                                 kThresholdDoc}});
const MetricRegistration<BinaryF1, ThresholdOptions> binaryF1Registration(
    "binary_f1", {{"threshold", &ThresholdOptions::threshold, kThresholdDoc}});
const MetricRegistration<MultilabelAccuracy, ThresholdOptions>
    multilabelAccuracyRegistration(
        "multilabel_accuracy",
        {{"num_labels", &ThresholdOptions::numLabels, kLabelsDoc, true},
         {"threshold", &ThresholdOptions::threshold, kThresholdDoc}});
const MetricRegistration<MultilabelF1, ThresholdOptions>
    multilabelF1Registration(
        "multilabel_f1",
        {{"num_labels", &ThresholdOptions::numLabels, kLabelsDoc, true},
         {"threshold", &ThresholdOptions::threshold, kThresholdDoc}});

} // namespace
} // namespace composer::runtime
