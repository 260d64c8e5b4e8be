//===- SampleMixing.cpp - What MixUp and CutMix share ---------------------===//

#include "SampleMixing.h"

namespace composer::runtime {

double sampleBeta(double alpha, torch::Generator &generator) {
  torch::Tensor g =
      at::_standard_gamma(torch::full({2}, alpha, torch::kDouble), generator);
  double x = g[0].item<double>(), y = g[1].item<double>();
  return x + y > 0 ? x / (x + y) : 0.5;
}

bool SampleMixing::match(Event event, const State &state) const {
  if (event == Event::BeforeForward)
    return state.batch.size() > 0 && canMix(state.batch);
  Event mixAt = interpolateLoss_ ? Event::BeforeBackward : Event::BeforeLoss;
  return event == mixAt && permutation_.defined();
}

void SampleMixing::apply(Event event, State &state, Logger &) {
  if (event == Event::BeforeBackward) {
    torch::Tensor permutedLoss =
        state.lossFunction->compute(state.outputs, permutedTarget_);
    state.loss = lambda_ * state.loss + (1 - lambda_) * permutedLoss;
    permutation_ = permutedTarget_ = torch::Tensor();
    return;
  }
  if (event == Event::BeforeLoss) {
    torch::Tensor y = state.batch.target;
    if (!y.is_floating_point())
      y = torch::one_hot(y, state.outputs.size(-1)).to(torch::kFloat);
    torch::Tensor perm = permutation_.to(y.device());
    state.batch.target = lambda_ * y + (1 - lambda_) * y.index_select(0, perm);
    permutation_ = torch::Tensor();
    return;
  }
  torch::Generator generator = state.generatorFor(name());
  std::tie(lambda_, permutation_) = mixInputs(state, generator);
  if (interpolateLoss_) {
    const torch::Tensor &target = state.batch.target;
    permutedTarget_ = target.index_select(0, permutation_.to(target.device()));
  }
}

} // namespace composer::runtime
