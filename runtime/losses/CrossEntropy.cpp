//===- CrossEntropy.cpp - cross_entropy: classes, tokens and pixels -------===//
//
// Logits against class indices or class probabilities, as
// torch.nn.functional.cross_entropy takes them:
//   [B, C]       against [B] indices or [B, C] probabilities;
//   [B, T, V]    a language model's logits, one prediction per token, against
//                [B, T] tokens or [B, T, V] probabilities;
//   [B, C, ...]  any other rank, classes on dimension 1 (segmentation),
//                against [B, ...] indices or probabilities of the outputs'
//                shape.
// Targets equal to ignore_index count nowhere: the batch's mean is over the
// targets that count, as PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Losses.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct CrossEntropyOptions {
  int64_t ignoreIndex = -100;
  double labelSmoothing = 0.0;
};

class CrossEntropy final : public Loss {
public:
  explicit CrossEntropy(const CrossEntropyOptions &options)
      : options_(options) {
    checkOptionInterval("cross_entropy", "label_smoothing",
                        options.labelSmoothing, 0.0, 1.0);
  }
  std::string name() const override { return "cross_entropy"; }

  torch::Tensor compute(const torch::Tensor &outputs,
                        const torch::Tensor &target,
                        bool perSample) const override {
    const bool soft = torch::isFloatingType(target.scalar_type());
    torch::Tensor logits = outputs, labels = target;
    if (outputs.dim() == 3) {
      // Classes last: flattened to one row per token.
      int64_t classes = outputs.size(-1);
      logits = outputs.reshape({-1, classes});
      labels = soft ? target.reshape({-1, classes}) : target.reshape({-1});
    }
    checkShapes(outputs, target, logits, labels, soft);
    if (!perSample)
      return torch::cross_entropy_loss(logits, labels, {}, at::Reduction::Mean,
                                       options_.ignoreIndex,
                                       options_.labelSmoothing);
    const int64_t samples = outputs.size(0);
    torch::Tensor each =
        torch::cross_entropy_loss(logits, labels, {}, at::Reduction::None,
                                  options_.ignoreIndex, options_.labelSmoothing)
            .reshape({samples, -1});
    if (soft)
      return each.mean(1);
    // Over each sample's targets that count; a sample with none scores 0.
    torch::Tensor counted = labels.reshape({samples, -1})
                                .ne(options_.ignoreIndex)
                                .sum(1)
                                .clamp_min(1)
                                .to(each.scalar_type());
    return each.sum(1) / counted;
  }

  /// The targets that count: class indices other than ignore_index, or one
  /// distribution per prediction.
  int64_t termCount(const torch::Tensor &target) const override {
    if (!torch::isFloatingType(target.scalar_type()))
      return target.ne(options_.ignoreIndex).sum().item<int64_t>();
    int64_t classDim = target.dim() == 3 ? 2 : 1;
    return target.dim() > 1 ? target.numel() / target.size(classDim) : 0;
  }

private:
  void checkShapes(const torch::Tensor &outputs, const torch::Tensor &target,
                   const torch::Tensor &logits, const torch::Tensor &labels,
                   bool soft) const {
    bool fits = logits.dim() >= 2;
    if (fits && soft) {
      fits = labels.sizes() == logits.sizes();
    } else if (fits) {
      fits =
          labels.dim() == logits.dim() - 1 && labels.size(0) == logits.size(0);
      for (int64_t d = 1; fits && d < labels.dim(); ++d)
        fits = labels.size(d) == logits.size(d + 1);
    }
    if (!fits)
      throw std::invalid_argument(
          "cross_entropy: outputs " + describeShape(outputs) +
          " do not fit targets " + describeShape(target) +
          "; expected logits [B, C] (or [B, T, V], or [B, C, ...]) and "
          "class indices without the class dimension, or probabilities of "
          "the outputs' shape");
  }

  CrossEntropyOptions options_;
};

const LossRegistration<CrossEntropy, CrossEntropyOptions>
    crossEntropyRegistration(
        "cross_entropy",
        {{"ignore_index", &CrossEntropyOptions::ignoreIndex,
          "class index of targets that count nowhere (padding tokens)"},
         {"label_smoothing", &CrossEntropyOptions::labelSmoothing,
          "PyTorch's label_smoothing, in [0, 1]"}});

} // namespace
} // namespace composer::runtime
