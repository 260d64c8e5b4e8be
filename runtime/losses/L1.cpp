//===- L1.cpp - l1: the mean of absolute errors ---------------------------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct L1Options {};

class L1 final : public Loss {
public:
  explicit L1(const L1Options &) {}
  std::string name() const override { return "l1"; }
  torch::Tensor compute(const torch::Tensor &outputs,
                        const torch::Tensor &target,
                        bool perSample) const override {
    return elementwiseLoss(
        name(), outputs, target, perSample,
        [](const torch::Tensor &x, const torch::Tensor &y, int64_t reduction) {
          return torch::l1_loss(x, y, reduction);
        });
  }
};

const LossRegistration<L1, L1Options> l1Registration("l1", {});

} // namespace
} // namespace composer::runtime
