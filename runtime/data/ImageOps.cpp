//===- ImageOps.cpp - Image operations of RandAugment and AugMix ----------===//
//
// Each op is written once for uint8 and float pixels (a generic lambda given
// typed pointers), in float arithmetic as torchvision's tensor ops compute.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/ImageOps.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace composer::runtime::image {
namespace {

template <typename T>
constexpr float kBound = std::is_same_v<T, uint8_t> ? 255.0f : 1.0f;

/// `.clamp(0, bound).to(dtype)`: uint8 truncates.
template <typename T> T fromFloat(float v) {
  v = std::clamp(v, 0.0f, kBound<T>);
  if constexpr (std::is_same_v<T, uint8_t>)
    return uint8_t(v);
  else
    return v;
}

/// Interpolated values: uint8 rounds (half to even, as torch.round).
template <typename T> T fromFloatRounded(float v) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return uint8_t(std::nearbyint(std::clamp(v, 0.0f, 255.0f)));
  else
    return v;
}

/// An image's channels, rows and columns, and the sizes ops derive from them.
struct Extent {
  int64_t c, h, w;
  int64_t plane; ///< h * w: one channel
  int64_t size;  ///< c * h * w: the whole image
};

/// Runs `fn(in, out, extent)` with typed pointers into a contiguous copy of
/// `image` and a new image of its type and shape.
template <typename Fn>
torch::Tensor forEachType(const torch::Tensor &image, const char *op, Fn fn) {
  if (!image.defined() || image.dim() != 3 || !image.device().is_cpu() ||
      (image.scalar_type() != torch::kUInt8 &&
       image.scalar_type() != torch::kFloat))
    throw std::invalid_argument(
        std::string(op) + ": expected a CPU image [C, H, W] of uint8 or float");
  torch::Tensor in = image.contiguous();
  torch::Tensor out = torch::empty(in.sizes(), in.options());
  int64_t c = in.size(0), h = in.size(1), w = in.size(2);
  Extent extent{c, h, w, h * w, c * h * w};
  if (in.scalar_type() == torch::kUInt8)
    fn(in.data_ptr<uint8_t>(), out.data_ptr<uint8_t>(), extent);
  else
    fn(in.data_ptr<float>(), out.data_ptr<float>(), extent);
  return out;
}

template <typename P>
using Pixel = std::remove_const_t<std::remove_pointer_t<P>>;

/// torchvision's _blend: ratio * img1 + (1 - ratio) * img2, clamped.
/// `other(i)` gives img2 at flat index i, as float.
template <typename T, typename Other>
void blend(const T *in, T *out, int64_t n, double ratio, Other other) {
  float r1 = float(ratio), r2 = float(1.0 - ratio);
  for (int64_t i = 0; i < n; ++i)
    out[i] = fromFloat<T>(r1 * float(in[i]) + r2 * other(i));
}

/// 0.2989 R + 0.587 G + 0.114 B in the image's type (uint8 truncates).
template <typename T> std::vector<float> grayscale(const T *in, int64_t plane) {
  std::vector<float> gray(static_cast<size_t>(plane));
  for (int64_t i = 0; i < plane; ++i) {
    float l = 0.2989f * float(in[i]) + 0.587f * float(in[plane + i]) +
              0.114f * float(in[2 * plane + i]);
    gray[i] = std::is_same_v<T, uint8_t> ? float(uint8_t(l)) : l;
  }
  return gray;
}

void checkRgbOrGray(int64_t channels, const char *op) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument(std::string(op) +
                                ": expected 1 or 3 channels, got " +
                                std::to_string(channels));
}

/// Equalizes one uint8 channel in place (torchvision's _scale_channel).
void equalizeChannel(uint8_t *values, int64_t n) {
  int64_t hist[256] = {};
  for (int64_t i = 0; i < n; ++i)
    ++hist[values[i]];
  // The step leaves out the last non-empty bin.
  int64_t last = 255;
  while (last > 0 && hist[last] == 0)
    --last;
  int64_t total = 0;
  for (int v = 0; v < last; ++v)
    total += hist[v];
  int64_t step = total / 255;
  if (step == 0)
    return;
  uint8_t lut[256];
  int64_t cumulative = 0;
  lut[0] = 0;
  for (int v = 0; v < 255; ++v) {
    cumulative += hist[v];
    lut[v + 1] =
        uint8_t(std::min<int64_t>(255, (cumulative + step / 2) / step));
  }
  for (int64_t i = 0; i < n; ++i)
    values[i] = lut[values[i]];
}

