//===- AugMix.cpp - Mixed chains of image ops (Hendrycks et al. 2020) -----===//
//
// `width` chains of `depth` ops (1 to 3 at random when depth < 1), mixed with
// Dirichlet(alpha) weights, then mixed with the original image by a
// Beta(alpha, alpha) weight; Composer's augmix_image draw for draw, run per
// training image in the loader's workers from the sample's own stream.
// Composer's JSD consistency loss is not part of it (nor of Composer's
// algorithm).
//
//===----------------------------------------------------------------------===//

#include "AugmentationPrimitives.h"
#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct AugMixOptions {
  int64_t severity = 3;
  int64_t depth = -1;
  int64_t width = 3;
  double alpha = 1.0;
  std::string augmentationSet = "all";
};

class AugMixTransform final : public SampleTransform {
public:
  AugMixTransform(const AugMixOptions &options)
      : severity_(double(options.severity)), depth_(options.depth),
        width_(options.width), alpha_(options.alpha),
        ops_(getAugmentationSet(options.augmentationSet)) {}

  std::string name() const override { return "augmix"; }
  SampleStage stage() const override { return SampleStage::Image; }

  torch::Tensor apply(const torch::Tensor &sample,
                      SampleRandom &random) const override {
    std::vector<double> chainWeights = random.dirichlet(alpha_, width_);
    float mixing = float(random.beta(alpha_, alpha_));
    torch::Tensor original = sample.contiguous();
    int64_t n = original.numel();
    std::vector<float> combination(static_cast<size_t>(n), 0.0f);
    for (int64_t chain = 0; chain < width_; ++chain) {
      torch::Tensor image = original;
      int64_t depth = depth_ > 0 ? depth_ : 1 + random.below(3);
      for (int64_t i = 0; i < depth; ++i) {
        AugmentationFn op = ops_[size_t(random.below(int64_t(ops_.size())))];
        image = op(image, severity_, random);
      }
      accumulate(image, float(chainWeights[chain]), combination);
    }
    // Composer mixes in float32 and truncates back to uint8.
    torch::Tensor mixed = torch::empty_like(original);
    if (original.scalar_type() == torch::kUInt8) {
      const uint8_t *in = original.data_ptr<uint8_t>();
      uint8_t *out = mixed.data_ptr<uint8_t>();
      for (int64_t i = 0; i < n; ++i)
        out[i] = uint8_t(
            std::clamp((1 - mixing) * float(in[i]) + mixing * combination[i],
                       0.0f, 255.0f));
    } else {
      const float *in = original.data_ptr<float>();
      float *out = mixed.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i)
        out[i] = (1 - mixing) * in[i] + mixing * combination[i];
    }
    return mixed;
  }

private:
  static void accumulate(const torch::Tensor &image, float weight,
                         std::vector<float> &sum) {
    torch::Tensor x = image.contiguous();
    if (x.scalar_type() == torch::kUInt8) {
      const uint8_t *p = x.data_ptr<uint8_t>();
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += weight * float(p[i]);
    } else {
      const float *p = x.data_ptr<float>();
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += weight * p[i];
    }
  }

  double severity_;
  int64_t depth_, width_;
  double alpha_;
  const std::vector<AugmentationFn> &ops_;
};

std::shared_ptr<const SampleTransform>
makeAugMix(const AugMixOptions &options) {
  checkSeverity("augmix", double(options.severity));
  if (options.width < 1)
    throwInvalidOption("augmix", "width",
                       "must be >= 1, got " + std::to_string(options.width));
  if (!(options.alpha > 0))
    throwInvalidOption("augmix", "alpha",
                       "must be > 0, got " + std::to_string(options.alpha));
  return makeAugmentation<AugMixTransform>("augmix", options);
}

class AugMix final : public SampleTransformAlgorithm {
public:
  explicit AugMix(const AugMixOptions &options)
      : SampleTransformAlgorithm(makeAugMix(options)) {}
};

const AlgorithmRegistration<AugMix, AugMixOptions> augMixRegistration(
    "augmix",
    {{"severity", &AugMixOptions::severity, "intensity of each op, 0 to 10"},
     {"depth", &AugMixOptions::depth,
      "ops per chain; -1 (any value below 1): 1 to 3 at random"},
     {"width", &AugMixOptions::width, "chains mixed per image"},
     {"alpha", &AugMixOptions::alpha,
      "Dirichlet weights of the chains and Beta weight of the mix"},
     {"augmentation_set", &AugMixOptions::augmentationSet,
      "'all', 'safe' (no color, contrast, brightness, sharpness) or "
      "'original' (those four with AugMix's original intensities)"}});

} // namespace
} // namespace composer::runtime
