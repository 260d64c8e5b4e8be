//===- AugmentationPrimitives.cpp - What RandAugment and AugMix draw ------===//
//
// The draws and magnitudes follow Composer's primitives one for one (numpy's
// calls become the sample's stream), so a recipe's severity means what it
// means in Composer.
//
//===----------------------------------------------------------------------===//

#include "AugmentationPrimitives.h"

#include "composer/Runtime/ImageOps.h"

#include <map>
#include <stdexcept>

namespace composer::runtime {
namespace {

/// int(level * maxval / 10): Python's int() truncates toward zero.
int64_t intParameter(double level, double maxval) {
  return int64_t(level * maxval / 10);
}

double floatParameter(double level, double maxval) {
  return level * maxval / 10;
}

/// np.random.uniform(low=0.1, high=n).
double sampleLevel(double n, SampleRandom &random) {
  return random.uniform(0.1, n);
}

/// Uniform on [1 - 0.09 level, 1] or [1, level], each half the time: factor
/// 1 is "no change".
double symmetricSample(double level, SampleRandom &random) {
  if (random.uniform() > 0.5)
    return random.uniform(1, level);
  return random.uniform(1 - 0.09 * level, 1);
}

double randomSign(double value, SampleRandom &random) {
  return random.uniform() > 0.5 ? -value : value;
}

torch::Tensor autocontrast(const torch::Tensor &img, double, SampleRandom &) {
  return image::autocontrast(img);
}

torch::Tensor equalize(const torch::Tensor &img, double, SampleRandom &) {
  return image::equalize(img);
}

torch::Tensor posterize(const torch::Tensor &img, double level,
                        SampleRandom &random) {
  int64_t drop = intParameter(sampleLevel(level, random), 4);
  return image::posterize(img, int(4 - drop));
}

torch::Tensor rotate(const torch::Tensor &img, double level,
                     SampleRandom &random) {
  double degrees = double(intParameter(sampleLevel(level, random), 30));
  return image::rotate(img, randomSign(degrees, random));
}

torch::Tensor solarize(const torch::Tensor &img, double level,
                       SampleRandom &random) {
  int64_t drop = intParameter(sampleLevel(level, random), 256);
  return image::solarize(img, double(256 - drop));
}

torch::Tensor shearX(const torch::Tensor &img, double level,
                     SampleRandom &random) {
  double shear = floatParameter(sampleLevel(level, random), 0.3);
  return image::shearX(img, randomSign(shear, random));
}

torch::Tensor shearY(const torch::Tensor &img, double level,
                     SampleRandom &random) {
  double shear = floatParameter(sampleLevel(level, random), 0.3);
  return image::shearY(img, randomSign(shear, random));
}

torch::Tensor translateX(const torch::Tensor &img, double level,
                         SampleRandom &random) {
  double width = double(img.size(-1));
  double pixels = double(intParameter(sampleLevel(level, random), width / 3));
  return image::translateX(img, randomSign(pixels, random));
}

torch::Tensor translateY(const torch::Tensor &img, double level,
                         SampleRandom &random) {
  double height = double(img.size(-2));
  double pixels = double(intParameter(sampleLevel(level, random), height / 3));
  return image::translateY(img, randomSign(pixels, random));
}

torch::Tensor color(const torch::Tensor &img, double level,
                    SampleRandom &random) {
  return image::adjustColor(img, symmetricSample(level, random));
}

torch::Tensor contrast(const torch::Tensor &img, double level,
                       SampleRandom &random) {
  return image::adjustContrast(img, symmetricSample(level, random));
}

torch::Tensor brightness(const torch::Tensor &img, double level,
                         SampleRandom &random) {
  double factor = symmetricSample(level, random);
  if (factor > 1) // Composer damps brightening
    factor *= 0.75;
  return image::adjustBrightness(img, factor);
}

torch::Tensor sharpness(const torch::Tensor &img, double level,
                        SampleRandom &random) {
  return image::adjustSharpness(img, symmetricSample(level, random));
}

/// The original AugMix intensity: 0.1 + 1.8 * level / 10.
double originalFactor(double level, SampleRandom &random) {
  return floatParameter(sampleLevel(level, random), 1.8) + 0.1;
}

torch::Tensor colorOriginal(const torch::Tensor &img, double level,
                            SampleRandom &random) {
  return image::adjustColor(img, originalFactor(level, random));
}

torch::Tensor contrastOriginal(const torch::Tensor &img, double level,
                               SampleRandom &random) {
  return image::adjustContrast(img, originalFactor(level, random));
}

torch::Tensor brightnessOriginal(const torch::Tensor &img, double level,
                                 SampleRandom &random) {
  return image::adjustBrightness(img, originalFactor(level, random));
}

torch::Tensor sharpnessOriginal(const torch::Tensor &img, double level,
                                SampleRandom &random) {
  return image::adjustSharpness(img, originalFactor(level, random));
}

} // namespace

const std::vector<AugmentationFn> &getAugmentationSet(const std::string &name) {
  // In Composer's order: a draw picks the same op for the same index.
  static const std::map<std::string, std::vector<AugmentationFn>> sets = {
      {"all",
       {autocontrast, equalize, posterize, rotate, solarize, shearX, shearY,
        translateX, translateY, color, contrast, brightness, sharpness}},
      {"safe",
       {autocontrast, equalize, posterize, rotate, solarize, shearX, shearY,
        translateX, translateY}},
      {"original",
       {autocontrast, equalize, posterize, rotate, solarize, shearX, shearY,
        translateX, translateY, colorOriginal, contrastOriginal,
        brightnessOriginal, sharpnessOriginal}},
  };
  auto it = sets.find(name);
  if (it == sets.end())
    throw InvalidOption(
        {"augmentation_set"},
        "augmentation_set must be 'all', 'safe' or 'original', got '" + name +
            "'");
  return it->second;
}

void checkSeverity(const char *algorithm, double severity) {
  checkOptionInterval(algorithm, "severity", severity, 0, 10);
}

} // namespace composer::runtime
