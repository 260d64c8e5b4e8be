//===- BatchLoader.cpp - Where a trainer's batches come from --------------===//

#include "composer/Runtime/BatchLoader.h"
#include "composer/Runtime/SampleTransform.h"

#include <stdexcept>

namespace composer::runtime {

BatchLoader::~BatchLoader() = default;

Batch BatchLoader::toDevice(Batch batch, torch::Device device) const {
  auto move = [&](torch::Tensor &tensor) {
    if (tensor.defined())
      tensor = tensor.to(device, /*non_blocking=*/true);
  };
  move(batch.input);
  move(batch.target);
  for (auto &[name, values] : batch.columns)
    move(values);
  return batch;
}

void BatchLoader::setSampleTransform(
    std::shared_ptr<const SampleTransform> transform) {
  throw std::invalid_argument(
      (transform ? transform->name() : std::string("a sample transform")) +
      " augments each sample in composer's own data loader; this training "
      "data comes from a loader that batches its samples itself (apply it "
      "in that loader's transforms, or give the augmentation batch-wise)");
}

} // namespace composer::runtime
