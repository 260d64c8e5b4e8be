//===- BinaryCrossEntropy.cpp - Multi-label binary cross entropy ----------===//
//
// binary_cross_entropy_with_logits: one independent sigmoid per output
// against a multi-hot (or soft) target of the outputs' shape, as multi-label
// classification trains.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Losses.h"

namespace composer::runtime {
namespace {

struct BinaryCrossEntropyOptions {
  double posWeight = 1.0;
};

class BinaryCrossEntropy final : public ElementwiseLoss {
public:
  explicit BinaryCrossEntropy(const BinaryCrossEntropyOptions &options)
      : posWeight_(options.posWeight) {
    if (!(posWeight_ > 0))
      throwInvalidOption("binary_cross_entropy_with_logits", "pos_weight",
                         "must be > 0, got " + std::to_string(posWeight_));
  }
  std::string name() const override {
    return "binary_cross_entropy_with_logits";
  }

protected:
  torch::Tensor apply(const torch::Tensor &outputs, const torch::Tensor &target,
                      int64_t reduction) const override {
    c10::optional<torch::Tensor> positive;
    if (posWeight_ != 1.0)
      positive = torch::full({}, posWeight_, outputs.options());
    return torch::binary_cross_entropy_with_logits(outputs, target, {},
                                                   positive, reduction);
  }

private:
  double posWeight_;
};

const LossRegistration<BinaryCrossEntropy, BinaryCrossEntropyOptions>
    binaryCrossEntropyRegistration(
        "binary_cross_entropy_with_logits",
        {{"pos_weight", &BinaryCrossEntropyOptions::posWeight,
          "weight of the positive term of every label (PyTorch's "
          "pos_weight, one value for all)"}});

} // namespace
} // namespace composer::runtime