double roundTo15Digits(double v) { return std::round(v * 1e15) / 1e15; }

} // namespace

torch::Tensor autocontrast(const torch::Tensor &image) {
  return forEachType(
      image, "autocontrast", [](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        for (int64_t ch = 0; ch < e.c; ++ch) {
          const T *src = in + ch * e.plane;
          T *dst = out + ch * e.plane;
          auto [lo, hi] = std::minmax_element(src, src + e.plane);
          float minimum = float(*lo), range = float(*hi) - minimum;
          if (!(range > 0)) {
            std::copy(src, src + e.plane, dst);
            continue;
          }
          float scale = kBound<T> / range;
          for (int64_t i = 0; i < e.plane; ++i)
            dst[i] = fromFloat<T>((float(src[i]) - minimum) * scale);
        }
      });
}

torch::Tensor equalize(const torch::Tensor &image) {
  return forEachType(
      image, "equalize", [](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        std::vector<uint8_t> levels(static_cast<size_t>(e.size));
        for (int64_t i = 0; i < e.size; ++i) {
          if constexpr (std::is_same_v<T, uint8_t>)
            levels[i] = in[i];
          else // torchvision's to_dtype(float -> uint8)
            levels[i] = uint8_t(std::clamp(in[i], 0.0f, 1.0f) * 255.999f);
        }
        for (int64_t ch = 0; ch < e.c; ++ch)
          equalizeChannel(levels.data() + ch * e.plane, e.plane);
        for (int64_t i = 0; i < e.size; ++i) {
          if constexpr (std::is_same_v<T, uint8_t>)
            out[i] = levels[i];
          else
            out[i] = float(levels[i]) / 255.0f;
        }
      });
}

torch::Tensor posterize(const torch::Tensor &image, int bits) {
  if (bits < 0 || bits > 8)
    throw std::invalid_argument("posterize: bits must be in [0, 8], got " +
                                std::to_string(bits));
  return forEachType(
      image, "posterize", [bits](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        if constexpr (std::is_same_v<T, uint8_t>) {
          uint8_t mask = uint8_t(~((1u << (8 - bits)) - 1));
          for (int64_t i = 0; i < e.size; ++i)
            out[i] = in[i] & mask;
        } else {
          float levels = float(1 << bits);
          for (int64_t i = 0; i < e.size; ++i)
            out[i] = std::clamp(std::floor(in[i] * levels), 0.0f, levels - 1) /
                     levels;
        }
      });
}

torch::Tensor solarize(const torch::Tensor &image, double threshold) {
  return forEachType(
      image, "solarize", [threshold](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        float limit = float(threshold) * (kBound<T> / 255.0f);
        for (int64_t i = 0; i < e.size; ++i)
          out[i] = float(in[i]) >= limit ? T(kBound<T> - in[i]) : in[i];
      });
}

torch::Tensor affine(const torch::Tensor &image,
                     const std::array<double, 6> &m) {
  return forEachType(
      image, "affine", [&m](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        for (int64_t y = 0; y < e.h; ++y) {
          for (int64_t x = 0; x < e.w; ++x) {
            double cx = double(x) + 0.5, cy = double(y) + 0.5;
            double sx = m[0] * cx + m[1] * cy + m[2] - 0.5;
            double sy = m[3] * cx + m[4] * cy + m[5] - 0.5;
            double fx = std::floor(sx), fy = std::floor(sy);
            auto x0 = int64_t(fx), y0 = int64_t(fy);
            float dx = float(sx - fx), dy = float(sy - fy);
            const int64_t xs[2] = {x0, x0 + 1}, ys[2] = {y0, y0 + 1};
            const float wx[2] = {1 - dx, dx}, wy[2] = {1 - dy, dy};
            for (int64_t ch = 0; ch < e.c; ++ch) {
              const T *src = in + ch * e.plane;
              float v = 0;
              for (int j = 0; j < 2; ++j) {
                if (ys[j] < 0 || ys[j] >= e.h || wy[j] == 0)
                  continue;
                for (int i = 0; i < 2; ++i)
                  if (xs[i] >= 0 && xs[i] < e.w && wx[i] != 0)
                    v += wx[i] * wy[j] * float(src[ys[j] * e.w + xs[i]]);
              }
              out[ch * e.plane + y * e.w + x] = fromFloatRounded<T>(v);
            }
          }
        }
      });
}

