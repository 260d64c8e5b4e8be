//===- AugmentationPrimitives.h - RandAugment/AugMix ops --------*- C++ -*-===//
//
// Composer's augmentation primitives (composer/algorithms/utils/
// augmentation_primitives.py): each applies one image op with an intensity
// drawn at `severity` (0 to 10) from the sample's random stream, with
// Composer's severity-to-magnitude mappings.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_ALGORITHMS_AUGMENTATIONPRIMITIVES_H
#define COMPOSER_RUNTIME_ALGORITHMS_AUGMENTATIONPRIMITIVES_H

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/SampleTransform.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {

using AugmentationFn = torch::Tensor (*)(const torch::Tensor &image,
                                         double severity, SampleRandom &random);

/// Composer's augmentation sets: "all", "safe" (none of the ImageNet-C
/// corruptions: no color, contrast, brightness or sharpness) and "original"
/// (those four with the original AugMix intensity sampling). Throws
/// InvalidOption (at augmentation_set) naming the sets for another name.
const std::vector<AugmentationFn> &getAugmentationSet(const std::string &name);

/// Checks a severity (0 to 10) for `algorithm`; throws InvalidOption.
void checkSeverity(const char *algorithm, double severity);

/// `Transform` built from `options`, its errors (an unknown augmentation
/// set) prefixed with the algorithm's name.
template <typename Transform, typename Options>
std::shared_ptr<const SampleTransform>
makeAugmentation(const char *algorithm, const Options &options) {
  try {
    return std::make_shared<Transform>(options);
  } catch (const InvalidOption &e) {
    throw InvalidOption(e.options(), std::string(algorithm) + ": " + e.what());
  }
}

/// An algorithm whose whole work is one per-sample transform, which the
/// train loader runs in its workers from FIT_START (a dataset transform in
/// Composer): RandAugment and AugMix.
class SampleTransformAlgorithm : public Algorithm {
public:
  explicit SampleTransformAlgorithm(
      std::shared_ptr<const SampleTransform> transform)
      : transform_(std::move(transform)) {}

  std::string name() const override { return transform_->name(); }

  /// The loader's uint8 images: the transform runs on them in its workers.
  void checkData(const SampleSpec &spec) const override {
    if (spec.kind != SampleKind::Image)
      throw std::invalid_argument(
          name() +
          " needs image samples (uint8 [C, H, W], transformed in "
          "the loader); the training data's column '" +
          spec.inputName + "' holds " + c10::toString(spec.inputType) +
          " tensors");
  }

  bool match(Event event, const State &state) const override {
    return event == Event::FitStart && state.trainLoader;
  }

  void apply(Event, State &state, Logger &) override {
    state.trainLoader->setSampleTransform(transform_);
  }

private:
  std::shared_ptr<const SampleTransform> transform_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_AUGMENTATIONPRIMITIVES_H
