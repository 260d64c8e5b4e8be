//===- ImageOpsTest.cpp - Image ops against hand-computed images ----------===//

#include "composer/Runtime/ImageOps.h"

#include <gtest/gtest.h>

using namespace composer::runtime;

namespace {

/// A uint8 image [c, h, w] from its values in row-major order.
torch::Tensor bytes(std::vector<int64_t> values, int64_t c, int64_t h,
                    int64_t w) {
  return torch::tensor(values, torch::kLong).to(torch::kUInt8).view({c, h, w});
}

std::vector<int64_t> values(const torch::Tensor &image) {
  torch::Tensor flat = image.to(torch::kLong).flatten();
  return {flat.data_ptr<int64_t>(), flat.data_ptr<int64_t>() + flat.numel()};
}

std::vector<float> floats(const torch::Tensor &image) {
  torch::Tensor flat = image.contiguous().flatten();
  return {flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel()};
}

using Values = std::vector<int64_t>;

TEST(ImageOpsTest, AutocontrastStretchesEachChannel) {
  // Channel 0: 50..200 -> scale 255/150 = 1.7; channel 1 is constant.
  torch::Tensor image = bytes({50, 100, 150, 200, 7, 7, 7, 7}, 2, 2, 2);
  EXPECT_EQ(values(image::autocontrast(image)),
            (Values{0, 85, 170, 255, 7, 7, 7, 7}));
  torch::Tensor f = torch::tensor({0.2f, 0.4f, 0.6f}).view({1, 1, 3});
  std::vector<float> out = floats(image::autocontrast(f));
  EXPECT_NEAR(out[0], 0.0f, 1e-6);
  EXPECT_NEAR(out[1], 0.5f, 1e-6);
  EXPECT_NEAR(out[2], 1.0f, 1e-6);
}

TEST(ImageOpsTest, EqualizeSpreadsTheHistogram) {
  // 128 pixels of 10, 127 of 20, one of 30: step = (128 + 127) / 255 = 1,
  // so each value maps to the count below it.
  std::vector<int64_t> pixels(256, 10);
  std::fill(pixels.begin() + 128, pixels.end() - 1, 20);
  pixels.back() = 30;
  torch::Tensor out = image::equalize(bytes(pixels, 1, 16, 16));
  Values v = values(out);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[128], 128);
  EXPECT_EQ(v[255], 255);
  // Too few pixels for a step: unchanged.
  torch::Tensor small = bytes({0, 0, 128, 255}, 1, 2, 2);
  EXPECT_EQ(values(image::equalize(small)), values(small));
  // Float images are equalized on 256 levels.
  torch::Tensor f = bytes(pixels, 1, 16, 16).to(torch::kFloat) / 255;
  std::vector<float> fo = floats(image::equalize(f));
  EXPECT_NEAR(fo[128], 128.0f / 255, 1e-6);
  EXPECT_NEAR(fo[255], 1.0f, 1e-6);
}

TEST(ImageOpsTest, PosterizeKeepsHighBits) {
  torch::Tensor image = bytes({0, 63, 64, 200, 255}, 1, 1, 5);
  EXPECT_EQ(values(image::posterize(image, 2)), (Values{0, 0, 64, 192, 192}));
  EXPECT_EQ(values(image::posterize(image, 8)), values(image));
  torch::Tensor f = torch::tensor({0.2f, 0.5f, 0.99f}).view({1, 1, 3});
  EXPECT_EQ(floats(image::posterize(f, 1)),
            (std::vector<float>{0.0f, 0.5f, 0.5f}));
}

TEST(ImageOpsTest, SolarizeInvertsAboveTheThreshold) {
  torch::Tensor image = bytes({0, 127, 128, 255}, 1, 1, 4);
  EXPECT_EQ(values(image::solarize(image, 128)), (Values{0, 127, 127, 0}));
  torch::Tensor f = torch::tensor({0.25f, 0.75f}).view({1, 1, 2});
  EXPECT_EQ(floats(image::solarize(f, 128)),
            (std::vector<float>{0.25f, 0.25f}));
}

TEST(ImageOpsTest, TranslateMovesContentAndFillsZeros) {
  torch::Tensor row = bytes({10, 20, 30}, 1, 1, 3);
  EXPECT_EQ(values(image::translateX(row, 1)), (Values{20, 30, 0}));
  torch::Tensor column = bytes({10, 20, 30}, 1, 3, 1);
  EXPECT_EQ(values(image::translateY(column, -1)), (Values{0, 10, 20}));
}

