//===- GradientClipping.cpp - Norm, value and adaptive clipping -----------===//
//
// Wraps the training step's clip stage: the gradients are reduced and
// unscaled, and the optimizer has not stepped. Adaptive clipping is AGC
// (Brock et al. 2021): per output unit (row of dim 0; the whole tensor for
// scalars and vectors), |g| <= threshold * max(|w|, 1e-3). Under sharded
// data parallelism norm clipping takes the norm in one all-reduce, value
// clipping works on the shards, and adaptive clipping gathers the whole
// gradients.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Gradients.h"

#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

enum class ClipType { Norm, Value, Adaptive };

/// L2 norms per output unit, shaped to broadcast against `t`.
torch::Tensor unitwiseNorm(const torch::Tensor &t) {
  torch::Tensor f = t.to(torch::kFloat);
  if (t.dim() <= 1)
    return f.norm();
  std::vector<int64_t> shape(t.dim(), 1);
  shape[0] = t.size(0);
  return f.reshape({t.size(0), -1}).norm(2, /*dim=*/1).view(shape);
}

/// Both options are required (as in Composer): no defaults.
struct GradientClippingOptions {
  std::string type;
  double threshold = 0;
};

class GradientClipping final : public Algorithm, public StepStages {
public:
  explicit GradientClipping(const GradientClippingOptions &options)
      : threshold_(options.threshold) {
    if (options.type == "norm")
      type_ = ClipType::Norm;
    else if (options.type == "value")
      type_ = ClipType::Value;
    else if (options.type == "adaptive")
      type_ = ClipType::Adaptive;
    else
      throwInvalidOption("gradient_clipping", "clipping_type",
                         "must be 'norm', 'value' or 'adaptive', got '" +
                             options.type + "'");
    if (!(threshold_ > 0 && std::isfinite(threshold_)))
      throwInvalidOption("gradient_clipping", "clipping_threshold",
                         "must be > 0, got " + std::to_string(threshold_));
  }

  std::string name() const override { return "gradient_clipping"; }

  StepStages *stepStages() override { return this; }

  /// Clips after the links inside this one (SAM listed after it), whether or
  /// not the gradients are finite: a skipped step never uses them.
  bool clip(TrainingStep &step, bool finite, ClipNext next) override {
    finite = next(finite);
    clipGradients(step.state());
    return finite;
  }

private:
  void clipGradients(State &state) const {
    torch::NoGradGuard noGrad;
    switch (type_) {
    case ClipType::Norm: {
      // As clip_grad_norm_.
      double coefficient = threshold_ / (gradientNorm(state) + 1e-6);
      if (coefficient < 1)
        for (torch::Tensor &grad : localGradients(state))
          grad.mul_(coefficient);
      break;
    }
    case ClipType::Value:
      for (torch::Tensor &grad : localGradients(state))
        grad.clamp_(-threshold_, threshold_);
      break;
    case ClipType::Adaptive:
      gatherGradients(state, "gradient_clipping (adaptive)");
      for (const auto &[name, p] : state.parameters) {
        torch::Tensor grad = p.grad();
        if (!p.requires_grad() || !grad.defined())
          continue;
        torch::Tensor maxNorm =
            unitwiseNorm(p.detach()).clamp_min(1e-3) * threshold_;
        torch::Tensor gradNorm = unitwiseNorm(grad);
        torch::Tensor coeff =
            torch::where(gradNorm > maxNorm, maxNorm / gradNorm.clamp_min(1e-6),
                         torch::ones_like(gradNorm));
        grad.mul_(coeff.to(grad.dtype()));
      }
      scatterGradients(state);
      break;
    }
  }

  ClipType type_;
  double threshold_;
};

const AlgorithmRegistration<GradientClipping, GradientClippingOptions>
    gradientClippingRegistration(
        "gradient_clipping",
        {{"clipping_type", &GradientClippingOptions::type,
          "'norm', 'value' or 'adaptive'",
          /*required=*/true},
         {"clipping_threshold", &GradientClippingOptions::threshold,
          "the largest total norm, element or ratio to the weight's norm",
          /*required=*/true}});

} // namespace
} // namespace composer::runtime
