//===- ImageResize.cpp - Crops and PIL's antialiased bilinear resize ------===//
//
// PIL's ImagingResample (libImaging/Resample.c) for 8-bit images with the
// BILINEAR filter, written again over strided uint8 pixels: torchvision
// resizes PIL images with it, so a cut made here equals
// `img.crop(box).resize(size, Image.BILINEAR)` bit for bit. Plain loops, no
// ATen kernels: it runs on the loader's worker threads, which must not start
// thread pools of their own.
//
//===----------------------------------------------------------------------===//

#include "ImageResample.h"
#include "ScratchBuffer.h"

#include "composer/Runtime/Dataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {
namespace detail {
namespace {

/// PIL's PRECISION_BITS for 8-bit images: a weight sum of 1 is 1 << 22, so a
/// sum of 255-valued taps with rounding still fits in an int32.
constexpr int kPrecisionBits = 32 - 8 - 2;
/// Every sum starts at one half, so that the shift rounds to nearest.
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

/// The taps of every output pixel along one axis: output i reads `count[i]`
/// input pixels from `first[i]` with the fixed-point weights
/// weights[i * ksize ...].
struct AxisTaps {
  int64_t ksize = 0;
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights;
};

double bilinearFilter(double x) {
  if (x < 0.0)
    x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

/// precompute_coeffs + normalize_coeffs_8bpc. PIL passes the box as floats,
/// so the box's extent is a float difference too.
AxisTaps computeTaps(int64_t inSize, float in0, float in1, int64_t outSize) {
  AxisTaps taps;
  double scale = double(in1 - in0) / double(outSize);
  double filterscale = std::max(scale, 1.0);
  double support = 1.0 * filterscale;
  taps.ksize = int64_t(std::ceil(support)) * 2 + 1;
  taps.first.resize(outSize);
  taps.count.resize(outSize);
  taps.weights.assign(outSize * taps.ksize, 0);
  std::vector<double> k(taps.ksize);
  for (int64_t xx = 0; xx < outSize; ++xx) {
    double center = in0 + (double(xx) + 0.5) * scale;
    double ww = 0.0;
    double ss = 1.0 / filterscale;
    // C's truncation toward zero, as PIL rounds; negatives clamp to 0.
    int64_t xmin = int64_t(center - support + 0.5);
    xmin = std::max<int64_t>(xmin, 0);
    int64_t xmax = int64_t(center + support + 0.5);
    xmax = std::min(xmax, inSize);
    xmax -= xmin;
    for (int64_t x = 0; x < xmax; ++x) {
      double w = bilinearFilter((double(x + xmin) - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    int32_t *out = &taps.weights[xx * taps.ksize];
    for (int64_t x = 0; x < xmax; ++x) {
      double w = ww != 0.0 ? k[x] / ww : k[x];
      out[x] = w < 0 ? int32_t(-0.5 + w * (1 << kPrecisionBits))
                     : int32_t(0.5 + w * (1 << kPrecisionBits));
    }
    taps.first[xx] = xmin;
    taps.count[xx] = std::max<int64_t>(xmax, 0);
  }
  return taps;
}

uint8_t clip8(int32_t sum) {
  return uint8_t(std::clamp(sum >> kPrecisionBits, 0, 255));
}

/// The horizontal pass over one row: dst[c][xx] for every channel. Interleaved
/// RGB, the codecs' layout, reads each pixel's three bytes in one sweep of
/// the taps.
void resampleRow(const uint8_t *src, const PixelView &in, const AxisTaps &taps,
                 int64_t outWidth, uint8_t *const *dst) {
  if (in.channels == 3 && in.pixelStride == 3 && in.channelStride == 1) {
    for (int64_t xx = 0; xx < outWidth; ++xx) {
      const int32_t *k = &taps.weights[xx * taps.ksize];
      const uint8_t *p = src + taps.first[xx] * 3;
      int32_t s0 = kHalf, s1 = kHalf, s2 = kHalf;
      for (int64_t x = 0, n = taps.count[xx]; x < n; ++x) {
        s0 += int32_t(p[3 * x]) * k[x];
        s1 += int32_t(p[3 * x + 1]) * k[x];
        s2 += int32_t(p[3 * x + 2]) * k[x];
      }
      dst[0][xx] = clip8(s0);
      dst[1][xx] = clip8(s1);
      dst[2][xx] = clip8(s2);
    }
    return;
  }
  for (int c = 0; c < in.channels; ++c) {
    const uint8_t *plane = src + c * in.channelStride;
    for (int64_t xx = 0; xx < outWidth; ++xx) {
      const int32_t *k = &taps.weights[xx * taps.ksize];
      const uint8_t *p = plane + taps.first[xx] * in.pixelStride;
      int32_t sum = kHalf;
      for (int64_t x = 0, n = taps.count[xx]; x < n; ++x)
        sum += int32_t(p[x * in.pixelStride]) * k[x];
      dst[c][xx] = clip8(sum);
    }
  }
}

/// The vertical pass for one output row of one channel, a row of taps at a
/// time so that the inner loop runs along contiguous pixels. Integer sums
/// do not depend on their order, so this equals PIL's pixel-by-pixel loop.
void resampleColumn(const uint8_t *rows, int64_t rowStride, int64_t pixelStride,
                    const int32_t *k, int64_t count, int64_t outWidth,
                    int32_t *sums, uint8_t *dst) {
  std::fill(sums, sums + outWidth, kHalf);
  for (int64_t y = 0; y < count; ++y) {
    const uint8_t *row = rows + y * rowStride;
    const int32_t w = k[y];
    if (pixelStride == 1) {
      for (int64_t x = 0; x < outWidth; ++x)
        sums[x] += int32_t(row[x]) * w;
    } else {
      for (int64_t x = 0; x < outWidth; ++x)
        sums[x] += int32_t(row[x * pixelStride]) * w;
    }
  }
  for (int64_t x = 0; x < outWidth; ++x)
    dst[x] = clip8(sums[x]);
}

} // namespace

void resampleBilinear(const PixelView &in, double x0, double y0, double x1,
                      double y1, int64_t outHeight, int64_t outWidth,
                      uint8_t *out) {
  const int channels = in.channels;
  const int64_t outPlane = outHeight * outWidth;
  bool horizontal = outWidth != in.width || x0 != 0.0 || x1 != double(in.width);
  bool vertical =
      outHeight != in.height || y0 != 0.0 || y1 != double(in.height);

  AxisTaps rowTaps = computeTaps(in.height, float(y0), float(y1), outHeight);
  // Rows the vertical pass reads; the horizontal pass makes only these.
  int64_t firstRow = rowTaps.first.front();
  int64_t lastRow = rowTaps.first.back() + rowTaps.count.back();
  if (!vertical) {
    firstRow = 0;
    lastRow = in.height;
  }

  // After the horizontal pass (or without one), `mid` holds the rows
  // [midFirstRow, ...) at the output's width. Its buffer is the thread's:
  // the loader's workers resample image after image, and a fresh buffer of
  // this size would come from the kernel, page by page, each time.
  PixelView mid = in;
  int64_t midFirstRow = 0;
  thread_local ScratchBuffer<uint8_t> midPixels;
  if (horizontal) {
    AxisTaps colTaps = computeTaps(in.width, float(x0), float(x1), outWidth);
    int64_t rows = lastRow - firstRow;
    // Planar: one channel's rows, then the next channel's.
    uint8_t *midData = midPixels.reserve(size_t(channels * rows * outWidth));
    std::vector<uint8_t *> dst(static_cast<size_t>(channels));
    for (int64_t y = 0; y < rows; ++y) {
      for (int c = 0; c < channels; ++c)
        dst[c] = midData + (c * rows + y) * outWidth;
      resampleRow(in.data + (firstRow + y) * in.rowStride, in, colTaps,
                  outWidth, dst.data());
    }
    mid.data = midData;
    midFirstRow = firstRow;
    mid.width = outWidth;
    mid.rowStride = outWidth;
    mid.pixelStride = 1;
    mid.channelStride = rows * outWidth;
  }

  thread_local ScratchBuffer<int32_t> sums;
  int32_t *sumRow = sums.reserve(size_t(outWidth));
  for (int c = 0; c < channels; ++c) {
    const uint8_t *plane = mid.data + c * mid.channelStride;
    uint8_t *dst = out + c * outPlane;
    if (!vertical) {
      for (int64_t y = 0; y < outHeight; ++y)
        for (int64_t x = 0; x < outWidth; ++x)
          dst[y * outWidth + x] =
              plane[(y - midFirstRow) * mid.rowStride + x * mid.pixelStride];
      continue;
    }
    for (int64_t yy = 0; yy < outHeight; ++yy)
      resampleColumn(plane + (rowTaps.first[yy] - midFirstRow) * mid.rowStride,
                     mid.rowStride, mid.pixelStride,
                     &rowTaps.weights[yy * rowTaps.ksize], rowTaps.count[yy],
                     outWidth, sumRow, dst + yy * outWidth);
  }
}

} // namespace detail

torch::Tensor applyImageCut(const torch::Tensor &image, const ImageCut &cut) {
  if (!image.defined() || image.dim() != 3 || !image.device().is_cpu() ||
      image.scalar_type() != torch::kUInt8)
    throw std::invalid_argument(
        "applyImageCut: expected a CPU uint8 image [C, H, W]");
  if (cut.height <= 0 || cut.width <= 0 || cut.outHeight <= 0 ||
      cut.outWidth <= 0)
    throw std::invalid_argument(
        "applyImageCut: a cut needs a positive size and output size, got " +
        std::to_string(cut.height) + "x" + std::to_string(cut.width) + " -> " +
        std::to_string(cut.outHeight) + "x" + std::to_string(cut.outWidth));
  torch::Tensor in = image.contiguous();
  const int64_t channels = in.size(0), height = in.size(1), width = in.size(2);
  const uint8_t *pixels = in.data_ptr<uint8_t>();

  detail::PixelView view;
  view.height = cut.height;
  view.width = cut.width;
  view.channels = int(channels);
  view.pixelStride = 1;
  std::vector<uint8_t> padded;
  bool inside = cut.top >= 0 && cut.left >= 0 &&
                cut.top + cut.height <= height && cut.left + cut.width <= width;
  if (inside) {
    view.data = pixels + cut.top * width + cut.left;
    view.rowStride = width;
    view.channelStride = height * width;
  } else {
    // PIL's crop outside the image is black: copy what overlaps into a
    // zeroed region.
    padded.assign(size_t(channels * cut.height * cut.width), 0);
    int64_t y0 = std::max<int64_t>(cut.top, 0);
    int64_t y1 = std::min(cut.top + cut.height, height);
    int64_t x0 = std::max<int64_t>(cut.left, 0);
    int64_t x1 = std::min(cut.left + cut.width, width);
    for (int64_t c = 0; c < channels && x0 < x1; ++c)
      for (int64_t y = y0; y < y1; ++y)
        std::memcpy(&padded[(c * cut.height + y - cut.top) * cut.width +
                            (x0 - cut.left)],
                    pixels + (c * height + y) * width + x0, size_t(x1 - x0));
    view.data = padded.data();
    view.rowStride = cut.width;
    view.channelStride = cut.height * cut.width;
  }

  torch::Tensor out =
      torch::empty({channels, cut.outHeight, cut.outWidth}, torch::kUInt8);
  detail::resampleBilinear(view, 0.0, 0.0, double(cut.width),
                           double(cut.height), cut.outHeight, cut.outWidth,
                           out.data_ptr<uint8_t>());
  return out;
}

} // namespace composer::runtime
