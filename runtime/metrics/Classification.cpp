//===- Classification.cpp - accuracy, cross_entropy, perplexity -----------===//
//
// Metrics of logits against class indices: [B, C] against [B], a language
// model's [B, T, V] against [B, T], [B, C, ...] against [B, ...]. Targets
// equal to ignore_index count nowhere. Also the default set an evaluator
// logs without `metrics`.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Metrics.h"

#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

/// `outputs` as one row of logits per prediction, and `target` as one class
/// (or distribution) per row.
std::pair<torch::Tensor, torch::Tensor>
predictionRows(const torch::Tensor &outputs, const torch::Tensor &target) {
  int64_t classDim = classDimension(outputs);
  int64_t classes = outputs.size(classDim);
  torch::Tensor logits =
      outputs.movedim(classDim, -1).reshape({-1, classes}).to(torch::kFloat);
  torch::Tensor labels =
      torch::isFloatingType(target.scalar_type())
          ? target.movedim(classDim, -1).reshape({-1, classes})
          : target.reshape({-1});
  return {logits, labels};
}

struct AccuracyOptions {
  int64_t k = 1;
  int64_t ignoreIndex = -100;
};

/// Totals: correct, counted.
class Accuracy final : public Metric {
public:
  explicit Accuracy(const AccuracyOptions &options,
                    bool skipOtherTargets = false)
      : Metric(2), options_(options), skipOtherTargets_(skipOtherTargets) {
    if (options.k < 1)
      throw InvalidOption({"k"}, "accuracy: k must be at least 1");
  }
  std::string name() const override {
    return options_.k == 1 ? "Accuracy"
                           : "Top" + std::to_string(options_.k) + "Accuracy";
  }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    try {
      checkClassTargets("accuracy", outputs, target);
    } catch (const std::invalid_argument &) {
      if (skipOtherTargets_)
        return;
      throw;
    }
    auto [logits, labels] = predictionRows(outputs, target);
    if (options_.k > logits.size(1))
      throw std::invalid_argument(
          "accuracy: k = " + std::to_string(options_.k) + " exceeds the " +
          std::to_string(logits.size(1)) + " classes");
    torch::Tensor counted = labels.ne(options_.ignoreIndex);
    torch::Tensor top = std::get<1>(logits.topk(options_.k, 1));
    torch::Tensor correct = top.eq(labels.unsqueeze(1)).any(1) & counted;
    add(torch::stack({correct.sum(), counted.sum()}));
  }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    return ratio(totals);
  }

private:
  AccuracyOptions options_;
  bool skipOtherTargets_;
};

const MetricRegistration<Accuracy, AccuracyOptions> accuracyRegistration(
    "accuracy",
    {{"k", &AccuracyOptions::k,
      "a prediction is correct when the target is among its k largest "
      "logits (Top<k>Accuracy)"},
     {"ignore_index", &AccuracyOptions::ignoreIndex,
      "targets with this class count nowhere"}});

struct CrossEntropyMetricOptions {
  int64_t ignoreIndex = -100;
};

/// The mean cross entropy per prediction that counts (per token for a
/// language model). Totals: summed loss, counted predictions.
class CrossEntropyMetric : public Metric {
public:
  explicit CrossEntropyMetric(const CrossEntropyMetricOptions &options)
      : Metric(2), options_(options) {}
  std::string name() const override { return "CrossEntropy"; }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    auto [logits, labels] = predictionRows(outputs, target);
    if (!torch::isFloatingType(target.scalar_type()))
      checkClassTargets(metricName(), outputs, target);
    else if (labels.sizes() != logits.sizes())
      throw std::invalid_argument(metricName() +
                                  ": probabilities must have the outputs' "
                                  "shape");
    torch::Tensor each = torch::cross_entropy_loss(
        logits, labels, {}, at::Reduction::None, options_.ignoreIndex);
    int64_t counted =
        torch::isFloatingType(labels.scalar_type())
            ? logits.size(0)
            : labels.ne(options_.ignoreIndex).sum().item<int64_t>();
    add(torch::stack({each.sum().to(torch::kDouble),
                      torch::tensor(double(counted), torch::kDouble)}));
  }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    return ratio(totals);
  }

protected:
  virtual std::string metricName() const { return "cross_entropy"; }

private:
  CrossEntropyMetricOptions options_;
};

const MetricRegistration<CrossEntropyMetric, CrossEntropyMetricOptions>
    crossEntropyMetricRegistration("cross_entropy",
                                   {{"ignore_index",
                                     &CrossEntropyMetricOptions::ignoreIndex,
                                     "targets with this class count nowhere"}});

/// exp of the mean cross entropy per token.
class Perplexity final : public CrossEntropyMetric {
public:
  using CrossEntropyMetric::CrossEntropyMetric;
  std::string name() const override { return "Perplexity"; }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    std::optional<double> loss = CrossEntropyMetric::compute(totals);
    return loss ? std::optional<double>(std::exp(*loss)) : std::nullopt;
  }

protected:
  std::string metricName() const override { return "perplexity"; }
};

const MetricRegistration<Perplexity, CrossEntropyMetricOptions>
    perplexityRegistration("perplexity",
                           {{"ignore_index",
                             &CrossEntropyMetricOptions::ignoreIndex,
                             "targets with this class count nowhere"}});

/// The recipe's loss, its mean per sample, logged as CrossEntropy; as
/// Perplexity, its exp over the batches of [B, T, V] logits only. Totals:
/// loss times samples, samples.
class RecipeLoss final : public Metric {
public:
  RecipeLoss(std::shared_ptr<const Loss> loss, bool perplexity)
      : Metric(2), loss_(std::move(loss)), perplexity_(perplexity) {}
  std::string name() const override {
    return perplexity_ ? "Perplexity" : "CrossEntropy";
  }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    if (perplexity_ && outputs.dim() != 3)
      return;
    double samples = double(outputs.size(0));
    double mean =
        loss_->compute(outputs.to(torch::kFloat), target).item<double>();
    add(torch::tensor({mean * samples, samples}, torch::kDouble));
  }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    double samples = totals[1].item<double>();
    if (samples == 0)
      return perplexity_ ? std::nullopt : std::optional<double>(0.0);
    double mean = totals[0].item<double>() / samples;
    return perplexity_ ? std::exp(mean) : mean;
  }

private:
  std::shared_ptr<const Loss> loss_;
  bool perplexity_;
};

} // namespace

std::vector<std::shared_ptr<Metric>>
createDefaultMetrics(std::shared_ptr<const Loss> loss) {
  std::vector<std::shared_ptr<Metric>> metrics;
  metrics.push_back(
      std::make_shared<Accuracy>(AccuracyOptions{}, /*skipOtherTargets=*/true));
  metrics.push_back(std::make_shared<RecipeLoss>(loss, false));
  if (loss->name() == "cross_entropy")
    metrics.push_back(std::make_shared<RecipeLoss>(loss, true));
  return metrics;
}

} // namespace composer::runtime