torch::Tensor rotate(const torch::Tensor &image, double degrees) {
  // PIL's Image.rotate: the inverse map of a rotation about (w/2, h/2).
  double angle = -degrees * M_PI / 180.0;
  double cosA = roundTo15Digits(std::cos(angle));
  double sinA = roundTo15Digits(std::sin(angle));
  std::array<double, 6> m = {cosA, sinA, 0, -sinA, cosA, 0};
  double cx = double(image.size(-1)) / 2, cy = double(image.size(-2)) / 2;
  m[2] = m[0] * -cx + m[1] * -cy + cx;
  m[5] = m[3] * -cx + m[4] * -cy + cy;
  return affine(image, m);
}

torch::Tensor shearX(const torch::Tensor &image, double shear) {
  return affine(image, {1, shear, 0, 0, 1, 0});
}

torch::Tensor shearY(const torch::Tensor &image, double shear) {
  return affine(image, {1, 0, 0, shear, 1, 0});
}

torch::Tensor translateX(const torch::Tensor &image, double pixels) {
  return affine(image, {1, 0, pixels, 0, 1, 0});
}

torch::Tensor translateY(const torch::Tensor &image, double pixels) {
  return affine(image, {1, 0, 0, 0, 1, pixels});
}

torch::Tensor adjustColor(const torch::Tensor &image, double factor) {
  return forEachType(image, "adjust_color",
                     [factor](const auto *in, auto *out, Extent e) {
                       checkRgbOrGray(e.c, "adjust_color");
                       if (e.c == 1) {
                         std::copy(in, in + e.plane, out);
                         return;
                       }
                       std::vector<float> gray = grayscale(in, e.plane);
                       blend(in, out, e.size, factor,
                             [&](int64_t i) { return gray[i % e.plane]; });
                     });
}

torch::Tensor adjustContrast(const torch::Tensor &image, double factor) {
  return forEachType(
      image, "adjust_contrast", [factor](const auto *in, auto *out, Extent e) {
        double sum = 0;
        if (e.c == 3) {
          for (float g : grayscale(in, e.plane))
            sum += g;
          sum /= double(e.plane);
        } else {
          for (int64_t i = 0; i < e.size; ++i)
            sum += double(in[i]);
          sum /= double(e.size);
        }
        float mean = float(sum);
        blend(in, out, e.size, factor, [mean](int64_t) { return mean; });
      });
}

torch::Tensor adjustBrightness(const torch::Tensor &image, double factor) {
  return forEachType(image, "adjust_brightness",
                     [factor](const auto *in, auto *out, Extent e) {
                       blend(in, out, e.size, factor,
                             [](int64_t) { return 0.0f; });
                     });
}

torch::Tensor adjustSharpness(const torch::Tensor &image, double factor) {
  return forEachType(
      image, "adjust_sharpness", [factor](const auto *in, auto *out, Extent e) {
        using T = Pixel<decltype(in)>;
        if (e.h <= 2 || e.w <= 2) {
          std::copy(in, in + e.size, out);
          return;
        }
        std::vector<float> smooth(static_cast<size_t>(e.size));
        for (int64_t i = 0; i < e.size; ++i)
          smooth[i] = float(in[i]);
        for (int64_t ch = 0; ch < e.c; ++ch) {
          const T *src = in + ch * e.plane;
          for (int64_t y = 1; y + 1 < e.h; ++y)
            for (int64_t x = 1; x + 1 < e.w; ++x) {
              float s = 4 * float(src[y * e.w + x]);
              for (int64_t dy = -1; dy <= 1; ++dy)
                for (int64_t dx = -1; dx <= 1; ++dx)
                  s += float(src[(y + dy) * e.w + x + dx]);
              smooth[ch * e.plane + y * e.w + x] =
                  float(fromFloatRounded<T>(s / 13.0f));
            }
        }
        blend(in, out, e.size, factor, [&](int64_t i) { return smooth[i]; });
      });
}

} // namespace composer::runtime::image
