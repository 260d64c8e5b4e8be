//===- MeanSquaredError.cpp - mse: the mean of squared errors -------------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct MeanSquaredErrorOptions {};

class MeanSquaredError final : public Loss {
public:
  explicit MeanSquaredError(const MeanSquaredErrorOptions &) {}
  std::string name() const override { return "mse"; }
  torch::Tensor compute(const torch::Tensor &outputs,
                        const torch::Tensor &target,
                        bool perSample) const override {
    return elementwiseLoss(
        name(), outputs, target, perSample,
        [](const torch::Tensor &x, const torch::Tensor &y, int64_t reduction) {
          return torch::mse_loss(x, y, reduction);
        });
  }
};

const LossRegistration<MeanSquaredError, MeanSquaredErrorOptions>
    meanSquaredErrorRegistration("mse", {});

} // namespace
} // namespace composer::runtime
