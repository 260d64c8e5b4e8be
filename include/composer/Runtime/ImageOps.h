//===- ImageOps.h - Image operations of RandAugment and AugMix --*- C++ -*-===//
//
// The operations Composer's augmentation primitives apply to one image, with
// torchvision's tensor definitions (torchvision.transforms.functional): an
// image is [C, H, W], uint8 in [0, 255] or float in [0, 1]; each op returns a
// new image of the same type and shape. Blends compute in float and clamp to
// the range; uint8 results truncate, as `.to(torch.uint8)` does, except
// interpolated pixels, which round (torchvision's _cast_squeeze_out).
//
// The ops are plain loops (no ATen kernels), so loader workers may run many
// at once without entering ATen's thread pool.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_IMAGEOPS_H
#define COMPOSER_RUNTIME_IMAGEOPS_H

#include <torch/torch.h>

#include <array>

namespace composer::runtime::image {

/// Stretches each channel to the full range (min -> 0, max -> 255 or 1); a
/// constant channel is left as it is.
torch::Tensor autocontrast(const torch::Tensor &image);
/// Equalizes each channel's histogram (torchvision's uint8 equalize; float
/// images are quantized to 256 levels, x * 255.999 truncated, and back).
torch::Tensor equalize(const torch::Tensor &image);
/// Keeps the `bits` (0 to 8) high bits of each value (float images:
/// floor(x * 2^bits) / 2^bits).
torch::Tensor posterize(const torch::Tensor &image, int bits);
/// Inverts values at or above `threshold` (on the 0-255 scale for both
/// types).
torch::Tensor solarize(const torch::Tensor &image, double threshold);

/// PIL's affine transform: output pixel (x, y) samples the input at
/// (a x' + b y' + c, d x' + e y' + f) - 0.5, x' = x + 0.5, y' = y + 0.5
/// (pixel centres), bilinearly, with zeros outside the image (grid_sample's
/// padding). `matrix` = {a, b, c, d, e, f}.
torch::Tensor affine(const torch::Tensor &image,
                     const std::array<double, 6> &matrix);
/// Counter-clockwise about the image centre (PIL's Image.rotate matrix).
torch::Tensor rotate(const torch::Tensor &image, double degrees);
/// Composer's shear_x/shear_y: matrix (1, shear, 0, 0, 1, 0) and
/// (1, 0, 0, shear, 1, 0).
torch::Tensor shearX(const torch::Tensor &image, double shear);
torch::Tensor shearY(const torch::Tensor &image, double shear);
/// Composer's translate_x/translate_y: output (x, y) takes the input at
/// (x + pixels, y) and (x, y + pixels), so content moves left/up.
torch::Tensor translateX(const torch::Tensor &image, double pixels);
torch::Tensor translateY(const torch::Tensor &image, double pixels);

/// Blends with the grayscale image (0.2989 R + 0.587 G + 0.114 B): 0 gives
/// gray, 1 the image. One-channel images are returned unchanged.
torch::Tensor adjustColor(const torch::Tensor &image, double factor);
/// Blends with the mean of the (grayscale) image.
torch::Tensor adjustContrast(const torch::Tensor &image, double factor);
/// Blends with black.
torch::Tensor adjustBrightness(const torch::Tensor &image, double factor);
/// Blends with the image smoothed by [[1,1,1],[1,5,1],[1,1,1]] / 13 inside
/// a one-pixel border (the border is kept); images of side <= 2 unchanged.
torch::Tensor adjustSharpness(const torch::Tensor &image, double factor);

} // namespace composer::runtime::image

#endif // COMPOSER_RUNTIME_IMAGEOPS_H
