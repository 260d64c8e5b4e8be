//===- MixUp.cpp - Convex combinations of sample pairs (Zhang 2018) -------===//
//
// One mixing coefficient and one permutation per batch, both drawn from the
// batch's own generator so a resumed run mixes exactly the same pairs.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

/// z ~ Beta(a, a) as G1 / (G1 + G2), G ~ Gamma(a, 1): LibTorch has no Beta
/// sampler that takes a generator, but its gamma does.
double sampleBeta(double alpha, torch::Generator &gen) {
  torch::Tensor g =
      at::_standard_gamma(torch::full({2}, alpha, torch::kDouble), gen);
  double x = g[0].item<double>(), y = g[1].item<double>();
  return x + y > 0 ? x / (x + y) : 0.5;
}

torch::Tensor toProbabilities(const torch::Tensor &target, int64_t numClasses) {
  if (target.is_floating_point())
    return target;
  return torch::one_hot(target, numClasses).to(torch::kFloat);
}

class MixUp final : public Algorithm {
public:
  explicit MixUp(double alpha) : alpha_(alpha) {
    if (!(alpha >= 0))
      throw std::invalid_argument("mixup: alpha must be >= 0, got " +
                                  std::to_string(alpha));
  }

  std::string name() const override { return "mixup"; }

  bool match(Event event, const State &state) const override {
    if (event == Event::BeforeForward)
      return state.batch.size() > 0 && state.batch.input.is_floating_point();
    return event == Event::BeforeLoss && permutation_.defined();
  }

  void apply(Event event, State &state, Logger &) override {
    if (event == Event::BeforeLoss) {
      torch::Tensor y =
          toProbabilities(state.batch.target, state.outputs.size(-1));
      torch::Tensor perm = permutation_.to(y.device());
      state.batch.target =
          lambda_ * y + (1 - lambda_) * y.index_select(0, perm);
      permutation_ = torch::Tensor();
      return;
    }
    torch::Generator gen = state.generatorFor(name());
    // alpha = 0 is "no mixing" (Composer); Beta(0, 0) is undefined.
    double z = alpha_ > 0 ? sampleBeta(alpha_, gen) : 1.0;
    lambda_ = std::max(z, 1 - z);
    torch::Tensor x = state.batch.input;
    permutation_ = torch::randperm(x.size(0), gen, torch::kLong);
    torch::Tensor perm = permutation_.to(x.device());
    state.batch.input = lambda_ * x + (1 - lambda_) * x.index_select(0, perm);
  }

private:
  double alpha_;
  double lambda_ = 1;
  torch::Tensor permutation_; // set between BEFORE_FORWARD and BEFORE_LOSS
};

} // namespace

std::unique_ptr<Algorithm> createMixUp(double alpha) {
  return std::make_unique<MixUp>(alpha);
}

} // namespace composer::runtime
