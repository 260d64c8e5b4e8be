//===- ImageCodecTest.cpp - JPEG and PNG decoding, image folders ----------===//
//
// The files come from PIL at test time (make_test_images.py), with what PIL
// decodes from them: libjpeg-turbo on both sides, so JPEGs must match PIL's
// convert('RGB') byte for byte.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/ImageCodec.h"
#include "composer/Runtime/Data.h"
#include "composer/Runtime/ImageFolder.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace composer::runtime;
using namespace composer::runtime::testutils;

namespace {

/// The files of make_test_images.py, made once for the whole binary.
const std::string &testImages() {
  static const std::string dir = [] {
    std::string dir = makeTempDir("composer-images");
    std::string command = std::string(COMPOSER_PYTHON) + " " +
                          COMPOSER_SOURCE_DIR +
                          "/unittests/Runtime/make_test_images.py " + dir;
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("make_test_images.py failed");
    return dir;
  }();
  return dir;
}

std::string readAll(const std::string &path) { return readFileBytes(path); }

/// PIL's RGB pixels of an image, as [3, H, W].
torch::Tensor expectedPixels(const std::string &name, int64_t height,
                             int64_t width) {
  std::string bytes = readAll(testImages() + "expected/" + name + ".rgb");
  EXPECT_EQ(int64_t(bytes.size()), height * width * 3) << name;
  return torch::from_blob(bytes.data(), {height, width, 3}, torch::kUInt8)
      .permute({2, 0, 1})
      .clone();
}

torch::Tensor decodeFile(const std::string &path) {
  std::string bytes = readAll(path);
  return decodeImage(bytes.data(), bytes.size(), path);
}

template <typename F> void expectDataError(F f, const std::string &part) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one containing " << part;
  } catch (const DataError &e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

} // namespace

TEST(ImageCodecTest, DecodesEveryKindAsPilConvertsToRgb) {
  for (const char *name :
       {"a_rgb/rgb.jpg", "a_rgb/rgb.png", "a_rgb/rgba.png", "a_rgb/palette.png",
        "b_gray/gray.jpg", "b_gray/gray.png", "c_cmyk/cmyk.jpg"}) {
    SCOPED_TRACE(name);
    std::string path = testImages() + "folder/" + name;
    std::string bytes = readAll(path);
    ImageInfo info = readImageInfo(bytes.data(), bytes.size(), path);
    EXPECT_EQ(info.height, 37);
    EXPECT_EQ(info.width, 53);
    torch::Tensor image = decodeFile(path);
    ASSERT_EQ(image.sizes(), (std::vector<int64_t>{3, 37, 53}));
    std::string flat = name;
    flat[flat.find('/')] = '_';
    torch::Tensor want = expectedPixels(flat, 37, 53);
    EXPECT_TRUE(torch::equal(image, want))
        << "max difference "
        << (image.to(torch::kInt) - want.to(torch::kInt))
               .abs()
               .max()
               .item<int>();
  }
}

TEST(ImageCodecTest, CorruptFilesAreErrorsNamingTheFile) {
  for (const char *name :
       {"truncated.jpg", "header-only.jpg", "empty.jpg", "random.jpg"}) {
    std::string path = testImages() + "corrupt/" + name;
    expectDataError([&] { decodeFile(path); }, path);
  }
  expectDataError([&] { readFileBytes(testImages() + "missing.jpg"); },
                  "missing.jpg: cannot open");
}

