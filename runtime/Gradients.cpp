//===- Gradients.cpp - The gradients as the optimizer will use them -------===//

#include "composer/Runtime/Gradients.h"
#include "composer/Runtime/Distributed.h"

#include <cmath>

namespace composer::runtime {

GradientShards::~GradientShards() = default;

std::vector<torch::Tensor> localGradients(State &state) {
  if (state.gradientShards)
    return state.gradientShards->localGradients();
  std::vector<torch::Tensor> grads;
  for (const auto &[name, parameter] : state.parameters)
    if (parameter.requires_grad() && parameter.grad().defined())
      grads.push_back(parameter.grad());
  return grads;
}

double gradientNorm(State &state) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> grads = localGradients(state);
  if (grads.empty() && !state.gradientShards)
    return 0.0;
  // Each tensor's sum in fp32, as clip_grad_norm_'s norms; their total in
  // fp64, so that the order ranks add in does not show.
  torch::Tensor squares = torch::zeros({1}, torch::kDouble);
  for (const torch::Tensor &grad : grads)
    squares +=
        grad.detach().to(torch::kFloat).pow(2).sum().cpu().to(torch::kDouble);
  if (state.gradientShards) {
    Communicator &communicator = state.gradientShards->communicator();
    torch::Tensor total = squares.to(state.device);
    communicator.allReduceSum(total);
    squares = total.cpu();
  }
  return std::sqrt(squares.item<double>());
}

void gatherGradients(State &state, const std::string &algorithm) {
  if (state.gradientShards)
    state.gradientShards->gatherGradients(algorithm);
}

void scatterGradients(State &state) {
  if (state.gradientShards)
    state.gradientShards->scatterGradients();
}

} // namespace composer::runtime
