//===- ImageResample.h - PIL's bilinear resampling, for the codecs -*- C++ -*-//
//
// Private to runtime/data: the resampler that applyImageCut and the JPEG cut
// decoder share, so that a cut decoded at full scale equals applyImageCut of
// the whole decoded image bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATA_IMAGERESAMPLE_H
#define COMPOSER_RUNTIME_DATA_IMAGERESAMPLE_H

#include <cstdint>

namespace composer::runtime::detail {

/// uint8 pixels addressed by strides: the value of channel c of pixel (y, x)
/// is data[y * rowStride + x * pixelStride + c * channelStride]. Covers both
/// planar [C, H, W] tensors and the interleaved rows the codecs write.
struct PixelView {
  const uint8_t *data = nullptr;
  int64_t height = 0, width = 0;
  int channels = 0;
  int64_t rowStride = 0, pixelStride = 0, channelStride = 0;
};

/// Resizes the box [x0, x1) x [y0, y1) of `in` (pixel coordinates, possibly
/// fractional, inside [0, width] x [0, height]) to outHeight x outWidth as
/// PIL's Image.resize(size, BILINEAR, box) does: a triangle filter whose
/// support widens with the downscale factor, fixed-point weights, the
/// horizontal pass first, rounded to uint8 between the passes. Taps reach
/// only pixels of `in`, so a view of a crop resizes as PIL's crop().resize().
/// Writes planar [channels, outHeight, outWidth] to `out`.
void resampleBilinear(const PixelView &in, double x0, double y0, double x1,
                      double y1, int64_t outHeight, int64_t outWidth,
                      uint8_t *out);

} // namespace composer::runtime::detail

#endif // COMPOSER_RUNTIME_DATA_IMAGERESAMPLE_H
