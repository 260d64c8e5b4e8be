//===- CutMix.cpp - Paste a box from another sample (Yun 2019) ------------===//
//
// One box and one permutation per batch (Composer's cutmix_batch). Targets are
// mixed by the area the box really covers after clipping, not by the drawn
// coefficient, so labels match pixels.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <cmath>
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

class CutMix final : public Algorithm {
public:
  explicit CutMix(double alpha) : alpha_(alpha) {
    if (!(alpha > 0))
      throw std::invalid_argument("cutmix: alpha must be > 0, got " +
                                  std::to_string(alpha));
  }

  std::string name() const override { return "cutmix"; }

  bool match(Event event, const State &state) const override {
    if (event == Event::BeforeForward)
      return state.batch.size() > 0 && state.batch.input.dim() >= 3;
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
    torch::Tensor x = state.batch.input;
    int64_t height = x.size(-2), width = x.size(-1);
    double cutRatio = std::sqrt(1 - sampleBeta(alpha_, gen));
    int64_t cutH = int64_t(height * cutRatio), cutW = int64_t(width * cutRatio);
    int64_t cy = torch::randint(height, {1}, gen).item<int64_t>();
    int64_t cx = torch::randint(width, {1}, gen).item<int64_t>();
    int64_t y1 = std::clamp<int64_t>(cy - cutH / 2, 0, height);
    int64_t y2 = std::clamp<int64_t>(cy + cutH / 2, 0, height);
    int64_t x1 = std::clamp<int64_t>(cx - cutW / 2, 0, width);
    int64_t x2 = std::clamp<int64_t>(cx + cutW / 2, 0, width);
    permutation_ = torch::randperm(x.size(0), gen, torch::kLong);
    torch::Tensor perm = permutation_.to(x.device());

    // Clone: the loader's batch may be shared with other readers.
    torch::Tensor mixed = x.clone();
    mixed.slice(-2, y1, y2)
        .slice(-1, x1, x2)
        .copy_(x.index_select(0, perm).slice(-2, y1, y2).slice(-1, x1, x2));
    state.batch.input = mixed;
    lambda_ = 1 - double((y2 - y1) * (x2 - x1)) / double(height * width);
  }

private:
  double alpha_;
  double lambda_ = 1;
  torch::Tensor permutation_; // set between BEFORE_FORWARD and BEFORE_LOSS
};

} // namespace

std::unique_ptr<Algorithm> createCutMix(double alpha) {
  return std::make_unique<CutMix>(alpha);
}

} // namespace composer::runtime
