//===- Segmentation.cpp - miou and dice over [B, C, H, W] logits ----------===//
//
// The predicted class of each pixel (argmax over dimension 1) against
// [B, H, W] class indices; pixels whose target is ignore_index count
// nowhere. Intersections and sizes are summed per class over the whole
// evaluation, then averaged over the classes that occur (in a prediction or
// a target), as Composer's MIoU does.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Metrics.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct SegmentationOptions {
  int64_t numClasses = 0;
  int64_t ignoreIndex = -1;
};

/// Totals per class: intersection, predicted pixels, target pixels.
class Overlap : public Metric {
public:
  Overlap(std::string metric, const SegmentationOptions &options)
      : Metric(3 * std::max<int64_t>(options.numClasses, 1)),
        metric_(std::move(metric)), options_(options) {
    if (options.numClasses < 1)
      throw InvalidOption({"num_classes"},
                          metric_ + ": num_classes must be at least 1");
  }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    if (outputs.dim() != 4 || outputs.size(1) != options_.numClasses)
      throw std::invalid_argument(
          metric_ + ": needs [B, " + std::to_string(options_.numClasses) +
          ", H, W] logits; got " + describeShape(outputs));
    checkClassTargets(metric_, outputs, target);
    torch::Tensor counted = target.ne(options_.ignoreIndex).reshape({-1});
    torch::Tensor predicted = outputs.argmax(1).reshape({-1}).index({counted});
    torch::Tensor truth = target.reshape({-1}).index({counted});
    if (truth.numel() && (truth.min().item<int64_t>() < 0 ||
                          truth.max().item<int64_t>() >= options_.numClasses))
      throw std::invalid_argument(metric_ + ": a target class is outside [0, " +
                                  std::to_string(options_.numClasses) + ")");
    int64_t classes = options_.numClasses;
    torch::Tensor both = predicted.index({predicted.eq(truth)});
    add(torch::stack({torch::bincount(both, {}, classes),
                      torch::bincount(predicted, {}, classes),
                      torch::bincount(truth, {}, classes)}));
  }

protected:
  /// Each class's score, and which classes occur, from the totals.
  virtual torch::Tensor score(const torch::Tensor &intersection,
                              const torch::Tensor &predicted,
                              const torch::Tensor &truth) const = 0;

public:
  std::optional<double> compute(const torch::Tensor &totals) const override {
    torch::Tensor counts = totals.reshape({3, -1});
    torch::Tensor occurs = (counts[1] + counts[2]) > 0;
    if (!occurs.any().item<bool>())
      return std::nullopt;
    return score(counts[0], counts[1], counts[2])
        .index({occurs})
        .mean()
        .item<double>();
  }

private:
  std::string metric_;
  SegmentationOptions options_;
};

class MeanIoU final : public Overlap {
public:
  explicit MeanIoU(const SegmentationOptions &options)
      : Overlap("miou", options) {}
  std::string name() const override { return "MIoU"; }

protected:
  torch::Tensor score(const torch::Tensor &intersection,
                      const torch::Tensor &predicted,
                      const torch::Tensor &truth) const override {
    return intersection / (predicted + truth - intersection).clamp_min(1);
  }
};

class Dice final : public Overlap {
public:
  explicit Dice(const SegmentationOptions &options)
      : Overlap("dice", options) {}
  std::string name() const override { return "Dice"; }

protected:
  torch::Tensor score(const torch::Tensor &intersection,
                      const torch::Tensor &predicted,
                      const torch::Tensor &truth) const override {
    return 2 * intersection / (predicted + truth).clamp_min(1);
  }
};

const char *const kClassesDoc = "classes: outputs are [B, num_classes, H, W]";
const char *const kIgnoreDoc = "pixels whose target is this count nowhere";

const MetricRegistration<MeanIoU, SegmentationOptions> miouRegistration(
    "miou",
    {{"num_classes", &SegmentationOptions::numClasses, kClassesDoc, true},
     {"ignore_index", &SegmentationOptions::ignoreIndex, kIgnoreDoc}});
const MetricRegistration<Dice, SegmentationOptions> diceRegistration(
    "dice",
    {{"num_classes", &SegmentationOptions::numClasses, kClassesDoc, true},
     {"ignore_index", &SegmentationOptions::ignoreIndex, kIgnoreDoc}});

} // namespace
} // namespace composer::runtime