TEST(ImageCodecTest, ScaledRegionDecodeStaysCloseToPilsCropAndResize) {
  // Box (100, 60)-(420, 300) of a 512 x 384 JPEG to 80 x 60: the decoder
  // takes scale 2/8 (80 x 60 pixels of region) and only the region's rows
  // and columns. PIL decodes at full scale and resizes; the results differ
  // by the DCT scaling, not by a shift or a wrong region.
  std::string path = testImages() + "big.jpg";
  std::string bytes = readAll(path);
  int calls = 0;
  torch::Tensor cut = decodeImageCut(
      bytes.data(), bytes.size(), path, [&](int64_t h, int64_t w) {
        ++calls;
        EXPECT_EQ(h, 384);
        EXPECT_EQ(w, 512);
        return ImageCut{60, 100, 240, 320, 60, 80};
      });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(jpegScaleForCut({60, 100, 240, 320, 60, 80}), 2);
  EXPECT_EQ(jpegScaleForCut({0, 0, 240, 320, 61, 80}), 4); // not 3: no SIMD
  EXPECT_EQ(jpegScaleForCut({0, 0, 240, 320, 200, 80}), 8);
  ASSERT_EQ(cut.sizes(), (std::vector<int64_t>{3, 60, 80}));
  std::string raw = readAll(testImages() + "big_cut.rgb");
  torch::Tensor want = torch::from_blob(raw.data(), {60, 80, 3}, torch::kUInt8)
                           .permute({2, 0, 1});
  torch::Tensor diff = (cut.to(torch::kFloat) - want.to(torch::kFloat)).abs();
  EXPECT_LT(diff.mean().item<float>(), 3.0f);
  EXPECT_LT(diff.max().item<float>(), 40.0f);
  // The full-scale decode cut the same way is PIL's exactly.
  torch::Tensor full =
      applyImageCut(decodeFile(path), {60, 100, 240, 320, 60, 80});
  EXPECT_TRUE(torch::equal(full, want));
}

TEST(ImageFolderTest, ListsAsTorchvisionAndCountsWhatItSkips) {
  auto folder = openImageFolder(testImages() + "folder");
  std::ifstream samples(testImages() + "samples.txt");
  std::string path;
  int64_t label;
  size_t i = 0;
  while (samples >> path >> label) {
    ASSERT_LT(i, folder->entries().size());
    EXPECT_EQ(folder->entries()[i].path, path);
    EXPECT_EQ(folder->entries()[i].label, label) << path;
    ++i;
  }
  EXPECT_EQ(i, folder->entries().size());
  EXPECT_EQ(folder->classes(),
            (std::vector<std::string>{"a_rgb", "b_gray", "c_cmyk", "z_empty"}));
  EXPECT_EQ(folder->spec().numClasses, 4);
  EXPECT_EQ(folder->stats().notImages, 1);
  EXPECT_EQ(folder->stats().unsupportedImages, 1);
  EXPECT_EQ(folder->stats().emptyClasses, 1);
  EXPECT_THROW(openImageFolder(testImages() + "nowhere"), std::runtime_error);
}

TEST(ImageFolderTest, ListFormReportsBadLinesByNumber) {
  std::string dir = testImages();
  {
    std::ofstream index(dir + "list.txt");
    index
        << "# path label\nfolder/a_rgb/rgb.jpg 3\n\nfolder/c_cmyk/cmyk.jpg 1\n";
  }
  auto list = openImageList(dir + "list.txt");
  ASSERT_EQ(list->size(), 2);
  EXPECT_EQ(list->entries()[0].path, dir + "folder/a_rgb/rgb.jpg");
  EXPECT_EQ(list->spec().numClasses, 4);
  EXPECT_EQ(list->get(1).target.item<int64_t>(), 1);
  {
    std::ofstream index(dir + "bad.txt");
    index << "folder/a_rgb/rgb.jpg 0\nfolder/a_rgb/rgb.png two\n";
  }
  try {
    openImageList(dir + "bad.txt");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2: bad label 'two'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ImageFolderTest, SkipBadSamplesReplacesACorruptFile) {
  std::string dir = testImages();
  {
    std::ofstream index(dir + "with-corrupt.txt");
    index << "folder/a_rgb/rgb.jpg 0\ncorrupt/truncated.jpg 1\n"
          << "folder/b_gray/gray.jpg 2\n";
  }
  DataLoaderOptions o;
  o.batchSize = 3;
  o.shuffle = false;
  o.transforms.randomResizedCrop = RandomResizedCrop{16, 16};
  auto list = openImageList(dir + "with-corrupt.txt");
  DataLoader strict(list, o);
  try {
    strict.makeBatch(0, 0);
    ADD_FAILURE() << "no error";
  } catch (const DataError &e) {
    EXPECT_NE(std::string(e.what()).find("truncated.jpg"), std::string::npos);
  }
  auto healed = std::make_shared<SkipBadSamples>(list);
  DataLoader loader(healed, o);
  Batch batch = loader.makeBatch(0, 0);
  EXPECT_EQ(batch.target[1].item<int64_t>(), 2);
  EXPECT_EQ(healed->skipped(), 1);
}
