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

/// An image op at one intensity, from ImageOps.h.
using ImageOp = torch::Tensor (*)(const torch::Tensor &image, double amount);

/// Composer's shear_x/shear_y: up to 0.3 at severity 10, either sign.
template <ImageOp Shear>
torch::Tensor shear(const torch::Tensor &img, double level,
                    SampleRandom &random) {
  double shear = floatParameter(sampleLevel(level, random), 0.3);
  return Shear(img, randomSign(shear, random));
}

/// Composer's translate_x/translate_y: whole pixels, up to a third of the
/// image's extent along `Dim` (-1 width, -2 height), either sign.
template <ImageOp Translate, int Dim>
torch::Tensor translate(const torch::Tensor &img, double level,
                        SampleRandom &random) {
  double extent = double(img.size(Dim));
  double pixels = double(intParameter(sampleLevel(level, random), extent / 3));
  return Translate(img, randomSign(pixels, random));
}

/// Composer's color, contrast and sharpness: a factor drawn about 1.
template <ImageOp Adjust>
torch::Tensor enhance(const torch::Tensor &img, double level,
                      SampleRandom &random) {
  return Adjust(img, symmetricSample(level, random));
}

torch::Tensor brightness(const torch::Tensor &img, double level,
                         SampleRandom &random) {
  double factor = symmetricSample(level, random);
  if (factor > 1) // Composer damps brightening
    factor *= 0.75;
  return image::adjustBrightness(img, factor);
}

/// The original AugMix intensity: 0.1 + 1.8 * level / 10.
template <ImageOp Adjust>
torch::Tensor enhanceOriginal(const torch::Tensor &img, double level,
                              SampleRandom &random) {
  return Adjust(img, floatParameter(sampleLevel(level, random), 1.8) + 0.1);
}

} // namespace

const std::vector<AugmentationFn> &getAugmentationSet(const std::string &name) {
  // In Composer's order: a draw picks the same op for the same index.
  static const std::map<std::string, std::vector<AugmentationFn>> sets = [] {
    std::vector<AugmentationFn> safe = {autocontrast,
                                        equalize,
                                        posterize,
                                        rotate,
                                        solarize,
                                        shear<image::shearX>,
                                        shear<image::shearY>,
                                        translate<image::translateX, -1>,
                                        translate<image::translateY, -2>};
    std::vector<AugmentationFn> all = safe, original = safe;
    all.insert(all.end(),
               {enhance<image::adjustColor>, enhance<image::adjustContrast>,
                brightness, enhance<image::adjustSharpness>});
    original.insert(original.end(), {enhanceOriginal<image::adjustColor>,
                                     enhanceOriginal<image::adjustContrast>,
                                     enhanceOriginal<image::adjustBrightness>,
                                     enhanceOriginal<image::adjustSharpness>});
    return std::map<std::string, std::vector<AugmentationFn>>{
        {"all", all}, {"safe", safe}, {"original", original}};
  }();
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
