//===- MeanSquaredError.cpp - mse: the mean of squared errors -------------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct MeanSquaredErrorOptions {};

class MeanSquaredError final : public ElementwiseLoss {
public:
  explicit MeanSquaredError(const MeanSquaredErrorOptions &) {}
  std::string name() const override { return "mse"; }

protected:
  torch::Tensor apply(const torch::Tensor &outputs, const torch::Tensor &target,
                      int64_t reduction) const override {
    return torch::mse_loss(outputs, target, reduction);
  }
};

const LossRegistration<MeanSquaredError, MeanSquaredErrorOptions>
    meanSquaredErrorRegistration("mse", {});

} // namespace
} // namespace composer::runtime
