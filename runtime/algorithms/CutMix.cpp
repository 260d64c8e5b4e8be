//===- CutMix.cpp - Paste a box from another sample (Yun 2019) ------------===//
//
// One box and one permutation per batch (Composer's cutmix_batch). Targets are
// mixed by the area the box really covers after clipping, not by the drawn
// coefficient, so labels match pixels.
//
//===----------------------------------------------------------------------===//

#include "SampleMixing.h"
#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct CutMixOptions {
  double alpha = 1.0;
  bool interpolateLoss = false;
};

class CutMix final : public SampleMixing {
public:
  void checkData(const SampleSpec &spec) const override {
    requireImages(name(), spec);
    requireClassTargets(name(), spec);
  }
  explicit CutMix(const CutMixOptions &options)
      : SampleMixing(options.interpolateLoss), alpha_(options.alpha) {
    if (!(alpha_ > 0))
      throwInvalidOption("cutmix", "alpha",
                         "must be > 0, got " + std::to_string(alpha_));
  }

  std::string name() const override { return "cutmix"; }

protected:
  bool canMix(const Batch &batch) const override {
    return batch.input.dim() >= 3;
  }

  std::pair<double, torch::Tensor> mixInputs(State &state,
                                             torch::Generator &gen) override {
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
    torch::Tensor permutation = torch::randperm(x.size(0), gen, torch::kLong);
    torch::Tensor perm = permutation.to(x.device());

    // Clone: the loader's batch may be shared with other readers.
    torch::Tensor mixed = x.clone();
    mixed.slice(-2, y1, y2)
        .slice(-1, x1, x2)
        .copy_(x.index_select(0, perm).slice(-2, y1, y2).slice(-1, x1, x2));
    state.batch.input = mixed;
    return {1 - double((y2 - y1) * (x2 - x1)) / double(height * width),
            permutation};
  }

private:
  double alpha_;
};

const AlgorithmRegistration<CutMix, CutMixOptions> cutMixRegistration(
    "cutmix", {{"alpha", &CutMixOptions::alpha,
                "the box's area ratio is drawn from Beta(alpha, alpha)"},
               {"interpolate_loss", &CutMixOptions::interpolateLoss,
                "mix the losses against both targets, not the targets"}});

} // namespace
} // namespace composer::runtime
