//===- MixUp.cpp - Convex combinations of sample pairs (Zhang 2018) -------===//
//
// One mixing coefficient and one permutation per batch, both drawn from the
// batch's own generator so a resumed run mixes exactly the same pairs.
//
//===----------------------------------------------------------------------===//

#include "SampleMixing.h"
#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct MixUpOptions {
  double alpha = 0.2;
  bool interpolateLoss = false;
};

class MixUp final : public SampleMixing {
public:
  void checkData(const SampleSpec &spec) const override {
    requireClassTargets(name(), spec);
  }
  explicit MixUp(const MixUpOptions &options)
      : SampleMixing(options.interpolateLoss), alpha_(options.alpha) {
    if (!(alpha_ >= 0))
      throwInvalidOption("mixup", "alpha",
                         "must be >= 0, got " + std::to_string(alpha_));
  }

  std::string name() const override { return "mixup"; }

protected:
  bool canMix(const Batch &batch) const override {
    return batch.input.is_floating_point();
  }

  std::pair<double, torch::Tensor> mixInputs(State &state,
                                             torch::Generator &gen) override {
    // alpha = 0 is "no mixing" (Composer); Beta(0, 0) is undefined.
    double z = alpha_ > 0 ? sampleBeta(alpha_, gen) : 1.0;
    double lambda = std::max(z, 1 - z);
    torch::Tensor x = state.batch.input;
    torch::Tensor permutation = torch::randperm(x.size(0), gen, torch::kLong);
    torch::Tensor perm = permutation.to(x.device());
    state.batch.input = lambda * x + (1 - lambda) * x.index_select(0, perm);
    return {lambda, permutation};
  }

private:
  double alpha_;
};

const AlgorithmRegistration<MixUp, MixUpOptions> mixUpRegistration(
    "mixup", {{"alpha", &MixUpOptions::alpha,
               "l = max(z, 1-z), z ~ Beta(alpha, alpha); 0: no mixing"},
              {"interpolate_loss", &MixUpOptions::interpolateLoss,
               "mix the losses against both targets, not the targets"}});

} // namespace
} // namespace composer::runtime