TEST(ImageOpsTest, ShearInterpolatesBilinearly) {
  // Output (x, y) samples the input at x + shear (y + 0.5): half-way between
  // two pixels on row 0, and beyond the image (zeros) on the right.
  torch::Tensor image = bytes({10, 20, 40, 50, 60, 80}, 1, 2, 3);
  EXPECT_EQ(values(image::shearX(image, 1.0)), (Values{15, 30, 20, 70, 40, 0}));
  torch::Tensor column = bytes({10, 20, 40, 60}, 1, 4, 1);
  // One column: output (0, y) samples y + 0.5, between rows y and y + 1.
  EXPECT_EQ(values(image::shearY(column, 1.0)), (Values{15, 30, 50, 30}));
}

TEST(ImageOpsTest, RotateTurnsCounterClockwise) {
  torch::Tensor image = bytes({1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 3, 3);
  EXPECT_EQ(values(image::rotate(image, 90)),
            (Values{3, 6, 9, 2, 5, 8, 1, 4, 7}));
  EXPECT_EQ(values(image::rotate(image, -90)),
            (Values{7, 4, 1, 8, 5, 2, 9, 6, 3}));
  EXPECT_EQ(values(image::rotate(image, 0)), values(image));
}

TEST(ImageOpsTest, ColorBlendsWithGray) {
  // Gray = 0.2989 * 100 + 0.587 * 200 + 0.114 * 50 = 152.99 -> 152.
  torch::Tensor pixel = bytes({100, 200, 50}, 3, 1, 1);
  EXPECT_EQ(values(image::adjustColor(pixel, 0.0)), (Values{152, 152, 152}));
  EXPECT_EQ(values(image::adjustColor(pixel, 0.5)), (Values{126, 176, 101}));
  EXPECT_EQ(values(image::adjustColor(pixel, 1.0)), values(pixel));
  torch::Tensor gray = bytes({10, 90}, 1, 1, 2);
  EXPECT_EQ(values(image::adjustColor(gray, 0.0)), values(gray));
}

TEST(ImageOpsTest, ContrastBlendsWithTheMean) {
  torch::Tensor image = bytes({0, 100, 100, 200}, 1, 2, 2); // mean 100
  EXPECT_EQ(values(image::adjustContrast(image, 2.0)),
            (Values{0, 100, 100, 255}));
  EXPECT_EQ(values(image::adjustContrast(image, 0.5)),
            (Values{50, 100, 100, 150}));
  // RGB: the mean of the grayscale image (0.2989 + 0.587 + 0.114 = 0.9999,
  // so gray 100 -> 99).
  torch::Tensor rgb = bytes({100, 100, 100}, 3, 1, 1);
  EXPECT_EQ(values(image::adjustContrast(rgb, 0.0)), (Values{99, 99, 99}));
}

TEST(ImageOpsTest, BrightnessScales) {
  torch::Tensor image = bytes({10, 100, 200, 11}, 1, 1, 4);
  EXPECT_EQ(values(image::adjustBrightness(image, 1.5)),
            (Values{15, 150, 255, 16}));
  EXPECT_EQ(values(image::adjustBrightness(image, 0.5)),
            (Values{5, 50, 100, 5}));
}

TEST(ImageOpsTest, SharpnessBlendsWithTheSmoothedInterior) {
  // Centre 26 among 13s: smoothed (8 * 13 + 5 * 26) / 13 = 18; the border
  // is its own smoothed value.
  torch::Tensor image = bytes({13, 13, 13, 13, 26, 13, 13, 13, 13}, 1, 3, 3);
  EXPECT_EQ(values(image::adjustSharpness(image, 0.0)),
            (Values{13, 13, 13, 13, 18, 13, 13, 13, 13}));
  EXPECT_EQ(values(image::adjustSharpness(image, 2.0)),
            (Values{13, 13, 13, 13, 34, 13, 13, 13, 13}));
  torch::Tensor tiny = bytes({1, 2, 3, 4}, 1, 2, 2);
  EXPECT_EQ(values(image::adjustSharpness(tiny, 0.0)), values(tiny));
}

TEST(ImageOpsTest, RejectsOtherTensors) {
  EXPECT_THROW(image::autocontrast(torch::zeros({2, 2})),
               std::invalid_argument);
  EXPECT_THROW(image::equalize(torch::zeros({1, 2, 2}, torch::kDouble)),
               std::invalid_argument);
  EXPECT_THROW(image::posterize(torch::zeros({1, 2, 2}, torch::kUInt8), 9),
               std::invalid_argument);
}

} // namespace
