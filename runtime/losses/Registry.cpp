//===- Registry.cpp - Training losses, by name ----------------------------===//

#include "composer/Runtime/Losses.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

ComponentRegistry<Loss> &lossRegistry() {
  static ComponentRegistry<Loss> losses("loss");
  return losses;
}

} // namespace

Loss::~Loss() = default;

std::vector<const LossInfo *> getRegisteredLosses() {
  return lossRegistry().all();
}

const LossInfo *findLoss(std::string_view name) {
  return lossRegistry().find(name);
}

std::shared_ptr<const Loss> createLoss(std::string_view name,
                                       const OptionValues &options) {
  return lossRegistry().create(name, options);
}

void registerLoss(LossInfo info) { lossRegistry().add(std::move(info)); }

std::string describeShape(const torch::Tensor &tensor) {
  std::string text = "[";
  for (int64_t i = 0; i < tensor.dim(); ++i)
    text += (i ? ", " : "") + std::to_string(tensor.size(i));
  return text + "]";
}

torch::Tensor ElementwiseLoss::compute(const torch::Tensor &outputs,
                                       const torch::Tensor &target,
                                       bool perSample) const {
  if (outputs.sizes() != target.sizes())
    throw std::invalid_argument(name() + ": outputs " + describeShape(outputs) +
                                " and targets " + describeShape(target) +
                                " must have one shape");
  torch::Tensor typed = target.to(outputs.scalar_type());
  if (!perSample)
    return apply(outputs, typed, at::Reduction::Mean);
  return apply(outputs, typed, at::Reduction::None)
      .reshape({outputs.size(0), -1})
      .mean(1);
}

} // namespace composer::runtime
