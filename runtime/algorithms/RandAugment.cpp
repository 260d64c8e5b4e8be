//===- RandAugment.cpp - Random image ops per sample (Cubuk et al. 2020) --===//
//
// `depth` ops drawn with replacement from the augmentation set, each at
// `severity`, applied to every training image in the loader's workers (a
// dataset transform in Composer, added at FIT_START); the draws come from
// the sample's own stream, (seed, epoch, sample index).
//
//===----------------------------------------------------------------------===//

#include "AugmentationPrimitives.h"
#include "composer/Runtime/Algorithms.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct RandAugmentOptions {
  int64_t severity = 9;
  int64_t depth = 2;
  std::string augmentationSet = "all";
};

class RandAugmentTransform final : public SampleTransform {
public:
  RandAugmentTransform(const RandAugmentOptions &options)
      : severity_(double(options.severity)), depth_(options.depth),
        ops_(getAugmentationSet(options.augmentationSet)) {}

  std::string name() const override { return "randaugment"; }
  SampleStage stage() const override { return SampleStage::Image; }

  torch::Tensor apply(const torch::Tensor &sample,
                      SampleRandom &random) const override {
    torch::Tensor image = sample;
    for (int64_t i = 0; i < depth_; ++i) {
      AugmentationFn op = ops_[size_t(random.below(int64_t(ops_.size())))];
      image = op(image, severity_, random);
    }
    return image;
  }

private:
  double severity_;
  int64_t depth_;
  const std::vector<AugmentationFn> &ops_;
};

std::shared_ptr<const SampleTransform>
makeRandAugment(const RandAugmentOptions &options) {
  checkSeverity("randaugment", double(options.severity));
  if (options.depth < 0)
    throwInvalidOption("randaugment", "depth",
                       "must be >= 0, got " + std::to_string(options.depth));
  return makeAugmentation<RandAugmentTransform>("randaugment", options);
}

class RandAugment final : public SampleTransformAlgorithm {
public:
  explicit RandAugment(const RandAugmentOptions &options)
      : SampleTransformAlgorithm(makeRandAugment(options)) {}
};

const AlgorithmRegistration<RandAugment, RandAugmentOptions>
    randAugmentRegistration(
        "randaugment",
        {{"severity", &RandAugmentOptions::severity,
          "intensity of each op, 0 to 10"},
         {"depth", &RandAugmentOptions::depth, "ops applied to each image"},
         {"augmentation_set", &RandAugmentOptions::augmentationSet,
          "'all', 'safe' (no color, contrast, brightness, sharpness) or "
          "'original' (those four with AugMix's original intensities)"}});

} // namespace
} // namespace composer::runtime
