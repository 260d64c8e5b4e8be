//===- L1.cpp - l1: the mean of absolute errors ---------------------------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct L1Options {};

class L1 final : public ElementwiseLoss {
public:
  explicit L1(const L1Options &) {}
  std::string name() const override { return "l1"; }

protected:
  torch::Tensor apply(const torch::Tensor &outputs, const torch::Tensor &target,
                      int64_t reduction) const override {
    return torch::l1_loss(outputs, target, reduction);
  }
};

const LossRegistration<L1, L1Options> l1Registration("l1", {});

} // namespace
} // namespace composer::runtime
