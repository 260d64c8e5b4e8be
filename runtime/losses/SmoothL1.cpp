//===- SmoothL1.cpp - smooth_l1: Huber-like, quadratic below beta ---------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct SmoothL1Options {
  double beta = 1.0;
};

class SmoothL1 final : public ElementwiseLoss {
public:
  explicit SmoothL1(const SmoothL1Options &options) : beta_(options.beta) {
    // LibTorch's own rule; beta 0 is plain L1.
    if (!(beta_ >= 0))
      throwInvalidOption("smooth_l1", "beta",
                         "must be >= 0, got " + std::to_string(beta_));
  }
  std::string name() const override { return "smooth_l1"; }

protected:
  torch::Tensor apply(const torch::Tensor &outputs, const torch::Tensor &target,
                      int64_t reduction) const override {
    return torch::smooth_l1_loss(outputs, target, reduction, beta_);
  }

private:
  double beta_;
};

const LossRegistration<SmoothL1, SmoothL1Options>
    smoothL1Registration("smooth_l1",
                         {{"beta", &SmoothL1Options::beta,
                           "where the loss turns from quadratic to linear"}});

} // namespace
} // namespace composer::runtime
