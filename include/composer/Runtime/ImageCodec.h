//===- ImageCodec.h - JPEG and PNG decoding ---------------------*- C++ -*-===//
//
// Images decode to RGB uint8 [3, H, W], whatever the file holds: grayscale,
// CMYK (as PIL's convert('RGB')) and palette images are converted. JPEGs go
// through libjpeg-turbo, PNGs through libpng. Every codec warning is an error:
// a truncated file never decodes to a partly grey image.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_IMAGECODEC_H
#define COMPOSER_RUNTIME_IMAGECODEC_H

#include "composer/Runtime/Dataset.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace composer::runtime {

enum class ImageFormat { Unknown, Jpeg, Png };

/// The format named by the file's first bytes (its magic number).
ImageFormat sniffImageFormat(const void *data, size_t size);

/// Size of an image as stored, from its header alone.
struct ImageInfo {
  int64_t height = 0, width = 0;
  /// Components in the file: 1 gray, 3 RGB/YCbCr, 4 CMYK or RGBA.
  int channels = 0;
};

/// Reads the header. Throws DataError naming `name` on bad data.
ImageInfo readImageInfo(const void *data, size_t size, const std::string &name);

/// Decodes the whole image to RGB uint8 [3, H, W]. Throws DataError naming
/// `name` on a corrupt, truncated or unsupported file.
torch::Tensor decodeImage(const void *data, size_t size,
                          const std::string &name);

/// Decodes the cut `plan` chooses from the image's size to RGB uint8
/// [3, outHeight, outWidth]. A JPEG is decoded at the smallest DCT scale
/// (jpegScaleForCut) whose scaled region still has at least the output's
/// pixels in each direction, and only the region's rows and columns
/// (jpeg_crop_scanline, jpeg_skip_scanlines) are decoded.
torch::Tensor decodeImageCut(const void *data, size_t size,
                             const std::string &name,
                             const ImageCutPlanner &plan);

/// The DCT scale numerator n (scale n/8) that decodeImageCut decodes a JPEG
/// at for `cut`: the smallest of 1, 2, 4 and 8 whose scaled region covers
/// the output.
int jpegScaleForCut(const ImageCut &cut);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_IMAGECODEC_H
