//===- DataTest.cpp - Datasets and the data loader ------------------------===//
//
// Loads the real Fashion-MNIST files, checks the IDX and token readers on
// small files written here, and checks the loader's contract: every sample
// once per epoch, order and augmentation drawn from (seed, epoch) alone, so
// resuming or adding workers changes no bits.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Data.h"
#include "TestFiles.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace composer::runtime;
using namespace composer::runtime::testutils;

namespace {

const std::string kFashionDir = "/usr/share/datasets/fashion-mnist/";

void putBigEndian32(std::string &out, uint32_t v) {
  out.push_back(char(v >> 24));
  out.push_back(char(v >> 16));
  out.push_back(char(v >> 8));
  out.push_back(char(v));
}

std::string idxImages(uint32_t n, uint32_t rows, uint32_t cols,
                      const std::vector<uint8_t> &pixels,
                      uint32_t magic = 0x803) {
  std::string out;
  putBigEndian32(out, magic);
  putBigEndian32(out, n);
  putBigEndian32(out, rows);
  putBigEndian32(out, cols);
  out.append(pixels.begin(), pixels.end());
  return out;
}

std::string idxLabels(uint32_t n, const std::vector<uint8_t> &labels,
                      uint32_t magic = 0x801) {
  std::string out;
  putBigEndian32(out, magic);
  putBigEndian32(out, n);
  out.append(labels.begin(), labels.end());
  return out;
}

void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())),
            int(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

/// Runs `fn`, expecting std::runtime_error whose message contains each of
/// `parts`.
template <typename Fn>
void expectErrorContaining(Fn fn, const std::vector<std::string> &parts) {
  try {
    fn();
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error &e) {
    std::string msg = e.what();
    for (const std::string &part : parts)
      EXPECT_NE(msg.find(part), std::string::npos)
          << "message \"" << msg << "\" lacks \"" << part << "\"";
  }
}

std::vector<int64_t> toVector(const torch::Tensor &t) {
  torch::Tensor c = t.to(torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(),
                              c.data_ptr<int64_t>() + c.numel());
}

/// Sum of a uint8 tensor's bytes; a plain loop, as torch's widening sum of
/// 47M bytes takes seconds.
int64_t byteSum(const torch::Tensor &t) {
  torch::Tensor c = t.contiguous();
  const uint8_t *p = c.data_ptr<uint8_t>();
  int64_t sum = 0;
  for (int64_t i = 0, n = c.numel(); i < n; ++i)
    sum += p[i];
  return sum;
}

/// Every sample of `ds` read through the Dataset interface, in memory.
std::shared_ptr<TensorDataset> readAll(std::shared_ptr<const Dataset> ds) {
  std::vector<torch::Tensor> inputs, targets;
  for (int64_t i = 0; i < ds->size(); ++i) {
    Sample sample = ds->get(i);
    inputs.push_back(sample.input);
    targets.push_back(sample.target);
  }
  return std::make_shared<TensorDataset>(
      torch::stack(inputs), torch::stack(targets), ds->spec().kind);
}

/// A dataset whose input and target of sample i are both i, so batches show
/// which samples they hold (int64 inputs pass through the loader unchanged).
std::shared_ptr<const Dataset> indexDataset(int64_t n) {
  auto ds = std::make_shared<TensorDataset>(
      torch::arange(n, torch::kLong).unsqueeze(1),
      torch::arange(n, torch::kLong));
  return ds;
}

std::vector<Batch> drain(DataLoader &loader) {
  std::vector<Batch> out;
  while (auto batch = loader.next())
    out.push_back(std::move(*batch));
  return out;
}

std::vector<int64_t> epochTargets(DataLoader &loader, int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<int64_t> out;
  for (const Batch &b : drain(loader)) {
    auto v = toVector(b.target);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::shared_ptr<TensorDataset> cifarLike(int64_t n, uint64_t seed = 7) {
  SyntheticSpec spec;
  spec.numSamples = n;
  spec.sampleShape = {3, 32, 32};
  spec.seed = seed;
  return makeSynthetic(spec);
}

/// CIFAR training's augmentation: a random crop of the image padded by 4 and
/// a random horizontal flip.
ImageTransforms cifarAugmentation() {
  ImageTransforms t;
  t.randomCropPadding = 4;
  t.horizontalFlip = true;
  return t;
}

/// cifarAugmentation() after CIFAR's normalization.
ImageTransforms cifarTraining() {
  ImageTransforms t = cifarAugmentation();
  t.mean = {0.49, 0.48, 0.45};
  t.std = {0.25, 0.24, 0.26};
  return t;
}

/// Batches of `batchSize` in an order drawn from `seed`, with `transforms`.
DataLoaderOptions shuffledBatches(int64_t batchSize, uint64_t seed,
                                  ImageTransforms transforms) {
  DataLoaderOptions o;
  o.batchSize = batchSize;
  o.seed = seed;
  o.transforms = std::move(transforms);
  return o;
}

/// Expects `got` to be `expected` from batch `first` on, inputs and targets
/// bit for bit.
void expectSameBatches(const std::vector<Batch> &got,
                       const std::vector<Batch> &expected, size_t first = 0) {
  ASSERT_EQ(got.size(), expected.size() - first);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::equal(got[i].input, expected[first + i].input))
        << "batch " << first + i;
    EXPECT_TRUE(torch::equal(got[i].target, expected[first + i].target))
        << "batch " << first + i;
  }
}

/// `image` [C,H,W] shifted so out[y][x] = image[y+sy][x+sx], zero outside.
torch::Tensor shifted(const torch::Tensor &image, int64_t sy, int64_t sx) {
  int64_t h = image.size(1), w = image.size(2);
  torch::Tensor out = torch::zeros_like(image);
  int64_t y0 = std::max<int64_t>(0, -sy), y1 = std::min(h, h - sy);
  int64_t x0 = std::max<int64_t>(0, -sx), x1 = std::min(w, w - sx);
  if (y1 > y0 && x1 > x0)
    out.narrow(1, y0, y1 - y0)
        .narrow(2, x0, x1 - x0)
        .copy_(image.narrow(1, y0 + sy, y1 - y0).narrow(2, x0 + sx, x1 - x0));
  return out;
}

//===----------------------------------------------------------------------===//
// IDX
//===----------------------------------------------------------------------===//

TEST(IdxTest, LoadsFashionMnistTestSet) {
  auto ds = loadIdx(kFashionDir + "t10k-images-idx3-ubyte.gz",
                    kFashionDir + "t10k-labels-idx1-ubyte.gz");
  ASSERT_EQ(ds->inputs().sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(ds->inputs().scalar_type(), torch::kUInt8);
  ASSERT_EQ(ds->targets().sizes(), (std::vector<int64_t>{10000}));
  EXPECT_EQ(ds->targets().scalar_type(), torch::kLong);
  EXPECT_EQ(ds->spec().tokensPerSample(), 0);
  EXPECT_EQ(ds->size(), 10000);
  // The test split is balanced: exactly 1000 of each of the 10 classes.
  EXPECT_EQ(toVector(torch::bincount(ds->targets())),
            std::vector<int64_t>(10, 1000));
  // Values computed independently from the files with Python's gzip.
  EXPECT_EQ(toVector(ds->targets().narrow(0, 0, 10)),
            (std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  EXPECT_EQ(byteSum(ds->inputs()[0]), 33456);
  EXPECT_EQ(byteSum(ds->inputs()[1]), 100994);
  EXPECT_EQ(byteSum(ds->inputs()), 573469082);
  EXPECT_EQ(ds->inputs()[0][0][14][14].item<int64_t>(), 110);
}

TEST(IdxTest, LoadsFashionMnistTrainSetQuickly) {
  auto start = std::chrono::steady_clock::now();
  auto ds = loadIdx(kFashionDir + "train-images-idx3-ubyte.gz",
                    kFashionDir + "train-labels-idx1-ubyte.gz");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("loaded 60000 Fashion-MNIST training images in %.3f s\n",
              seconds);
  ASSERT_EQ(ds->inputs().sizes(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(toVector(torch::bincount(ds->targets())),
            std::vector<int64_t>(10, 6000));
  EXPECT_EQ(byteSum(ds->inputs()), 3431114169LL);
  EXPECT_EQ(byteSum(ds->inputs()[0]), 76247);
  // Generous bound for a shared machine; typically a few tenths of a second.
  EXPECT_LT(seconds, 3.0);
}

TEST(IdxTest, ReadsRawAndGzipAlike) {
  std::string dir = makeTempDir("composer-data");
  std::vector<uint8_t> pixels(3 * 2 * 4);
  for (size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = uint8_t(i * 11);
  std::string images = idxImages(3, 2, 4, pixels);
  std::string labels = idxLabels(3, {7, 0, 255});
  writeFile(dir + "img", images);
  writeFile(dir + "lbl", labels);
  writeGzip(dir + "img.gz", images);
  writeGzip(dir + "lbl.gz", labels);

  auto raw = loadIdx(dir + "img", dir + "lbl");
  auto gz = loadIdx(dir + "img.gz", dir + "lbl.gz");
  auto mixed = loadIdx(dir + "img.gz", dir + "lbl");
  ASSERT_EQ(raw->inputs().sizes(), (std::vector<int64_t>{3, 1, 2, 4}));
  EXPECT_EQ(toVector(raw->inputs().flatten()),
            std::vector<int64_t>(pixels.begin(), pixels.end()));
  EXPECT_EQ(toVector(raw->targets()), (std::vector<int64_t>{7, 0, 255}));
  // Row-major: sample 1, row 1, column 2 is byte 8 + 4 + 2.
  EXPECT_EQ(raw->inputs()[1][0][1][2].item<int64_t>(), 14 * 11);
  EXPECT_TRUE(torch::equal(raw->inputs(), gz->inputs()));
  EXPECT_TRUE(torch::equal(raw->targets(), gz->targets()));
  EXPECT_TRUE(torch::equal(raw->inputs(), mixed->inputs()));
}

TEST(IdxTest, RejectsBadMagic) {
  std::string dir = makeTempDir("composer-data");
  std::vector<uint8_t> pixels(4, 1);
  writeFile(dir + "img", idxImages(1, 2, 2, pixels));
  writeFile(dir + "lbl", idxLabels(1, {0}));
  // Labels given as images and vice versa: each magic names the other kind.
  expectErrorContaining([&] { loadIdx(dir + "lbl", dir + "img"); },
                        {dir + "lbl", "magic", "0x00000801", "0x00000803"});
  writeFile(dir + "bad.gz", "");
  writeGzip(dir + "bad.gz", idxImages(1, 2, 2, pixels, 0x0D03));
  expectErrorContaining([&] { loadIdx(dir + "bad.gz", dir + "lbl"); },
                        {"bad.gz", "magic", "0x00000D03"});
  writeFile(dir + "badlbl", idxLabels(1, {0}, 0x802));
  expectErrorContaining([&] { loadIdx(dir + "img", dir + "badlbl"); },
                        {"badlbl", "magic"});
}

TEST(IdxTest, RejectsTruncatedFiles) {
  std::string dir = makeTempDir("composer-data");
  std::vector<uint8_t> pixels(5 * 3 * 3, 9);
  std::string images = idxImages(5, 3, 3, pixels);
  std::string labels = idxLabels(5, {0, 1, 2, 3, 4});
  writeFile(dir + "lbl", labels);

  writeFile(dir + "short", images.substr(0, images.size() - 10));
  expectErrorContaining(
      [&] { loadIdx(dir + "short", dir + "lbl"); },
      {dir + "short", "truncated", "expected 45 bytes of image data, got 35"});

  writeGzip(dir + "short.gz", images.substr(0, 16 + 7));
  expectErrorContaining([&] { loadIdx(dir + "short.gz", dir + "lbl"); },
                        {"short.gz", "truncated", "got 7"});

  writeFile(dir + "header", images.substr(0, 10));
  expectErrorContaining([&] { loadIdx(dir + "header", dir + "lbl"); },
                        {"header", "truncated header"});

  writeFile(dir + "img", images);
  writeFile(dir + "shortlbl", labels.substr(0, labels.size() - 2));
  expectErrorContaining([&] { loadIdx(dir + "img", dir + "shortlbl"); },
                        {"shortlbl", "truncated", "expected 5 bytes"});

  // A gzip stream cut short mid-deflate also fails and names the file.
  std::vector<uint8_t> noisy(5 * 3 * 3);
  for (size_t i = 0; i < noisy.size(); ++i)
    noisy[i] = uint8_t(i * 37 + 11);
  writeGzip(dir + "full.gz", idxImages(5, 3, 3, noisy));
  std::ifstream in(dir + "full.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)),
                 std::istreambuf_iterator<char>());
  writeFile(dir + "cut.gz", gz.substr(0, gz.size() / 2));
  expectErrorContaining([&] { loadIdx(dir + "cut.gz", dir + "lbl"); },
                        {"cut.gz"});
}

TEST(IdxTest, RejectsCountMismatchAndMissingFiles) {
  std::string dir = makeTempDir("composer-data");
  writeFile(dir + "img", idxImages(3, 1, 1, {1, 2, 3}));
  writeFile(dir + "lbl", idxLabels(2, {0, 1}));
  expectErrorContaining([&] { loadIdx(dir + "img", dir + "lbl"); },
                        {dir + "lbl", "label count 2", "image count 3"});
  expectErrorContaining([&] { loadIdx(dir + "nope", dir + "lbl"); },
                        {dir + "nope", "cannot open"});
  writeFile(dir + "empty", idxImages(3, 0, 4, {}));
  expectErrorContaining([&] { loadIdx(dir + "empty", dir + "lbl"); },
                        {"empty", "image size"});
}

//===----------------------------------------------------------------------===//
// Token files
//===----------------------------------------------------------------------===//

void writeTokens(const std::string &path, const std::vector<uint16_t> &tokens) {
  std::string bytes;
  for (uint16_t t : tokens) {
    bytes.push_back(char(t & 0xFF));
    bytes.push_back(char(t >> 8));
  }
  writeFile(path, bytes);
}

TEST(TokenFileTest, CutsSamplesWithShiftedTargets) {
  std::string dir = makeTempDir("composer-data");
  // 11 tokens, T = 4: (11 - 1) / 4 = 2 samples; the last two are unused.
  std::vector<uint16_t> tokens = {10, 11, 12, 13, 14, 15, 16, 65535, 300, 0, 1};
  writeTokens(dir + "tok.bin", tokens);
  auto ds = readAll(openTokenFile(dir + "tok.bin", 4));
  EXPECT_EQ(ds->spec().tokensPerSample(), 4);
  ASSERT_EQ(ds->inputs().sizes(), (std::vector<int64_t>{2, 4}));
  ASSERT_EQ(ds->targets().sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(ds->inputs().scalar_type(), torch::kLong);
  EXPECT_EQ(ds->targets().scalar_type(), torch::kLong);
  EXPECT_EQ(toVector(ds->inputs()),
            (std::vector<int64_t>{10, 11, 12, 13, 14, 15, 16, 65535}));
  EXPECT_EQ(toVector(ds->targets()),
            (std::vector<int64_t>{11, 12, 13, 14, 15, 16, 65535, 300}));

  // Exactly T + 1 tokens make one sample.
  writeTokens(dir + "one.bin", {1, 2, 3});
  auto one = readAll(openTokenFile(dir + "one.bin", 2));
  EXPECT_EQ(toVector(one->inputs()), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(toVector(one->targets()), (std::vector<int64_t>{2, 3}));
}

TEST(TokenFileTest, RejectsBadFiles) {
  std::string dir = makeTempDir("composer-data");
  expectErrorContaining([&] { openTokenFile(dir + "missing.bin", 4); },
                        {"missing.bin", "cannot open"});
  writeFile(dir + "odd.bin", std::string(7, '\1'));
  expectErrorContaining([&] { openTokenFile(dir + "odd.bin", 2); },
                        {"odd.bin", "size 7 bytes", "not a multiple of 2"});
  writeTokens(dir + "short.bin", {1, 2, 3, 4});
  expectErrorContaining(
      [&] { openTokenFile(dir + "short.bin", 4); },
      {"short.bin", "too short", "4 uint16 tokens", "at least 5"});
  EXPECT_THROW(openTokenFile(dir + "short.bin", 0), std::invalid_argument);
}

TEST(TokenFileTest, ReadsUint32Tokens) {
  std::string dir = makeTempDir("composer-data");
  std::string bytes;
  for (uint32_t token : {70000u, 1u, 4000000000u, 65536u, 7u})
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(char(token >> shift));
  writeFile(dir + "tok32.bin", bytes);
  auto ds = readAll(openTokenFile(dir + "tok32.bin", 2, 4));
  EXPECT_EQ(toVector(ds->inputs()),
            (std::vector<int64_t>{70000, 1, 4000000000LL, 65536}));
  EXPECT_EQ(toVector(ds->targets()),
            (std::vector<int64_t>{1, 4000000000LL, 65536, 7}));
  writeFile(dir + "six.bin", std::string(6, '\1'));
  expectErrorContaining([&] { openTokenFile(dir + "six.bin", 1, 4); },
                        {"six.bin", "not a multiple of 4", "uint32"});
}

TEST(TokenFileTest, MapsAFileBeyondFourGiBWithoutReadingIt) {
  // A sparse 5 GiB file: only its last sample's bytes exist on disk. Reading
  // it whole would take seconds and 20 GiB as int64; mapping takes neither.
  std::string path = makeTempDir("composer-data") + "big.bin";
  const int64_t bytes = 5LL << 30, length = 4;
  {
    std::ofstream out(path, std::ios::binary);
    out.seekp(bytes - 10);
    for (uint16_t token : {11, 12, 13, 14, 15})
      out.put(char(token & 0xff)).put(char(token >> 8));
  }
  auto ds = openTokenFile(path, length);
  const int64_t tokens = bytes / 2;
  ASSERT_EQ(ds->size(), (tokens - 1) / length);
  Sample last = ds->get(ds->size() - 1);
  // Samples use the first size() * length + 1 tokens: the last three of
  // the file (13, 14, 15) are left over.
  ASSERT_EQ(tokens - (ds->size() * length + 1), 3);
  EXPECT_EQ(toVector(last.input), (std::vector<int64_t>{0, 0, 0, 11}));
  EXPECT_EQ(toVector(last.target), (std::vector<int64_t>{0, 0, 11, 12}));
  EXPECT_EQ(toVector(ds->get(0).input), (std::vector<int64_t>{0, 0, 0, 0}));
  std::remove(path.c_str());
}

//===----------------------------------------------------------------------===//
// Synthetic data
//===----------------------------------------------------------------------===//

TEST(SyntheticTest, ImagesAreDeterministicFromSeed) {
  SyntheticSpec spec;
  spec.numSamples = 64;
  spec.sampleShape = {3, 8, 8};
  spec.numClasses = 5;
  spec.seed = 42;
  auto a = makeSynthetic(spec), b = makeSynthetic(spec);
  ASSERT_EQ(a->inputs().sizes(), (std::vector<int64_t>{64, 3, 8, 8}));
  EXPECT_EQ(a->inputs().scalar_type(), torch::kUInt8);
  ASSERT_EQ(a->targets().sizes(), (std::vector<int64_t>{64}));
  EXPECT_EQ(a->targets().scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(a->inputs(), b->inputs()));
  EXPECT_TRUE(torch::equal(a->targets(), b->targets()));
  EXPECT_GE(a->targets().min().item<int64_t>(), 0);
  EXPECT_LT(a->targets().max().item<int64_t>(), 5);
  // Spread over the whole byte range and every class.
  EXPECT_GT(a->inputs().max().item<int64_t>(), 240);
  EXPECT_LT(a->inputs().min().item<int64_t>(), 15);
  std::vector<int64_t> labels = toVector(a->targets());
  EXPECT_EQ(std::set<int64_t>(labels.begin(), labels.end()).size(), 5u);
  spec.seed = 43;
  auto c = makeSynthetic(spec);
  EXPECT_FALSE(torch::equal(a->inputs(), c->inputs()));
}

TEST(SyntheticTest, TokensAreAShiftedStream) {
  SyntheticSpec spec;
  spec.numSamples = 16;
  spec.sampleShape = {8};
  spec.vocabSize = 100;
  spec.seed = 3;
  auto a = makeSynthetic(spec), b = makeSynthetic(spec);
  EXPECT_EQ(a->spec().tokensPerSample(), 8);
  ASSERT_EQ(a->inputs().sizes(), (std::vector<int64_t>{16, 8}));
  ASSERT_EQ(a->targets().sizes(), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(a->inputs().scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(a->inputs(), b->inputs()));
  EXPECT_TRUE(torch::equal(a->targets(), b->targets()));
  EXPECT_GE(a->inputs().min().item<int64_t>(), 0);
  EXPECT_LT(a->inputs().max().item<int64_t>(), 100);
  // Within a sample, target t is input t + 1; across samples the stream goes
  // on: the last target of sample i is the first input of sample i + 1.
  EXPECT_TRUE(
      torch::equal(a->targets().narrow(1, 0, 7), a->inputs().narrow(1, 1, 7)));
  EXPECT_TRUE(torch::equal(a->targets().select(1, 7).narrow(0, 0, 15),
                           a->inputs().select(1, 0).narrow(0, 1, 15)));
  EXPECT_THROW(makeSynthetic({4, {2, 2}, 10, 100, 0}), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// The loader
//===----------------------------------------------------------------------===//

TEST(DataLoaderTest, CountsBatchesWithAndWithoutDropLast) {
  DataLoaderOptions o;
  o.batchSize = 3;
  DataLoader keep(indexDataset(10), o);
  EXPECT_EQ(keep.batchesPerEpoch(), 4);
  EXPECT_EQ(keep.samplesPerEpoch(), 10);
  keep.startEpoch(0);
  std::vector<Batch> batches = drain(keep);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].size(), 3);
  EXPECT_EQ(batches[3].size(), 1);
  EXPECT_FALSE(keep.next().has_value()); // stays at the end

  o.dropLast = true;
  DataLoader drop(indexDataset(10), o);
  EXPECT_EQ(drop.batchesPerEpoch(), 3);
  EXPECT_EQ(drop.samplesPerEpoch(), 9);
  drop.startEpoch(0);
  batches = drain(drop);
  ASSERT_EQ(batches.size(), 3u);
  for (const Batch &b : batches)
    EXPECT_EQ(b.size(), 3);

  o.batchSize = 5; // exact multiple: nothing dropped
  DataLoader exact(indexDataset(10), o);
  EXPECT_EQ(exact.batchesPerEpoch(), 2);
  EXPECT_EQ(exact.samplesPerEpoch(), 10);

  EXPECT_THROW(keep.makeBatch(0, 4), std::out_of_range);
  EXPECT_THROW(keep.startEpoch(0, 5), std::out_of_range);
  o.batchSize = 0;
  EXPECT_THROW(DataLoader(indexDataset(10), o), std::invalid_argument);
}

TEST(DataLoaderTest, EpochCoversEverySampleOnceInAFreshOrder) {
  DataLoaderOptions o;
  o.batchSize = 16;
  o.seed = 5;
  DataLoader loader(indexDataset(100), o);
  std::vector<int64_t> e0 = epochTargets(loader, 0);
  std::vector<int64_t> e1 = epochTargets(loader, 1);
  std::vector<int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  for (const auto *epoch : {&e0, &e1}) {
    std::vector<int64_t> sorted = *epoch;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, all);
  }
  EXPECT_NE(e0, all); // shuffled
  EXPECT_NE(e0, e1);  // differently each epoch
  // Same (seed, epoch): same order, in this loader or a new one.
  EXPECT_EQ(epochTargets(loader, 0), e0);
  DataLoader again(indexDataset(100), o);
  EXPECT_EQ(epochTargets(again, 1), e1);
  o.seed = 6;
  DataLoader other(indexDataset(100), o);
  EXPECT_NE(epochTargets(other, 0), e0);
  // Inputs travel with their targets.
  loader.startEpoch(3);
  auto batch = loader.next();
  EXPECT_TRUE(torch::equal(batch->input.squeeze(1), batch->target));
  // Without shuffling the order is the dataset's.
  o.shuffle = false;
  DataLoader ordered(indexDataset(100), o);
  EXPECT_EQ(epochTargets(ordered, 4), all);
}

TEST(DataLoaderTest, ResumingMidEpochYieldsTheRemainingBatches) {
  auto ds = cifarLike(50);
  DataLoaderOptions o = shuffledBatches(8, /*seed=*/11, cifarAugmentation());
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    o.numWorkers = workers;
    DataLoader loader(ds, o);
    loader.startEpoch(2);
    std::vector<Batch> full = drain(loader);
    ASSERT_EQ(full.size(), 7u);
    for (int64_t k : {0, 3, 6, 7}) {
      loader.startEpoch(2, k);
      ASSERT_NO_FATAL_FAILURE(expectSameBatches(drain(loader), full, k))
          << "k=" << k;
    }
    for (int64_t i = 0; i < 7; ++i)
      EXPECT_TRUE(torch::equal(loader.makeBatch(2, i).input, full[i].input));
  }
}

TEST(DataLoaderTest, WorkersGiveBitIdenticalBatches) {
  auto ds = cifarLike(300);
  DataLoaderOptions o = shuffledBatches(32, /*seed=*/9, cifarTraining());
  DataLoader inline0(ds, o);
  inline0.startEpoch(1);
  std::vector<Batch> expected = drain(inline0);
  ASSERT_EQ(expected.size(), 10u);
  for (int workers : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    o.numWorkers = workers;
    DataLoader loader(ds, o);
    loader.startEpoch(1);
    ASSERT_NO_FATAL_FAILURE(expectSameBatches(drain(loader), expected));
  }
}

TEST(DataLoaderTest, WorkersShutDownMidEpoch) {
  auto ds = cifarLike(200);
  DataLoaderOptions o;
  o.batchSize = 10;
  o.numWorkers = 3;
  o.transforms.randomCropPadding = 2;
  {
    DataLoader loader(ds, o);
    loader.startEpoch(0);
    ASSERT_TRUE(loader.next().has_value());
    // Replace the epoch while workers are busy, then again at once.
    loader.startEpoch(1, 5);
    loader.startEpoch(2);
    auto first = loader.next();
    ASSERT_TRUE(first.has_value());
    EXPECT_TRUE(torch::equal(first->input, loader.makeBatch(2, 0).input));
    // Destroyed with batches in flight: must join without hanging.
  }
  DataLoader idle(ds, o);
  idle.startEpoch(0); // never read
}

TEST(DataLoaderTest, WorkerErrorsReachNext) {
  auto ds = cifarLike(20);
  DataLoaderOptions o;
  o.batchSize = 4;
  o.transforms.mean = {0.5, 0.5}; // images have 3 channels
  o.transforms.std = {0.5, 0.5};
  for (int workers : {0, 2}) {
    o.numWorkers = workers;
    DataLoader loader(ds, o);
    loader.startEpoch(0);
    EXPECT_THROW(loader.next(), std::invalid_argument) << workers;
    EXPECT_THROW(loader.next(), std::invalid_argument) << workers; // sticky
  }
}

TEST(DataLoaderTest, ScalesAndNormalizesImages) {
  auto ds = cifarLike(10);
  DataLoaderOptions o;
  o.batchSize = 10;
  o.shuffle = false;
  DataLoader plain(ds, o);
  Batch b = plain.makeBatch(0, 0);
  EXPECT_EQ(b.input.scalar_type(), torch::kFloat);
  ASSERT_EQ(b.input.sizes(), (std::vector<int64_t>{10, 3, 32, 32}));
  torch::Tensor scaled = ds->inputs().to(torch::kFloat) / 255.0;
  EXPECT_TRUE(torch::allclose(b.input, scaled, 0, 1e-6));
  EXPECT_TRUE(torch::equal(b.target, ds->targets()));

  o.transforms.mean = {0.1, 0.5, 0.9};
  o.transforms.std = {0.2, 0.3, 0.4};
  DataLoader norm(ds, o);
  Batch n = norm.makeBatch(0, 0);
  torch::Tensor mean = torch::tensor({0.1, 0.5, 0.9}).view({1, 3, 1, 1});
  torch::Tensor std = torch::tensor({0.2, 0.3, 0.4}).view({1, 3, 1, 1});
  torch::Tensor want = ((scaled - mean) / std).to(torch::kFloat);
  EXPECT_TRUE(torch::allclose(n.input, want, 1e-5, 1e-5));
  // One pixel by hand: channel 2 of sample 3.
  float v = ds->inputs()[3][2][5][7].item<uint8_t>() / 255.0f;
  EXPECT_NEAR(n.input[3][2][5][7].item<float>(), (v - 0.9f) / 0.4f, 1e-5);
}

TEST(DataLoaderTest, RandomCropShiftsContentAndKeepsShape) {
  auto ds = cifarLike(64);
  const int64_t pad = 3;
  DataLoaderOptions o;
  o.batchSize = 64;
  o.shuffle = false;
  o.seed = 1;
  o.transforms.randomCropPadding = pad;
  o.transforms.mean = {0.5, 0.5, 0.5};
  o.transforms.std = {0.5, 0.5, 0.5};
  DataLoader loader(ds, o);
  std::set<std::pair<int64_t, int64_t>> shifts;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    Batch b = loader.makeBatch(epoch, 0);
    ASSERT_EQ(b.input.sizes(), (std::vector<int64_t>{64, 3, 32, 32}));
    for (int64_t i = 0; i < 64; ++i) {
      // Undo normalization; padding was 0 before it, so it reads back as 0.
      torch::Tensor got = b.input[i] * 0.5 + 0.5;
      torch::Tensor image = ds->inputs()[i].to(torch::kFloat) / 255.0;
      bool found = false;
      for (int64_t sy = -pad; sy <= pad && !found; ++sy)
        for (int64_t sx = -pad; sx <= pad && !found; ++sx)
          if (torch::allclose(got, shifted(image, sy, sx), 0, 1e-5)) {
            shifts.insert({sy, sx});
            found = true;
          }
      EXPECT_TRUE(found) << "sample " << i << " is no shift of its image";
    }
  }
  // 128 draws over 49 offsets: most of them, including both extremes' rows.
  EXPECT_GT(shifts.size(), 30u);
  EXPECT_TRUE(std::any_of(shifts.begin(), shifts.end(),
                          [&](auto s) { return s.first == -pad; }));
  EXPECT_TRUE(std::any_of(shifts.begin(), shifts.end(),
                          [&](auto s) { return s.first == pad; }));
}

TEST(DataLoaderTest, FlipMirrorsAboutHalfTheImages) {
  auto ds = cifarLike(200);
  DataLoaderOptions o;
  o.batchSize = 200;
  o.shuffle = false;
  o.transforms.horizontalFlip = true;
  DataLoader loader(ds, o);
  Batch b = loader.makeBatch(0, 0);
  torch::Tensor images = ds->inputs().to(torch::kFloat) / 255.0;
  int flipped = 0;
  for (int64_t i = 0; i < 200; ++i) {
    bool same = torch::allclose(b.input[i], images[i], 0, 1e-6);
    bool mirror = torch::allclose(b.input[i], images[i].flip({2}), 0, 1e-6);
    EXPECT_TRUE(same != mirror) << i;
    flipped += mirror;
  }
  EXPECT_GT(flipped, 70);
  EXPECT_LT(flipped, 130);
}

TEST(DataLoaderTest, AugmentationDependsOnSampleNotBatch) {
  auto ds = cifarLike(40);
  DataLoaderOptions o;
  o.seed = 21;
  o.transforms = cifarAugmentation();
  auto bySample = [&](int64_t batchSize) {
    o.batchSize = batchSize;
    DataLoader loader(ds, o);
    loader.startEpoch(3);
    std::map<int64_t, torch::Tensor> out;
    int64_t pos = 0;
    for (const Batch &b : drain(loader))
      for (int64_t i = 0; i < b.size(); ++i)
        out[pos++] = b.input[i];
    return out;
  };
  // The epoch's order does not depend on the batch size, so position p holds
  // the same sample in both runs, and must carry the same augmentation.
  auto a = bySample(4), b = bySample(7);
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 40u);
  for (int64_t p = 0; p < 40; ++p)
    EXPECT_TRUE(torch::equal(a[p], b[p])) << p;
}

TEST(DataLoaderTest, ShardsCoverThePaddedEpoch) {
  for (int world : {2, 3}) {
    for (bool shuffle : {false, true}) {
      const int64_t n = 10;
      int64_t share = (n + world - 1) / world;
      std::vector<std::vector<int64_t>> ranks;
      for (int rank = 0; rank < world; ++rank) {
        DataLoaderOptions o;
        o.batchSize = 3;
        o.shuffle = shuffle;
        o.seed = 4;
        o.rank = rank;
        o.worldSize = world;
        DataLoader loader(indexDataset(n), o);
        EXPECT_EQ(loader.samplesPerEpoch(), share);
        EXPECT_EQ(loader.batchesPerEpoch(), (share + 2) / 3);
        ranks.push_back(epochTargets(loader, 1));
        EXPECT_EQ(int64_t(ranks.back().size()), share);
      }
      // Interleaving the ranks rebuilds the padded epoch: every sample, then
      // the first few repeated to fill the last round.
      std::vector<int64_t> padded;
      for (int64_t k = 0; k < share; ++k)
        for (int rank = 0; rank < world; ++rank)
          padded.push_back(ranks[rank][k]);
      std::vector<int64_t> head(padded.begin(), padded.begin() + n);
      std::vector<int64_t> sorted = head;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      EXPECT_EQ(sorted, all) << world << " ranks";
      for (size_t j = n; j < padded.size(); ++j)
        EXPECT_EQ(padded[j], padded[j - n]);
      // The same order a single rank would use.
      DataLoaderOptions single;
      single.batchSize = 3;
      single.shuffle = shuffle;
      single.seed = 4;
      DataLoader one(indexDataset(n), single);
      EXPECT_EQ(epochTargets(one, 1), head);
    }
  }
  DataLoaderOptions bad;
  bad.rank = 2;
  bad.worldSize = 2;
  EXPECT_THROW(DataLoader(indexDataset(4), bad), std::invalid_argument);
}

TEST(DataLoaderTest, PassesTokensThrough) {
  SyntheticSpec spec;
  spec.numSamples = 12;
  spec.sampleShape = {6};
  spec.vocabSize = 50;
  auto ds = makeSynthetic(spec);
  DataLoaderOptions o;
  o.batchSize = 5;
  o.numWorkers = 2;
  DataLoader loader(ds, o);
  loader.startEpoch(0);
  int64_t seen = 0;
  while (auto b = loader.next()) {
    EXPECT_EQ(b->input.scalar_type(), torch::kLong);
    ASSERT_EQ(b->input.size(1), 6);
    for (int64_t i = 0; i < b->size(); ++i) {
      // Find the sample by its inputs; its targets must come with it.
      torch::Tensor match =
          (ds->inputs() == b->input[i]).all(1).nonzero().flatten();
      ASSERT_GE(match.numel(), 1);
      int64_t j = match[0].item<int64_t>();
      EXPECT_TRUE(torch::equal(b->target[i], ds->targets()[j]));
    }
    seen += b->size();
  }
  EXPECT_EQ(seen, 12);
}

TEST(DataLoaderTest, BuildsABatchQuickly) {
  DataLoaderOptions o;
  o.batchSize = 128;
  o.transforms = cifarTraining();
  DataLoader loader(cifarLike(1024), o);
  loader.makeBatch(0, 0); // warm up
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < loader.batchesPerEpoch(); ++i)
    loader.makeBatch(0, i);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count() /
              double(loader.batchesPerEpoch());
  std::printf("128-sample 3x32x32 batch with crop+flip+normalize: %.3f ms\n",
              ms);
  EXPECT_LT(ms, 50.0); // loose: the machine is shared
}

//===----------------------------------------------------------------------===//
// Per-sample transforms
//===----------------------------------------------------------------------===//

/// Records the threads it runs on; adds its first random draw (mod 50) to
/// every pixel of the uint8 image.
struct RecordingTransform : SampleTransform {
  mutable std::mutex mutex;
  mutable std::set<std::thread::id> threads;
  std::string name() const override { return "recording"; }
  SampleStage stage() const override { return SampleStage::Image; }
  torch::Tensor apply(const torch::Tensor &sample,
                      SampleRandom &random) const override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    auto shift = uint8_t(random.next() % 50);
    torch::Tensor out = torch::empty_like(sample);
    const uint8_t *in = sample.data_ptr<uint8_t>();
    uint8_t *o = out.data_ptr<uint8_t>();
    for (int64_t i = 0; i < sample.numel(); ++i)
      o[i] = uint8_t(std::min(255, in[i] + shift));
    return out;
  }
};

/// Keeps the top-left [h - 1, w - 2] of a normalized sample.
struct CornerTransform : SampleTransform {
  std::string name() const override { return "corner"; }
  SampleStage stage() const override { return SampleStage::Normalized; }
  std::vector<int64_t> outputShape(std::vector<int64_t> shape) const override {
    return {shape[0], shape[1] - 1, shape[2] - 2};
  }
  torch::Tensor apply(const torch::Tensor &sample,
                      SampleRandom &) const override {
    return sample.narrow(1, 0, sample.size(1) - 1)
        .narrow(2, 0, sample.size(2) - 2)
        .contiguous();
  }
};

TEST(SampleTransformTest, RunInTheWorkersFromTheSamplesStream) {
  auto ds = cifarLike(64);
  DataLoaderOptions o;
  o.batchSize = 16;
  o.seed = 5;
  o.shuffle = false; // sample b * 16 + i at batch b, row i
  o.numWorkers = 2;
  auto recording = std::make_shared<RecordingTransform>();
  o.sampleTransforms = {recording};
  DataLoader loader(ds, o);
  loader.startEpoch(2);
  std::vector<Batch> batches = drain(loader);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_FALSE(recording->threads.empty());
  EXPECT_EQ(recording->threads.count(std::this_thread::get_id()), 0u);
  // Each sample's shift is its stream's first draw: (seed, epoch, index).
  o.numWorkers = 0;
  o.sampleTransforms.clear();
  DataLoader plain(ds, o);
  plain.startEpoch(2);
  std::vector<Batch> original = drain(plain);
  for (size_t b = 0; b < batches.size(); ++b)
    for (int64_t i = 0; i < 16; ++i) {
      int64_t index = int64_t(b) * 16 + i;
      SampleRandom random(5, 2, index, "recording");
      auto shift = float(random.next() % 50) / 255;
      torch::Tensor expected = (original[b].input[i] + shift).clamp_max(1.0f);
      EXPECT_TRUE(torch::allclose(batches[b].input[i], expected, 0, 1e-6))
          << "batch " << b << " sample " << i;
    }
}

TEST(SampleTransformTest, NormalizedStageMayShrinkSamples) {
  auto ds = cifarLike(20);
  DataLoaderOptions o;
  o.batchSize = 8;
  o.transforms.mean = {0.5, 0.5, 0.5};
  o.transforms.std = {0.25, 0.25, 0.25};
  DataLoader plain(ds, o);
  DataLoader loader(ds, o);
  loader.setSampleTransform(std::make_shared<CornerTransform>());
  Batch full = plain.makeBatch(0, 2), shrunk = loader.makeBatch(0, 2);
  EXPECT_EQ(shrunk.input.sizes(), (std::vector<int64_t>{4, 3, 31, 30}));
  EXPECT_TRUE(
      torch::equal(shrunk.input, full.input.narrow(2, 0, 31).narrow(3, 0, 30)));
  // One per name: setting it again replaces it.
  loader.setSampleTransform(std::make_shared<CornerTransform>());
  EXPECT_EQ(loader.options().sampleTransforms.size(), 1u);
}

TEST(SampleTransformTest, NeedImagesAndWellShapedResults) {
  DataLoader tokens(indexDataset(8), DataLoaderOptions{});
  EXPECT_THROW(tokens.setSampleTransform(std::make_shared<CornerTransform>()),
               std::invalid_argument);
  struct Wrong : CornerTransform {
    std::vector<int64_t>
    outputShape(std::vector<int64_t> shape) const override {
      return shape; // but apply shrinks it
    }
  };
  DataLoader loader(cifarLike(8), DataLoaderOptions{});
  loader.setSampleTransform(std::make_shared<Wrong>());
  EXPECT_THROW(loader.makeBatch(0, 0), std::runtime_error);
}

TEST(SampleTransformTest, StreamsDifferByEverySeedPart) {
  auto first = [](uint64_t seed, int64_t epoch, int64_t index,
                  const char *purpose) {
    return SampleRandom(seed, epoch, index, purpose).next();
  };
  uint64_t base = first(1, 2, 3, "a");
  EXPECT_EQ(base, first(1, 2, 3, "a"));
  EXPECT_NE(base, first(2, 2, 3, "a"));
  EXPECT_NE(base, first(1, 3, 3, "a"));
  EXPECT_NE(base, first(1, 2, 4, "a"));
  EXPECT_NE(base, first(1, 2, 3, "b"));
  // Distributions: means of uniform, Beta(1, 1) and Dirichlet weights.
  SampleRandom random(7, 0, 0, "stats");
  double uniform = 0, beta = 0, weight = 0;
  for (int i = 0; i < 4000; ++i) {
    uniform += random.uniform();
    beta += random.beta(2, 2);
    std::vector<double> w = random.dirichlet(1.0, 3);
    EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-12);
    weight += w[0];
  }
  EXPECT_NEAR(uniform / 4000, 0.5, 0.02);
  EXPECT_NEAR(beta / 4000, 0.5, 0.02);
  EXPECT_NEAR(weight / 4000, 1.0 / 3, 0.02);
}

} // namespace

//===----------------------------------------------------------------------===//
// Datasets read sample by sample, and image cuts
//===----------------------------------------------------------------------===//

namespace {

/// Images of varying sizes read one at a time: sample i is (8 + i % 5) x
/// (10 + i % 3) pixels whose values encode (i, y, x), and target i.
/// Samples in `bad` fail as a corrupt file does.
class VaryingImages final : public Dataset {
public:
  explicit VaryingImages(int64_t n, std::set<int64_t> bad = {},
                         std::vector<int64_t> shards = {})
      : n_(n), bad_(std::move(bad)), shards_(std::move(shards)) {
    spec_.kind = SampleKind::Image;
    spec_.inputShape = {3, 0, 0};
    spec_.inputType = torch::kUInt8;
  }
  int64_t size() const override { return n_; }
  const SampleSpec &spec() const override { return spec_; }
  Sample get(int64_t i) const override {
    if (bad_.count(i))
      throw DataError(describe(i) + ": corrupt");
    int64_t h = 8 + i % 5, w = 10 + i % 3;
    torch::Tensor image = torch::empty({3, h, w}, torch::kUInt8);
    auto a = image.accessor<uint8_t, 3>();
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          a[c][y][x] = uint8_t((i * 7 + c * 50 + y * 13 + x * 3) % 256);
    return {image, torch::tensor(i, torch::kLong)};
  }
  std::string describe(int64_t i) const override {
    return "image" + std::to_string(i) + ".jpg";
  }
  std::vector<int64_t> shardStarts() const override { return shards_; }

private:
  int64_t n_;
  std::set<int64_t> bad_;
  std::vector<int64_t> shards_;
  SampleSpec spec_;
};

} // namespace

TEST(ImageCutTest, RandomResizedCropFollowsTorchvisionGivenItsDraws) {
  std::string dir = makeTempDir("composer-data");
  std::string command =
      std::string(COMPOSER_PYTHON) + " " + COMPOSER_SOURCE_DIR +
      "/unittests/Runtime/record_crop_draws.py 3 > " + dir + "draws.txt";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(dir + "draws.txt");
  std::string word;
  int cases = 0, fallbacks = 0;
  while (in >> word) {
    ASSERT_EQ(word, "case");
    int64_t height, width, numDraws;
    RandomResizedCrop crop;
    crop.height = crop.width = 32;
    in >> height >> width >> crop.scaleLow >> crop.scaleHigh >> crop.ratioLow >>
        crop.ratioHigh >> numDraws;
    std::vector<std::pair<int64_t, double>> draws; // (randint high or -1, v)
    for (int64_t k = 0; k < numDraws; ++k) {
      std::string kind;
      in >> kind;
      if (kind == "u") {
        double v;
        in >> v;
        draws.push_back({-1, v});
      } else {
        int64_t high, v;
        in >> high >> v;
        draws.push_back({high, double(v)});
      }
    }
    std::string boxWord;
    int64_t top, left, h, w;
    in >> boxWord >> top >> left >> h >> w;
    size_t next = 0;
    CropDraws replay{[&](double low, double high) {
                       EXPECT_LT(next, draws.size());
                       EXPECT_EQ(draws.at(next).first, -1);
                       double v = draws.at(next++).second;
                       EXPECT_GE(v, low - 1e-6);
                       EXPECT_LE(v, high + 1e-6);
                       return v;
                     },
                     [&](int64_t n) {
                       EXPECT_LT(next, draws.size());
                       EXPECT_EQ(draws.at(next).first, n);
                       return int64_t(draws.at(next++).second);
                     }};
    ImageCut cut = randomResizedCropCut(height, width, crop, replay);
    SCOPED_TRACE("case " + std::to_string(cases) + ": " +
                 std::to_string(height) + "x" + std::to_string(width));
    EXPECT_EQ(next, draws.size()) << "a different number of draws";
    EXPECT_EQ(cut.top, top);
    EXPECT_EQ(cut.left, left);
    EXPECT_EQ(cut.height, h);
    EXPECT_EQ(cut.width, w);
    EXPECT_EQ(cut.outHeight, 32);
    fallbacks += numDraws == 20;
    ++cases;
  }
  EXPECT_EQ(cases, 96);
  EXPECT_GT(fallbacks, 5) << "the central fallback was not exercised";
}

TEST(ImageDatasetTest, MixedSizesWithoutACutNameTheSample) {
  DataLoaderOptions o;
  o.batchSize = 4;
  o.shuffle = false;
  DataLoader loader(std::make_shared<VaryingImages>(8), o);
  expectErrorContaining([&] { loader.makeBatch(0, 0); },
                        {"image1.jpg", "9x11", "8x10", "random_resized_crop"});
}

TEST(ImageDatasetTest, RandomResizedCropIsAPureFunctionOfEpochAndIndex) {
  auto ds = std::make_shared<VaryingImages>(30);
  DataLoaderOptions o;
  o.batchSize = 7;
  o.seed = 5;
  o.transforms.randomResizedCrop = RandomResizedCrop{6, 5};
  o.transforms.horizontalFlip = true;
  o.transforms.channelsLast = true;
  DataLoader inline_(ds, o);
  o.numWorkers = 2;
  DataLoader workers(ds, o);
  for (int64_t epoch : {0, 3}) {
    inline_.startEpoch(epoch);
    workers.startEpoch(epoch, 2); // as a run resumed at batch 2
    for (int64_t b = 0; b < inline_.batchesPerEpoch(); ++b) {
      Batch a = *inline_.next();
      ASSERT_EQ(a.input.sizes(),
                (std::vector<int64_t>{b < 4 ? 7 : 2, 3, 6, 5}));
      EXPECT_TRUE(a.input.is_contiguous(at::MemoryFormat::ChannelsLast));
      if (b < 2)
        continue;
      Batch w = *workers.next();
      EXPECT_TRUE(torch::equal(a.input, w.input)) << epoch << " " << b;
      EXPECT_TRUE(torch::equal(a.target, w.target));
    }
  }
  EXPECT_FALSE(torch::equal(inline_.makeBatch(0, 0).input,
                            inline_.makeBatch(1, 0).input));
}

TEST(ImageDatasetTest, ResizeThenCenterCropAsTorchvision) {
  auto ds = std::make_shared<VaryingImages>(5);
  DataLoaderOptions o;
  o.batchSize = 5;
  o.shuffle = false;
  o.transforms.resizeShorter = 6;
  o.transforms.centerCropHeight = 6;
  o.transforms.centerCropWidth = 4;
  DataLoader loader(ds, o);
  Batch b = loader.makeBatch(0, 0);
  ASSERT_EQ(b.input.sizes(), (std::vector<int64_t>{5, 3, 6, 4}));
  for (int64_t i = 0; i < 5; ++i) {
    torch::Tensor image = ds->get(i).input;
    int64_t h = image.size(1), w = image.size(2);
    // Resize(6): the shorter side to 6, the other truncated; then
    // CenterCrop((6, 4)) rounds its offsets.
    int64_t rh = h <= w ? 6 : int64_t(6.0 * double(h) / double(w));
    int64_t rw = w <= h ? 6 : int64_t(6.0 * double(w) / double(h));
    torch::Tensor resized = applyImageCut(image, {0, 0, h, w, rh, rw});
    int64_t top = int64_t(std::nearbyint((rh - 6) / 2.0));
    int64_t left = int64_t(std::nearbyint((rw - 4) / 2.0));
    torch::Tensor want =
        resized.narrow(1, top, 6).narrow(2, left, 4).to(torch::kFloat) / 255.0;
    EXPECT_TRUE(torch::equal(b.input[i], want)) << i;
  }
}

TEST(ImageDatasetTest, SkipBadSamplesTakesTheNextGoodOne) {
  auto bad = std::make_shared<VaryingImages>(10, std::set<int64_t>{3, 4, 9});
  DataLoaderOptions o;
  o.batchSize = 10;
  o.shuffle = false;
  o.transforms.centerCropHeight = o.transforms.centerCropWidth = 8;
  DataLoader strict(bad, o);
  expectErrorContaining([&] { strict.makeBatch(0, 0); },
                        {"image3.jpg", "corrupt"});
  auto healed = std::make_shared<SkipBadSamples>(bad);
  DataLoader loader(healed, o);
  Batch b = loader.makeBatch(0, 0);
  // 3 and 4 become 5; 9 wraps around to 0.
  EXPECT_EQ(toVector(b.target),
            (std::vector<int64_t>{0, 1, 2, 5, 5, 5, 6, 7, 8, 0}));
  EXPECT_TRUE(torch::equal(b.input[3], b.input[5]));
  EXPECT_TRUE(torch::equal(b.input[9], b.input[0]));
  EXPECT_EQ(healed->skipped(), 3);
  auto allBad = std::make_shared<SkipBadSamples>(
      std::make_shared<VaryingImages>(2, std::set<int64_t>{0, 1}));
  expectErrorContaining([&] { allBad->get(0); }, {"none of the 2 samples"});
}

TEST(ImageDatasetTest, TwoRanksCoverEverySampleRepeatingOnlyThePadding) {
  auto ds = std::make_shared<VaryingImages>(11);
  for (int64_t epoch : {0, 1}) {
    std::map<int64_t, int> seen;
    for (int rank : {0, 1}) {
      DataLoaderOptions o;
      o.batchSize = 4;
      o.seed = 9;
      o.rank = rank;
      o.worldSize = 2;
      o.transforms.randomResizedCrop = RandomResizedCrop{4, 4};
      o.numWorkers = rank; // either way
      DataLoader loader(ds, o);
      EXPECT_EQ(loader.samplesPerEpoch(), 6);
      loader.startEpoch(epoch);
      while (auto batch = loader.next())
        for (int64_t i = 0; i < batch->size(); ++i)
          ++seen[batch->target[i].item<int64_t>()];
    }
    // 12 slots for 11 samples: one sample twice, every other once.
    int total = 0, twice = 0;
    for (auto &[key, count] : seen) {
      total += count;
      twice += count == 2;
      EXPECT_LE(count, 2);
    }
    EXPECT_EQ(total, 12);
    EXPECT_EQ(twice, 1);
    EXPECT_EQ(seen.size(), 11u);
  }
}

TEST(ImageDatasetTest, ShardedDatasetsShuffleInShardBlocks) {
  // 100 samples in shards of 10; blocks of 20 samples span two shards.
  std::vector<int64_t> starts;
  for (int64_t s = 0; s < 100; s += 10)
    starts.push_back(s);
  auto ds = std::make_shared<VaryingImages>(100, std::set<int64_t>{}, starts);
  DataLoaderOptions o;
  o.batchSize = 20;
  o.seed = 1;
  o.shuffleBlockSize = 20;
  o.transforms.centerCropHeight = o.transforms.centerCropWidth = 8;
  std::vector<std::vector<int64_t>> epochs;
  for (int64_t epoch : {0, 1}) {
    DataLoader loader(ds, o);
    loader.startEpoch(epoch);
    std::vector<int64_t> order;
    while (auto batch = loader.next()) {
      // A batch is one block: two whole shards.
      std::set<int64_t> shards;
      for (int64_t i = 0; i < batch->size(); ++i) {
        order.push_back(batch->target[i].item<int64_t>());
        shards.insert(order.back() / 10);
      }
      EXPECT_EQ(batch->size(), 20);
      EXPECT_EQ(shards.size(), 2u);
    }
    ASSERT_EQ(order.size(), 100u);
    std::set<int64_t> distinct(order.begin(), order.end());
    EXPECT_EQ(distinct.size(), 100u);
    epochs.push_back(order);
  }
  EXPECT_NE(epochs[0], epochs[1]);
  // Within a block the samples are shuffled, not left in shard order.
  EXPECT_FALSE(std::is_sorted(epochs[0].begin(), epochs[0].begin() + 20));
}

TEST(ImageDatasetTest, NormalizingOnTheDeviceGivesTheSameBits) {
  auto ds = cifarLike(40);
  DataLoaderOptions o;
  o.batchSize = 16;
  o.seed = 3;
  o.transforms = cifarTraining();
  o.transforms.channelsLast = true;
  DataLoader onHost(ds, o);
  o.transforms.normalizeOnDevice = true;
  DataLoader onDevice(ds, o);
  for (int64_t b = 0; b < onHost.batchesPerEpoch(); ++b) {
    Batch host = onHost.makeBatch(1, b);
    Batch raw = onDevice.makeBatch(1, b);
    EXPECT_EQ(raw.input.scalar_type(), torch::kUInt8);
    Batch device = onDevice.toDevice(raw, torch::kCPU);
    EXPECT_TRUE(device.input.is_contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(torch::equal(host.input, device.input)) << b;
    EXPECT_TRUE(torch::equal(host.target, device.target));
  }
}
